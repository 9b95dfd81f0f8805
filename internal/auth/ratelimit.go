package auth

import (
	"context"
	"fmt"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// RateWindows counts requests per credential and second in the database,
// so that every process serving it shares one count (httpx.WindowCounter).
// Each request is one upsert of a small row; the row's lock makes
// concurrent increments exact.
type RateWindows struct{ DB *store.DB }

// Hit counts one request of key in the window starting at Unix second
// window and returns the window's count.
func (w RateWindows) Hit(ctx context.Context, key string, window int64) (int64, error) {
	n, err := w.DB.Writer().HitRateWindow(ctx, dbq.HitRateWindowParams{Credential: key, WindowStart: window})
	if err != nil {
		return 0, fmt.Errorf("rate window of %s: %w", key, err)
	}
	return n, nil
}

// Purge deletes windows that started before the Unix second before.
func (w RateWindows) Purge(ctx context.Context, before int64) (int64, error) {
	return w.DB.Writer().PurgeRateWindows(ctx, before)
}
