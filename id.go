package denar

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"time"
)

// idEncoding is Crockford-style lower-case base32: it keeps the byte order,
// so ids compare in the order they were made.
var idEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// idEpoch is when the process started, with its monotonic clock reading:
// idEpoch.Add(time.Since(idEpoch)) is the wall clock read through the
// monotonic clock, which a step of the system clock cannot move back. It
// is set once and never written.
var idEpoch = time.Now()

// NewID returns a new identifier "<prefix>_<26 characters>". The characters
// encode a UUIDv7 layout: 48 bits of Unix milliseconds, then the
// nanoseconds within the millisecond (20 bits: the 12 of rand_a, and 8 at
// the head of rand_b), then 54 random bits. List endpoints page by id, so
// ids must sort by creation time: they do to the nanosecond, and within a
// process the time never goes back (it is read through the monotonic
// clock). No state is kept between calls: the random bits keep ids made in
// the same nanosecond apart, in no particular order (consecutive reads of
// the clock are tens of nanoseconds apart on Linux, so ids made one after
// the other in a process sort in that order).
func NewID(prefix string) string {
	return prefix + "_" + idEncoding.EncodeToString(idAt(idEpoch.Add(time.Since(idEpoch)).UnixNano()))
}

// idAt lays out the 16 bytes of an id made at unix nanoseconds ns.
func idAt(ns int64) []byte {
	b := make([]byte, 16)
	if _, err := rand.Read(b[9:]); err != nil {
		// rand.Read fails only when the system's random source does.
		panic("denar: cannot read random bytes for an id: " + err.Error())
	}
	ms, sub := uint64(ns/1e6), uint32(ns%1e6) // sub < 2^20
	var ts [8]byte
	binary.BigEndian.PutUint64(ts[:], ms)
	copy(b[0:6], ts[2:8])
	b[6] = 0x70 | byte(sub>>16) // version 7, then the top 4 bits of sub
	b[7] = byte(sub >> 8)
	b[8] = 0x80 | byte(sub>>2)&0x3f // RFC 9562 variant, then 6 more bits
	b[9] = byte(sub)<<6 | b[9]&0x3f // the last 2 bits of sub, then random
	return b
}
