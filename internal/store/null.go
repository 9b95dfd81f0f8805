package store

import (
	"database/sql"
	"time"
)

// NullText is s as a nullable column value: NULL when empty (an optional
// filter of a query).
func NullText(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// TextOrNil is a nullable text column as a pointer: nil for NULL.
func TextOrNil(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}

// TimeOf is t as a non-null column value.
func TimeOf(t time.Time) sql.NullTime { return sql.NullTime{Time: t, Valid: true} }

// TimeOrNil is a nullable time column as a pointer in UTC: nil for NULL.
func TimeOrNil(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	u := t.Time.UTC()
	return &u
}
