-- +goose Up
-- An agent's reach is never more than its creator's: a pairing code keeps
-- the company allow-list of the credential that created it (space-separated,
-- empty for every company of the account in its environment), and the agent
-- it pairs keeps that list as its own. Rows from before this migration keep
-- the empty list: account-wide, as they were.
ALTER TABLE agent_pairing_codes ADD COLUMN company_ids TEXT NOT NULL DEFAULT '';
ALTER TABLE signing_agents ADD COLUMN company_ids TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE signing_agents DROP COLUMN company_ids;
ALTER TABLE agent_pairing_codes DROP COLUMN company_ids;
