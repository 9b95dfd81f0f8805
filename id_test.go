package denar

import (
	"encoding/binary"
	"strings"
	"sync"
	"testing"
	"time"
)

// idTime reads back the unix nanoseconds an id was made at, and checks
// its version and variant bits.
func idTime(t *testing.T, id, prefix string) int64 {
	t.Helper()
	rest, ok := strings.CutPrefix(id, prefix+"_")
	if !ok || len(rest) != 26 {
		t.Fatalf("malformed id %q", id)
	}
	b, err := idEncoding.DecodeString(rest)
	if err != nil || len(b) != 16 {
		t.Fatalf("id %q does not decode: %v", id, err)
	}
	if b[6]>>4 != 7 || b[8]>>6 != 2 {
		t.Fatalf("id %q: version %d, variant %b", id, b[6]>>4, b[8]>>6)
	}
	var ts [8]byte
	copy(ts[2:], b[0:6])
	ms := int64(binary.BigEndian.Uint64(ts[:]))
	sub := int64(b[6]&0x0f)<<16 | int64(b[7])<<8 | int64(b[8]&0x3f)<<2 | int64(b[9]>>6)
	if sub >= 1e6 {
		t.Fatalf("id %q: %d nanoseconds within a millisecond", id, sub)
	}
	return ms*1e6 + sub
}

// TestNewIDFormat: "<prefix>_" and 26 characters of the alphabet, a UUIDv7
// layout whose time is when the id was made, to the nanosecond.
func TestNewIDFormat(t *testing.T) {
	t.Parallel()
	for range 1000 {
		before := time.Now().UnixNano()
		id := NewID("einv")
		after := time.Now().UnixNano()
		for _, c := range id[len("einv_"):] {
			if !strings.ContainsRune("0123456789abcdefghjkmnpqrstvwxyz", c) {
				t.Fatalf("id %q has %q", id, c)
			}
		}
		// The id reads the clock through the monotonic reading taken at
		// start: allow for the wall clock having been stepped since by a
		// second.
		if at := idTime(t, id, "einv"); at < before-1e9 || at > after+1e9 {
			t.Fatalf("id %q made at %d, between %d and %d", id, at, before, after)
		}
	}
}

// TestIDLayoutKeepsTimeOrder: ids sort as the nanoseconds they were made
// at, across millisecond and sub-millisecond boundaries, whatever their
// random bits.
func TestIDLayoutKeepsTimeOrder(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC).UnixNano()
	var before string // the greatest id of the times before
	for _, off := range []int64{0, 1, 2, 3, 4, 255, 256, 1023, 1024, 65535, 65536, 999_998, 999_999, 1e6, 1e6 + 1, 2e6, 1e9, 1e12} {
		greatest := ""
		for range 50 { // the same time, other random bits
			id := idEncoding.EncodeToString(idAt(base + off))
			if id <= before {
				t.Fatalf("an id made at +%dns sorts before one made earlier (%s <= %s)", off, id, before)
			}
			if got := idTime(t, "x_"+id, "x"); got != base+off {
				t.Fatalf("made at %d, reads %d", base+off, got)
			}
			greatest = max(greatest, id)
		}
		before = greatest
	}
}

// TestNewIDOrdered: ids made one after the other in a process sort in
// that order (the clock reading moves between two calls: the test waits
// until it does, without sleeping), within a millisecond too.
func TestNewIDOrdered(t *testing.T) {
	t.Parallel()
	prev := NewID("x")
	prevAt := idTime(t, prev, "x")
	sameMS := 0
	for range 10000 {
		id := NewID("x")
		at := idTime(t, id, "x")
		for at == prevAt { // the same clock reading: no order promised
			id = NewID("x")
			at = idTime(t, id, "x")
		}
		if id <= prev {
			t.Fatalf("id %s made after %s sorts before it", id, prev)
		}
		if at/1e6 == prevAt/1e6 {
			sameMS++
		}
		prev, prevAt = id, at
	}
	if sameMS == 0 {
		t.Fatal("no two ids were made within one millisecond: the test proves nothing about order within one")
	}
}

// TestNewIDUnique: ids made at once by many goroutines never collide.
func TestNewIDUnique(t *testing.T) {
	t.Parallel()
	const workers, each = 8, 20000
	ids := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range each {
				ids[w] = append(ids[w], NewID("u"))
			}
		})
	}
	wg.Wait()
	seen := make(map[string]bool, workers*each)
	for _, list := range ids {
		for _, id := range list {
			if seen[id] {
				t.Fatalf("id %s made twice", id)
			}
			seen[id] = true
		}
	}
}
