package httpx

import (
	"encoding/base64"
	"encoding/json"
	"errors"

	"github.com/denar-mk/denar"
)

// Pages are ordered newest first by id. Ids are time-ordered (denar.NewID),
// and a page continues strictly below the last id it returned, so rows
// inserted while a client pages through a list never shift or repeat the
// rows it has yet to see.

// Page is one page of a list.
type Page[T any] struct {
	Data       []T     `json:"data" doc:"The items of this page, newest first."`
	NextCursor *string `json:"nextCursor" doc:"Pass as cursor to get the next page; null on the last page."`
}

// cursor is what an opaque cursor string holds. Filter is a digest of the
// list's filters, so a cursor cannot be replayed against another list.
type cursor struct {
	V      int    `json:"v"`
	After  string `json:"a"`
	Filter string `json:"f,omitempty"`
}

// EncodeCursor returns the cursor that continues after id.
func EncodeCursor(afterID, filter string) string {
	b, _ := json.Marshal(cursor{V: 1, After: afterID, Filter: filter})
	return base64.RawURLEncoding.EncodeToString(b)
}

var errBadCursor = errors.New("malformed cursor")

// DecodeCursor returns the id a cursor continues after. An empty cursor
// means the first page. A cursor that was not made by EncodeCursor for the
// same filter is a validation error on "query.cursor".
func DecodeCursor(s, filter string) (string, error) {
	if s == "" {
		return "", nil
	}
	if len(s) > 512 {
		return "", invalidCursor()
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return "", invalidCursor()
	}
	var c cursor
	if err := json.Unmarshal(raw, &c); err != nil || c.V != 1 || c.After == "" {
		return "", invalidCursor()
	}
	if c.Filter != filter {
		return "", &denar.Error{Code: denar.ECodeValidation, Message: "the cursor belongs to a list with other filters",
			Fields: []denar.FieldError{{Path: "query.cursor", Message: "this cursor was issued for different filters; start again without a cursor"}}}
	}
	return c.After, nil
}

func invalidCursor() error {
	return &denar.Error{Code: denar.ECodeValidation, Message: errBadCursor.Error(),
		Fields: []denar.FieldError{{Path: "query.cursor", Message: "not a cursor returned by this API; pass nextCursor back unchanged"}}}
}

// NewPage builds a page from rows fetched with limit+1: the extra row only
// tells that another page exists.
func NewPage[T any](rows []T, limit int, idOf func(T) string, filter string) Page[T] {
	p := Page[T]{Data: rows}
	if len(rows) > limit {
		p.Data = rows[:limit]
		next := EncodeCursor(idOf(rows[limit-1]), filter)
		p.NextCursor = &next
	}
	if p.Data == nil {
		p.Data = []T{}
	}
	return p
}
