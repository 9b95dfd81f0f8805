-- +goose Up
-- A delivery's outcome changes its state, and state was a column of
-- webhook_deliveries_recover: every outcome moved the row's entry in that
-- index. Without it, an outcome changes no indexed column (as on
-- PostgreSQL, where that also lets the row be updated in place).
-- Recovering an endpoint reads its deliveries since a time and checks
-- their state on the rows; it is rare, outcomes are not.
DROP INDEX webhook_deliveries_recover;
CREATE INDEX webhook_deliveries_recover ON webhook_deliveries(endpoint_id, created_at);

-- +goose Down
DROP INDEX webhook_deliveries_recover;
CREATE INDEX webhook_deliveries_recover ON webhook_deliveries(endpoint_id, state, created_at);
