package einvoicing

import (
	"database/sql"
	"time"

	"github.com/denar-mk/denar/internal/store"
)

// The conversions of nullable columns (package store's, by their names
// here).

func optional(s string) sql.NullString { return store.NullText(s) }

func nullable(s sql.NullString) *string { return store.TextOrNil(s) }

func nullTime(t sql.NullTime) *time.Time { return store.TimeOrNil(t) }
