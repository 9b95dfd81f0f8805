package store

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"
)

// SQLite's write-ahead log is copied back into the database file by a
// checkpoint. Left to SQLite, the connection whose commit takes the log
// past wal_autocheckpoint pages runs it inside that commit — on the one
// writer, so every transaction waiting for the writer waits for the copy
// and its two fsyncs too. The store runs checkpoints on a connection of
// its own instead (docs/decisions.md, "Checkpoints off the writer"): each
// commit pokes the checkpointer, which copies what the log holds (PASSIVE:
// it never blocks the writer or a reader) at most once per checkpointGap.
// The writer keeps an auto-checkpoint at checkpointBackstop pages of log.
// The log only starts again from its beginning when no reader still
// holds an older snapshot, so under steady reads it can reach that size;
// the writer's checkpoint then finds the checkpointer's work done and has
// little to copy, unless the checkpointer has fallen behind.
//
// It is part of the SQLite adapter, like the engine's own background
// writer would be, not application work: one per open store, and a store
// file belongs to one process.

// checkpointGap is the least time between two checkpoints: commits
// within it share the next one.
const checkpointGap = 25 * time.Millisecond

// checkpointBackstop is the writer's own auto-checkpoint, in pages.
const checkpointBackstop = 4000

type checkpointer struct {
	conn *sql.DB
	kick chan struct{}
	stop context.CancelFunc
	done chan struct{}

	closeOnce sync.Once
	closeErr  error
}

// startCheckpointer opens the checkpointer's connection to the SQLite file
// named by dsn and starts it.
func startCheckpointer(dsn string) (*checkpointer, error) {
	conn, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open sqlite checkpointer: %w", err)
	}
	conn.SetMaxOpenConns(1)
	conn.SetConnMaxIdleTime(0)
	ctx, cancel := context.WithCancel(context.Background())
	c := &checkpointer{conn: conn, kick: make(chan struct{}, 1), stop: cancel, done: make(chan struct{})}
	go c.run(ctx)
	return c, nil
}

// poke asks for a checkpoint soon; it never waits.
func (c *checkpointer) poke() {
	if c == nil {
		return
	}
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *checkpointer) run(ctx context.Context) {
	defer close(c.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.kick:
		}
		// A failed checkpoint (the file busy past busy_timeout, say)
		// leaves the frames in the log for the next one, or for the
		// writer's backstop; there is nothing else to do with the error.
		_, _ = c.conn.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
		gap := time.NewTimer(checkpointGap)
		select {
		case <-ctx.Done():
			gap.Stop()
			return
		case <-gap.C:
		}
	}
}

// close stops the checkpointer and closes its connection; a second call
// does nothing. A poke after it is a no-op too.
func (c *checkpointer) close() error {
	if c == nil {
		return nil
	}
	c.closeOnce.Do(func() {
		c.stop()
		<-c.done
		c.closeErr = c.conn.Close()
	})
	return c.closeErr
}
