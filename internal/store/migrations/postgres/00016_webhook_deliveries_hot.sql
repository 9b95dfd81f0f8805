-- +goose Up
-- A delivery's outcome changes its state, and state was a column of
-- webhook_deliveries_recover: every outcome therefore wrote a new entry in
-- each of the table's five indexes. Without it, an outcome changes no
-- indexed column, and with room left in the page (fillfactor) PostgreSQL
-- updates the row in place (a HOT update: no index entries). Recovering an
-- endpoint reads its deliveries since a time and checks their state on the
-- rows; it is rare, outcomes are not.
DROP INDEX webhook_deliveries_recover;
CREATE INDEX webhook_deliveries_recover ON webhook_deliveries(endpoint_id, created_at);
ALTER TABLE webhook_deliveries SET (fillfactor = 50);

-- +goose Down
ALTER TABLE webhook_deliveries RESET (fillfactor);
DROP INDEX webhook_deliveries_recover;
CREATE INDEX webhook_deliveries_recover ON webhook_deliveries(endpoint_id, state, created_at);
