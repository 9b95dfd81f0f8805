// Package blob keeps large byte objects (archive exports) out of the rows
// that describe them: a Store puts, streams and deletes objects by key.
// Two stores exist: DB, chunked rows in denar's own database (the embedded
// default, nothing else to run), and S3, any S3-compatible object store
// (for deployments that keep files elsewhere). Both stream: neither holds a
// whole object in memory, on the way in or out.
package blob

import (
	"context"
	"errors"
	"io"
)

// ErrNotFound is returned by Open for a key with no complete object.
var ErrNotFound = errors.New("blob: no such object")

// Store keeps objects by key.
type Store interface {
	// Put stores what r yields under key and returns its size. The object
	// becomes readable only once Put returns nil; a Put that fails or is
	// cut short leaves no readable object (a partial one may remain for
	// Delete to remove). Keys are written once: callers use a fresh key
	// per write.
	Put(ctx context.Context, key string, r io.Reader) (int64, error)
	// Open streams a complete object and tells its size.
	Open(ctx context.Context, key string) (io.ReadCloser, int64, error)
	// Delete removes an object, complete or partial; a missing key is not
	// an error.
	Delete(ctx context.Context, key string) error
}

// Write stores under key what fill writes, streaming: fill runs in its own
// goroutine and writes into a pipe Put reads from, so nothing buffers the
// whole object. An error of fill fails the Put.
func Write(ctx context.Context, s Store, key string, fill func(w io.Writer) error) (int64, error) {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := fill(pw)
		if err == nil {
			err = pw.Close()
		} else {
			pw.CloseWithError(err)
		}
		done <- err
	}()
	n, err := s.Put(ctx, key, pr)
	// Unblock fill if Put stopped reading early, then wait for it.
	pr.CloseWithError(errPutEnded)
	ferr := <-done
	if ferr != nil && !errors.Is(ferr, errPutEnded) {
		return 0, ferr
	}
	if err != nil {
		return 0, err
	}
	return n, nil
}

var errPutEnded = errors.New("blob: the store stopped reading")
