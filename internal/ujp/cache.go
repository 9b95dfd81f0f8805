package ujp

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
)

// CodebookCache holds the code lists validation uses. It starts from the
// embedded snapshot, so validation works before UJP has ever answered, and
// replaces it with UJP's lists on every successful refresh. A refresh that
// fails keeps the last good set; a list UJP returns empty keeps the previous
// one for that list, since an empty list would make every code invalid.
type CodebookCache struct {
	gw       Gateway
	caller   Identity
	interval time.Duration
	log      *slog.Logger

	// ref is the embedded snapshot, written from UJP's published lists.
	ref *ujpdoc.Codebooks

	mu      sync.RWMutex
	cur     *ujpdoc.Codebooks
	fetched bool
}

// NewCodebookCache returns a cache fetching through gw as caller every
// interval (default 6 h) once Run is started.
func NewCodebookCache(gw Gateway, caller Identity, interval time.Duration, log *slog.Logger) *CodebookCache {
	if interval <= 0 {
		interval = 6 * time.Hour
	}
	if log == nil {
		log = slog.Default()
	}
	return &CodebookCache{gw: gw, caller: caller, interval: interval, log: log, cur: ujpdoc.Snapshot(), ref: ujpdoc.Snapshot()}
}

// Get returns the current code lists. The value is shared: do not modify it.
func (c *CodebookCache) Get() *ujpdoc.Codebooks {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.cur
}

// FromUJP reports whether the current lists came from UJP rather than the
// embedded snapshot.
func (c *CodebookCache) FromUJP() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.fetched
}

// Refresh fetches the lists once.
func (c *CodebookCache) Refresh(ctx context.Context) error {
	next, err := c.gw.Codebooks(ctx, c.caller)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	merged := *next
	prev := c.cur
	if len(merged.DocumentTypes) == 0 {
		merged.DocumentTypes = prev.DocumentTypes
	}
	if len(merged.TaxGroups) == 0 {
		merged.TaxGroups = prev.TaxGroups
	}
	if len(merged.TaxIndicators) == 0 {
		merged.TaxIndicators = prev.TaxIndicators
	} else {
		merged.TaxIndicators = withReferenceGroups(merged.TaxIndicators, c.ref.TaxIndicators)
	}
	for _, p := range []struct{ dst, old *[]ujpdoc.Code }{
		{&merged.RefDocumentTypes, &prev.RefDocumentTypes}, {&merged.PaymentTypes, &prev.PaymentTypes},
		{&merged.Currencies, &prev.Currencies}, {&merged.Countries, &prev.Countries},
		{&merged.VoidReasons, &prev.VoidReasons}, {&merged.CorrectionReasons, &prev.CorrectionReasons},
		{&merged.RejectReasons, &prev.RejectReasons}, {&merged.DocumentStatuses, &prev.DocumentStatuses},
	} {
		if len(*p.dst) == 0 {
			*p.dst = *p.old
		}
	}
	c.cur = &merged
	c.fetched = true
	return nil
}

// Run refreshes at once and then every interval until ctx ends. A failed
// refresh is logged and retried after a minute (or the interval, if
// shorter), never fatal.
func (c *CodebookCache) Run(ctx context.Context) {
	for {
		wait := c.interval
		if err := c.Refresh(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			c.log.Warn("ujp code lists: refresh failed, keeping the current lists", "err", err, "fromUJP", c.FromUJP())
			wait = min(time.Minute, c.interval)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// withReferenceGroups adds to each live indicator the tax groups the
// published list of tax indicators gives it (tax-indicators.txt: DDV-14-4,
// DDV-14-5 and DDV-uvoz are used at several rates) when UJP's live lists
// named fewer: UJP's list entries carry one taxGroupCode each
// (api-specification.txt:712), so a single-entry list would otherwise make
// a lawful rate a local refusal. UJP still judges the document it is sent.
func withReferenceGroups(live, ref []ujpdoc.TaxIndicator) []ujpdoc.TaxIndicator {
	out := make([]ujpdoc.TaxIndicator, len(live))
	for i, t := range live {
		t.TaxGroupCodes = slices.Clone(t.TaxGroupCodes)
		for _, r := range ref {
			if r.Code != t.Code {
				continue
			}
			for _, g := range r.TaxGroupCodes {
				if !slices.Contains(t.TaxGroupCodes, g) {
					t.TaxGroupCodes = append(t.TaxGroupCodes, g)
				}
			}
		}
		out[i] = t
	}
	return out
}
