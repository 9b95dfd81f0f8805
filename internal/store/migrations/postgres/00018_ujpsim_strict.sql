-- +goose Up
-- The sandbox simulator of UJP reads UJP strictly: users (EUJP ids) and
-- their portal privileges per company are registered out of band, like
-- certificates; the rate limit is always on (ujpsim_settings.rate_limit is
-- no longer read); and faults aimed at one company's calls (X-EDB) or one
-- user's (X-EUJP-ID) let parallel tests share one simulator.

-- Users known to UJP (registered in its portal).
CREATE TABLE ujpsim_users (
    eujp_id     TEXT PRIMARY KEY,
    created_at  TIMESTAMPTZ NOT NULL
);

-- Portal privileges of a user for a company: DP (PDF), RD (payloads),
-- DA (ASiC container).
CREATE TABLE ujpsim_privileges (
    eujp_id    TEXT NOT NULL,
    edb        TEXT NOT NULL,
    privilege  TEXT NOT NULL,
    PRIMARY KEY (eujp_id, edb, privilege)
);

-- The next burst calls of the user are answered E4007 whatever the timing.
ALTER TABLE ujpsim_rate ADD COLUMN burst INTEGER NOT NULL DEFAULT 0;
-- How many calls of the user were answered E4007 (too soon, or a burst):
-- what an operator looks at to see that a client keeps within the limit.
ALTER TABLE ujpsim_rate ADD COLUMN refused BIGINT NOT NULL DEFAULT 0;

-- Faults of one company's calls: the next call_count calls (whose path ends
-- with call_path, '' for any) fail as call_kind says: 'status' answers
-- call_status with call_code (none when '') in the body shape call_shape
-- ('ujp', 'spring', 'html'); 'hang' holds the call until the client gives
-- up; 'lost' and 'lost-hang' store a send and then drop the connection or
-- hold it. codelists_changed serves (and validates against) the changed
-- code lists.
ALTER TABLE ujpsim_seller_faults ADD COLUMN call_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ujpsim_seller_faults ADD COLUMN call_path TEXT NOT NULL DEFAULT '';
ALTER TABLE ujpsim_seller_faults ADD COLUMN call_kind TEXT NOT NULL DEFAULT '';
ALTER TABLE ujpsim_seller_faults ADD COLUMN call_status INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ujpsim_seller_faults ADD COLUMN call_code TEXT NOT NULL DEFAULT '';
ALTER TABLE ujpsim_seller_faults ADD COLUMN call_shape TEXT NOT NULL DEFAULT '';
ALTER TABLE ujpsim_seller_faults ADD COLUMN codelists_changed BOOLEAN NOT NULL DEFAULT FALSE;

-- +goose Down
ALTER TABLE ujpsim_seller_faults DROP COLUMN codelists_changed;
ALTER TABLE ujpsim_seller_faults DROP COLUMN call_shape;
ALTER TABLE ujpsim_seller_faults DROP COLUMN call_code;
ALTER TABLE ujpsim_seller_faults DROP COLUMN call_status;
ALTER TABLE ujpsim_seller_faults DROP COLUMN call_kind;
ALTER TABLE ujpsim_seller_faults DROP COLUMN call_path;
ALTER TABLE ujpsim_seller_faults DROP COLUMN call_count;
ALTER TABLE ujpsim_rate DROP COLUMN refused;
ALTER TABLE ujpsim_rate DROP COLUMN burst;
DROP TABLE ujpsim_privileges;
DROP TABLE ujpsim_users;
