package blob

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// DefaultChunkSize is the size of one stored chunk of the DB store.
const DefaultChunkSize = 1 << 20

// DB is the embedded store: an object is a row of blobs and its chunks, in
// order, in blob_chunks. Each chunk is written by its own statement, so a
// write holds SQLite's single writer for one chunk at a time; the object
// is marked complete by the last statement.
type DB struct {
	db        *store.DB
	chunkSize int
}

// NewDB returns the store on db; chunkSize 0 takes DefaultChunkSize.
func NewDB(db *store.DB, chunkSize int) *DB {
	if chunkSize <= 0 {
		chunkSize = DefaultChunkSize
	}
	return &DB{db: db, chunkSize: chunkSize}
}

// Put implements Store.
func (s *DB) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	if err := s.Delete(ctx, key); err != nil {
		return 0, err
	}
	w := s.db.Writer()
	if err := w.CreateBlob(ctx, dbq.CreateBlobParams{Key: key, CreatedAt: s.db.Now()}); err != nil {
		return 0, fmt.Errorf("blob %s: %w", key, err)
	}
	buf := make([]byte, s.chunkSize)
	var size int64
	for seq := int32(0); ; seq++ {
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			if perr := w.PutBlobChunk(ctx, dbq.PutBlobChunkParams{Key: key, Seq: seq, Data: buf[:n]}); perr != nil {
				return 0, fmt.Errorf("blob %s chunk %d: %w", key, seq, perr)
			}
			size += int64(n)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("blob %s: %w", key, err)
		}
	}
	n, err := w.CompleteBlob(ctx, dbq.CompleteBlobParams{Size: size, Key: key})
	if err != nil {
		return 0, fmt.Errorf("blob %s: complete: %w", key, err)
	}
	if n == 0 {
		return 0, fmt.Errorf("blob %s: removed while written", key)
	}
	return size, nil
}

// Open implements Store.
func (s *DB) Open(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	b, err := s.db.Reader().GetBlob(ctx, key)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !b.Complete) {
		return nil, 0, ErrNotFound
	}
	if err != nil {
		return nil, 0, fmt.Errorf("blob %s: %w", key, err)
	}
	return &dbReader{ctx: ctx, q: s.db.Reader(), key: key, left: b.Size}, b.Size, nil
}

// Delete implements Store.
func (s *DB) Delete(ctx context.Context, key string) error {
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.DeleteBlob(ctx, key); err != nil {
			return fmt.Errorf("delete blob %s: %w", key, err)
		}
		if err := tx.DeleteBlobChunks(ctx, key); err != nil {
			return fmt.Errorf("delete blob %s: %w", key, err)
		}
		return nil
	})
}

// dbReader reads an object chunk by chunk: one chunk in memory at a time.
type dbReader struct {
	ctx  context.Context
	q    *dbq.Queries
	key  string
	seq  int32
	cur  []byte
	left int64
}

func (r *dbReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.left <= 0 {
			return 0, io.EOF
		}
		data, err := r.q.GetBlobChunk(r.ctx, dbq.GetBlobChunkParams{Key: r.key, Seq: r.seq})
		if err != nil {
			return 0, fmt.Errorf("blob %s chunk %d: %w", r.key, r.seq, err)
		}
		r.seq++
		r.cur = data
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	r.left -= int64(n)
	return n, nil
}

func (r *dbReader) Close() error { r.cur = nil; r.left = 0; return nil }
