package store

// The access epoch is a counter shared by every process that opens the same
// SQLite database, raised after every committed write transaction and
// after every revocation. A process may keep what it read about access
// (a credential, the companies of an account) for as long as the counter
// has not moved since it read it: a revocation, a new company or any other
// write in any process moves it before that call returns, so nothing kept
// can outlive a change (docs/decisions.md, "Credential cache").
//
// It lives in a file beside the database (PATH-access), eight bytes mapped
// shared into every process, so reading it costs a memory load and raising
// it an atomic add. PostgreSQL databases, possibly shared by processes on
// several hosts, have no epoch: there every request reads access afresh.

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
)

// epoch is the mapped counter.
type epoch struct {
	counter *atomic.Uint64
	unmap   func() error
}

func (e *epoch) close() error {
	if e == nil {
		return nil
	}
	return e.unmap()
}

// openEpoch maps the epoch file of the SQLite database at path.
func openEpoch(path string) (*epoch, error) {
	f, err := os.OpenFile(path+"-access", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: access epoch: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("store: access epoch: %w", err)
	}
	if fi.Size() < 8 {
		if err := f.Truncate(8); err != nil {
			return nil, fmt.Errorf("store: access epoch: %w", err)
		}
	}
	e, err := mapCounter(f)
	if errors.Is(err, errNoMapping) {
		return nil, nil // no shared mapping on this platform: no epoch, no caching
	}
	return e, err
}

var errNoMapping = errors.New("store: shared memory mapping not supported")

// AccessEpoch returns the current access epoch, and false when the store
// has none (PostgreSQL, or a platform without shared mappings): then
// nothing about access may be kept between requests.
func (db *DB) AccessEpoch() (uint64, bool) {
	e := db.epoch.Load()
	if e == nil {
		return 0, false
	}
	return e.counter.Load(), true
}

// AccessChanged raises the access epoch. InTx calls it after every commit;
// code that changes access outside a transaction (a revocation through
// Writer) calls it after the change, before reporting success.
func (db *DB) AccessChanged() {
	if e := db.epoch.Load(); e != nil {
		e.counter.Add(1)
	}
}
