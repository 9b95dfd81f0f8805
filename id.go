package denar

import (
	"encoding/base32"

	"github.com/google/uuid"
)

// idEncoding is Crockford-style lower-case base32: it keeps the byte order,
// so ids compare in the order they were made.
var idEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// NewID returns a new identifier "<prefix>_<26 characters>". The characters
// encode a UUIDv7, so ids sort by creation time (to the millisecond, then by
// a per-process counter): list endpoints page by id.
func NewID(prefix string) string {
	u, err := uuid.NewV7()
	if err != nil {
		// NewV7 fails only when the system's random source does.
		panic("denar: cannot read random bytes for an id: " + err.Error())
	}
	return prefix + "_" + idEncoding.EncodeToString(u[:])
}
