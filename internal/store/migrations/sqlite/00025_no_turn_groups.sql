-- +goose Up
-- Turns by group were never used: the fairness between companies sharing
-- a UJP user comes from the order in which their documents are signed.
DROP TABLE ujp_turn_groups;
ALTER TABLE ujp_waiters DROP COLUMN grp;

-- +goose Down
ALTER TABLE ujp_waiters ADD COLUMN grp TEXT NOT NULL DEFAULT '';
CREATE TABLE ujp_turn_groups (
    key       TEXT NOT NULL,
    grp       TEXT NOT NULL,
    served_at TIMESTAMP NOT NULL,
    PRIMARY KEY (key, grp)
);
