-- +goose Up
-- Webhooks and the event feed (issue 14).

-- Who is mailed when one of the account's webhook endpoints is disabled
-- after 72 hours of failure: space-separated e-mail addresses, set with
-- `denar admin account create --owner-email` or `denar admin account owners`.
-- Empty: the operator address (DENAR_OPERATOR_EMAIL), if any.
ALTER TABLE accounts ADD COLUMN owner_emails TEXT NOT NULL DEFAULT '';

-- The feed order of events. Event ids are generated before their
-- transaction commits, so two transactions can commit out of id order; a
-- reader paging "after id X" could pass over an event that commits later
-- with a smaller id. seq is therefore assigned after commit, by a sequencer
-- that holds the single event_sequence row locked while it numbers every
-- committed event that has none: numbers become visible as a gap-free
-- prefix, in the order the sequencer saw the events committed, and a feed
-- reading "seq > cursor" never skips one.
ALTER TABLE events ADD COLUMN seq BIGINT;
UPDATE events SET seq = s.n
FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY id) AS n FROM events) s
WHERE events.id = s.id;
CREATE UNIQUE INDEX events_seq ON events(seq);
CREATE INDEX events_feed ON events(account_id, environment, seq);
CREATE INDEX events_unsequenced ON events(id) WHERE seq IS NULL;
CREATE TABLE event_sequence (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    last  BIGINT NOT NULL
);
INSERT INTO event_sequence (id, last) SELECT 1, COALESCE(MAX(seq), 0) FROM events;

-- Webhook endpoints of an account in one environment. Secrets are sealed
-- with AES-256-GCM under DENAR_WEBHOOK_SECRET_KEY (never stored in clear);
-- after a rotation the previous secret keeps signing until
-- previous_secret_expires_at. event_types: space-separated types, or *.
-- company_ids: space-separated, empty for every company.
CREATE TABLE webhook_endpoints (
    id                          TEXT PRIMARY KEY,
    account_id                  TEXT NOT NULL REFERENCES accounts(id),
    environment                 TEXT NOT NULL,
    url                         TEXT NOT NULL,
    description                 TEXT NOT NULL DEFAULT '',
    event_types                 TEXT NOT NULL,
    company_ids                 TEXT NOT NULL DEFAULT '',
    enabled                     BOOLEAN NOT NULL DEFAULT 1,
    secret                      TEXT NOT NULL,
    previous_secret             TEXT NOT NULL DEFAULT '',
    previous_secret_expires_at  TIMESTAMP,
    last_success_at             TIMESTAMP,
    last_failure_at             TIMESTAMP,
    failing_since               TIMESTAMP,
    disabled_at                 TIMESTAMP,
    disabled_reason             TEXT NOT NULL DEFAULT '',
    created_at                  TIMESTAMP NOT NULL,
    updated_at                  TIMESTAMP NOT NULL
);
CREATE INDEX webhook_endpoints_account ON webhook_endpoints(account_id, environment, id);

-- One delivery per (event, endpoint): the chain of attempts that carries
-- the event there, run by one webhook.deliver job at a time (unique key
-- whd:<id>). A replay or a recovery re-opens the same delivery with a new
-- job. A test delivery (POST /v1/webhook-endpoints/{id}/test) has no event
-- row: its sample event is test_body.
-- state: pending (no attempt yet, or re-opened), failed (the last attempt
-- failed; a retry is due at next_attempt_at), succeeded, abandoned (the
-- retries ran out, or the endpoint was disabled: abandoned_reason). An
-- event for a disabled endpoint is recorded abandoned, without a job, so
-- that recover can send it once the endpoint is enabled again.
CREATE TABLE webhook_deliveries (
    id                 TEXT PRIMARY KEY,
    account_id         TEXT NOT NULL,
    environment        TEXT NOT NULL,
    endpoint_id        TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
    event_id           TEXT NOT NULL,
    event_type         TEXT NOT NULL,
    company_id         TEXT NOT NULL DEFAULT '',
    test_body          TEXT,
    state              TEXT NOT NULL CHECK (state IN ('pending', 'failed', 'succeeded', 'abandoned')),
    max_attempts       INTEGER NOT NULL,
    attempts           INTEGER NOT NULL DEFAULT 0,
    next_manual        BOOLEAN NOT NULL DEFAULT 0,
    next_attempt_at    TIMESTAMP,
    last_attempt_at    TIMESTAMP,
    last_status_code   INTEGER,
    last_status_class  TEXT NOT NULL DEFAULT '',
    abandoned_reason   TEXT NOT NULL DEFAULT '',
    created_at         TIMESTAMP NOT NULL,
    updated_at         TIMESTAMP NOT NULL
);
CREATE UNIQUE INDEX webhook_deliveries_event_endpoint ON webhook_deliveries(event_id, endpoint_id) WHERE test_body IS NULL;
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries(endpoint_id, id);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries(event_id, id);
CREATE INDEX webhook_deliveries_recover ON webhook_deliveries(endpoint_id, state, created_at);

-- Each HTTP attempt of a delivery: when, how long, the answer (status code,
-- the first 2 KB of the body) or the error, and whether a person asked for
-- it (manual: replay, recover, test) or the schedule did.
CREATE TABLE webhook_attempts (
    id             TEXT PRIMARY KEY,
    delivery_id    TEXT NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
    number         INTEGER NOT NULL,
    trigger        TEXT NOT NULL CHECK (trigger IN ('scheduled', 'manual')),
    started_at     TIMESTAMP NOT NULL,
    duration_ms    INTEGER NOT NULL,
    status_code    INTEGER,
    error          TEXT NOT NULL DEFAULT '',
    response_body  TEXT NOT NULL DEFAULT '',
    succeeded      BOOLEAN NOT NULL
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts(delivery_id, number);

-- Job claims walk the waiting jobs in due order on this index and stop at
-- the ones they take: webhooks can queue many thousands of jobs at once.
CREATE INDEX jobs_due ON jobs(run_at, id) WHERE state IN ('available', 'retryable');

-- +goose Down
DROP INDEX jobs_due;
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_endpoints;
DROP TABLE event_sequence;
DROP INDEX events_unsequenced;
DROP INDEX events_feed;
DROP INDEX events_seq;
ALTER TABLE events DROP COLUMN seq;
ALTER TABLE accounts DROP COLUMN owner_emails;
