package denar

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"sync"
	"time"
)

// idEncoding is Crockford-style lower-case base32: it keeps the byte order,
// so ids compare in the order they were made.
var idEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

var idState struct {
	sync.Mutex
	lastMS  int64
	counter uint16
}

// NewID returns a new identifier "<prefix>_<26 characters>". The characters
// encode a UUIDv7 layout: 48 bits of Unix milliseconds, a 12-bit counter that
// keeps ids made in one millisecond by one process in order, and 62 random
// bits. List endpoints page by id, so ids must sort by creation time.
func NewID(prefix string) string {
	var b [16]byte
	if _, err := rand.Read(b[6:]); err != nil {
		// rand.Read fails only when the system's random source does.
		panic("denar: cannot read random bytes for an id: " + err.Error())
	}
	idState.Lock()
	ms := time.Now().UnixMilli()
	if ms <= idState.lastMS {
		idState.counter++
		if idState.counter > 0x0fff {
			// 4096 ids in one millisecond: borrow the next millisecond.
			idState.lastMS++
			idState.counter = 0
		}
		ms = idState.lastMS
	} else {
		idState.lastMS = ms
		idState.counter = 0
	}
	counter := idState.counter
	idState.Unlock()
	var ts [8]byte
	binary.BigEndian.PutUint64(ts[:], uint64(ms))
	copy(b[0:6], ts[2:8])
	b[6] = 0x70 | byte(counter>>8) // version 7
	b[7] = byte(counter)
	b[8] = 0x80 | (b[8] & 0x3f) // RFC 9562 variant
	return prefix + "_" + idEncoding.EncodeToString(b[:])
}
