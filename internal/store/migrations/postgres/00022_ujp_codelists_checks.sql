-- +goose Up
-- UJP's code lists as last read, one row per environment: every process
-- validates with them, and the code-list job (one process at a time)
-- rewrites them when UJP's lists change. lists is the set as JSON
-- (ujpdoc.Codebooks); digests gives each list's fingerprint and since when
-- it has been unchanged; version grows by one at each change, so a process
-- re-reads lists only when it moved, and a change is recorded once
-- (a conditional write on version).
CREATE TABLE ujp_codelists (
    environment TEXT PRIMARY KEY,
    lists       TEXT NOT NULL,
    digests     TEXT NOT NULL,
    version     BIGINT NOT NULL,
    fetched_at  TIMESTAMPTZ NOT NULL,
    changed_at  TIMESTAMPTZ NOT NULL
);

-- The runs of `denar ujp check`: each line's outcome as JSON, per company
-- when one was checked ('' otherwise); the dashboard shows the last.
CREATE TABLE ujp_checks (
    id          TEXT PRIMARY KEY,
    environment TEXT NOT NULL,
    company_id  TEXT NOT NULL,
    ok          BOOLEAN NOT NULL,
    lines       TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX ujp_checks_company ON ujp_checks (company_id, environment, created_at);

-- The simulator's clock-skew fault: how far its server time (and the clock
-- it judges requestTimestamp by) is from the real one.
ALTER TABLE ujpsim_settings ADD COLUMN clock_skew_ns BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE ujpsim_settings DROP COLUMN clock_skew_ns;
DROP TABLE ujp_checks;
DROP TABLE ujp_codelists;
