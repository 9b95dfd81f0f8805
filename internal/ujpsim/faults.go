package ujpsim

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// Faults are the misbehaviours the simulator can be told to show. They
// apply to UJP's API paths, never to /_sim. The global ones (Outage,
// Latency, ErrorRate, RejectSends) hit every caller; the others are aimed
// at one company's calls (by X-EDB), so that parallel tests and sandbox
// tenants do not disturb each other. The rate limit is not a fault: it is
// always on (Options.Window).
type Faults struct {
	Outage    bool          `json:"outage"`    // every call → 503 with an HTML page
	Latency   time.Duration `json:"latencyNs"` // added before each call is handled
	ErrorRate float64       `json:"errorRate"` // fraction of calls → 500 E5000
	// RejectSends makes the next RejectSends.Count sends fail terminally
	// with the given UJP code, after verification passed.
	RejectSends *ForcedRejection `json:"rejectSends,omitempty"`
	// Per company (X-EDB).
	OutageSellers    map[string]bool            `json:"outageSellers,omitempty"`
	RejectSellers    map[string]ForcedRejection `json:"rejectSellers,omitempty"`
	CallFaults       map[string]CallFault       `json:"callFaults,omitempty"`
	CodeListsChanged map[string]bool            `json:"codeListsChanged,omitempty"`
}

// ForcedRejection is a terminal error the simulator answers on demand.
type ForcedRejection struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Count   int    `json:"count"`
}

// Kinds of CallFault.
const (
	// FaultStatus answers Status (a 5xx or other) with Code (none when
	// empty) in the body Shape.
	FaultStatus = "status"
	// FaultHang holds the call until the client gives up (a timeout).
	FaultHang = "hang"
	// FaultLost stores a send and then drops the connection: the
	// document is at UJP, the client never learns its EUID.
	FaultLost = "lost"
	// FaultLostHang stores a send and then holds the call until the
	// client gives up.
	FaultLostHang = "lost-hang"
)

// Body shapes of a FaultStatus answer.
const (
	ShapeUJP    = "ujp"    // UJP's envelope with errorStatus
	ShapeSpring = "spring" // Spring Boot's default error JSON
	ShapeHTML   = "html"   // an HTML error page
)

// CallFault makes the next Count API calls of a company (whose path ends
// with Path, "" for any) fail as Kind says. FaultLost and FaultLostHang
// apply to sends only.
type CallFault struct {
	Count  int    `json:"count"`
	Path   string `json:"path,omitempty"`
	Kind   string `json:"kind"`
	Status int    `json:"status,omitempty"`
	Code   string `json:"code,omitempty"`
	Shape  string `json:"shape,omitempty"`
}

func (f CallFault) check() error {
	switch {
	case !countOK(f.Count):
		return errors.New("a call fault's count is from 0 to 1000000")
	case !storable(f.Path) || !storable(f.Code) || len(f.Path) > 200 || len(f.Code) > 20:
		return errors.New("a call fault's path and code are short text")
	}
	switch f.Kind {
	case FaultHang, FaultLost, FaultLostHang:
	case FaultStatus:
		if f.Status < 400 || f.Status > 599 {
			return errors.New("a status fault's status is 400 to 599")
		}
		switch f.Shape {
		case "", ShapeUJP, ShapeSpring, ShapeHTML:
		default:
			return fmt.Errorf("shape %q: want ujp, spring or html", f.Shape)
		}
	default:
		return fmt.Errorf("kind %q: want status, hang, lost or lost-hang", f.Kind)
	}
	return nil
}

// countOK bounds a count (stored as a 32-bit integer).
func countOK(n int) bool { return n >= 0 && n <= 1_000_000 }

// Faults returns the fault configuration.
func (s *Sim) Faults(ctx context.Context) (Faults, error) {
	q := s.db.Reader()
	st, err := q.GetUJPSimSettings(ctx)
	if err != nil {
		return Faults{}, fmt.Errorf("ujpsim: faults: %w", err)
	}
	f := Faults{Outage: st.Outage, Latency: time.Duration(st.LatencyNs), ErrorRate: st.ErrorRate}
	if st.RejectCount > 0 {
		f.RejectSends = &ForcedRejection{Code: st.RejectCode, Message: st.RejectMessage, Count: int(st.RejectCount)}
	}
	rows, err := q.ListUJPSimSellerFaults(ctx)
	if err != nil {
		return Faults{}, fmt.Errorf("ujpsim: seller faults: %w", err)
	}
	set := func(m *map[string]bool, k string) {
		if *m == nil {
			*m = map[string]bool{}
		}
		(*m)[k] = true
	}
	for _, r := range rows {
		if r.Outage {
			set(&f.OutageSellers, r.Edb)
		}
		if r.CodelistsChanged {
			set(&f.CodeListsChanged, r.Edb)
		}
		if r.RejectCount > 0 {
			if f.RejectSellers == nil {
				f.RejectSellers = map[string]ForcedRejection{}
			}
			f.RejectSellers[r.Edb] = ForcedRejection{Code: r.RejectCode, Message: r.RejectMessage, Count: int(r.RejectCount)}
		}
		if r.CallCount > 0 {
			if f.CallFaults == nil {
				f.CallFaults = map[string]CallFault{}
			}
			f.CallFaults[r.Edb] = CallFault{Count: int(r.CallCount), Path: r.CallPath, Kind: r.CallKind, Status: int(r.CallStatus),
				Code: r.CallCode, Shape: r.CallShape}
		}
	}
	return f, nil
}

func checkFaults(f Faults) error {
	switch {
	case f.Latency < 0 || f.Latency > time.Hour:
		return errors.New("latency must be between 0 and an hour")
	case f.ErrorRate < 0 || f.ErrorRate > 1:
		return errors.New("errorRate must be between 0 and 1")
	case f.RejectSends != nil && (!countOK(f.RejectSends.Count) || !storable(f.RejectSends.Code) || !storable(f.RejectSends.Message)):
		return errors.New("rejectSends needs a count from 0 to 1000000 and a code and message without NUL")
	}
	for edb := range f.OutageSellers {
		if !storable(edb) {
			return errors.New("outageSellers: a tax number is not valid text")
		}
	}
	for edb := range f.CodeListsChanged {
		if !storable(edb) {
			return errors.New("codeListsChanged: a tax number is not valid text")
		}
	}
	for edb, r := range f.RejectSellers {
		if !storable(edb) || !countOK(r.Count) || !storable(r.Code) || !storable(r.Message) {
			return errors.New("rejectSellers: a tax number, code or message is not valid text, or a count is not from 0 to 1000000")
		}
	}
	for edb, c := range f.CallFaults {
		if !storable(edb) {
			return errors.New("callFaults: a tax number is not valid text")
		}
		if err := c.check(); err != nil {
			return fmt.Errorf("callFaults[%s]: %w", edb, err)
		}
	}
	return nil
}

// SetFaults replaces the whole fault configuration.
func (s *Sim) SetFaults(ctx context.Context, f Faults) error {
	if err := checkFaults(f); err != nil {
		return badRequest(err.Error())
	}
	var rej ForcedRejection
	if f.RejectSends != nil {
		rej = *f.RejectSends
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.SetUJPSimFaults(ctx, dbq.SetUJPSimFaultsParams{Outage: f.Outage, LatencyNs: int64(f.Latency), ErrorRate: f.ErrorRate,
			RejectCode: rej.Code, RejectMessage: rej.Message, RejectCount: int32(rej.Count)}); err != nil {
			return fmt.Errorf("ujpsim: set faults: %w", err)
		}
		if err := tx.DeleteUJPSimSellerFaults(ctx); err != nil {
			return fmt.Errorf("ujpsim: set faults: %w", err)
		}
		sellers := map[string]*dbq.PutUJPSimSellerFaultsParams{}
		get := func(edb string) *dbq.PutUJPSimSellerFaultsParams {
			if p, ok := sellers[edb]; ok {
				return p
			}
			p := &dbq.PutUJPSimSellerFaultsParams{Edb: edb}
			sellers[edb] = p
			return p
		}
		for edb, on := range f.OutageSellers {
			if on {
				get(edb).Outage = true
			}
		}
		for edb, on := range f.CodeListsChanged {
			if on {
				get(edb).CodelistsChanged = true
			}
		}
		for edb, r := range f.RejectSellers {
			p := get(edb)
			p.RejectCode, p.RejectMessage, p.RejectCount = r.Code, r.Message, int32(r.Count)
		}
		for edb, c := range f.CallFaults {
			p := get(edb)
			p.CallCount, p.CallPath, p.CallKind, p.CallStatus, p.CallCode, p.CallShape = int32(c.Count), c.Path, c.Kind, int32(c.Status), c.Code, c.Shape
		}
		for _, p := range sellers {
			if err := tx.PutUJPSimSellerFaults(ctx, *p); err != nil {
				return fmt.Errorf("ujpsim: set faults of %s: %w", p.Edb, err)
			}
		}
		return nil
	})
}

// SetOutage starts or ends an outage of every call.
func (s *Sim) SetOutage(ctx context.Context, on bool) error {
	return wrap("set outage", s.db.Writer().SetUJPSimOutage(ctx, on))
}

// SetLatency adds d before every API call is handled.
func (s *Sim) SetLatency(ctx context.Context, d time.Duration) error {
	if d < 0 || d > time.Hour {
		return badRequest("latency must be between 0 and an hour")
	}
	return wrap("set latency", s.db.Writer().SetUJPSimLatency(ctx, int64(d)))
}

// SetErrorRate makes a fraction (0…1) of API calls fail with 500 E5000.
func (s *Sim) SetErrorRate(ctx context.Context, r float64) error {
	if r < 0 || r > 1 {
		return badRequest("errorRate must be between 0 and 1")
	}
	return wrap("set error rate", s.db.Writer().SetUJPSimErrorRate(ctx, r))
}

// RejectNextSends makes the next n sends of any seller fail with a UJP code.
func (s *Sim) RejectNextSends(ctx context.Context, n int, code, message string) error {
	if !countOK(n) || !storable(code) || !storable(message) {
		return badRequest("rejectSends needs a count from 0 to 1000000 and a code and message without NUL")
	}
	return wrap("reject sends", s.db.Writer().SetUJPSimRejectSends(ctx, dbq.SetUJPSimRejectSendsParams{RejectCode: code,
		RejectMessage: message, RejectCount: int32(n)}))
}

// SetSellerOutage starts or ends an outage seen only by calls with X-EDB
// edb (the sandbox simulate endpoint's outage_starts and outage_ends).
func (s *Sim) SetSellerOutage(ctx context.Context, edb string, on bool) error {
	if !storable(edb) {
		return badRequest("the tax number is not valid text")
	}
	return wrap("seller outage", s.db.Writer().SetUJPSimSellerOutage(ctx, dbq.SetUJPSimSellerOutageParams{Edb: edb, Outage: on}))
}

// RejectNextSellerSends makes the next n sends of seller edb fail with a
// UJP code, after verification passed.
func (s *Sim) RejectNextSellerSends(ctx context.Context, edb string, n int, code, message string) error {
	if !storable(edb) || !countOK(n) || !storable(code) || !storable(message) {
		return badRequest("a tax number, code and message without NUL, and a count from 0 to 1000000 are required")
	}
	return wrap("seller rejections", s.db.Writer().SetUJPSimSellerRejects(ctx, dbq.SetUJPSimSellerRejectsParams{Edb: edb,
		RejectCode: code, RejectMessage: message, RejectCount: int32(n)}))
}

// RejectNextSend makes the seller's next send fail with UJP code code (the
// sandbox simulate endpoint's terminal_error).
func (s *Sim) RejectNextSend(ctx context.Context, edb, code, message string) error {
	return s.RejectNextSellerSends(ctx, edb, 1, code, message)
}

// FailNextCalls sets the call fault of company edb (replacing any), e.g.
// the next send stored and its response lost, two 500s without a UJP
// code, or one call that never answers. A zero Count clears it.
func (s *Sim) FailNextCalls(ctx context.Context, edb string, f CallFault) error {
	if !storable(edb) {
		return badRequest("the tax number is not valid text")
	}
	if f.Count > 0 {
		if err := f.check(); err != nil {
			return badRequest(err.Error())
		}
	}
	return wrap("call fault", s.db.Writer().SetUJPSimSellerCallFault(ctx, dbq.SetUJPSimSellerCallFaultParams{Edb: edb,
		CallCount: int32(f.Count), CallPath: f.Path, CallKind: f.Kind, CallStatus: int32(f.Status), CallCode: f.Code, CallShape: f.Shape}))
}

// SetCodeListsChanged makes the code lists company edb reads (and that its
// documents are validated against) the changed ones: a new tax indicator
// DDV-14-3-10 (document type 100 only), payment type P13 removed, document
// type 100 renamed "Општа Фактура". false restores the published lists.
func (s *Sim) SetCodeListsChanged(ctx context.Context, edb string, on bool) error {
	if !storable(edb) {
		return badRequest("the tax number is not valid text")
	}
	return wrap("code lists", s.db.Writer().SetUJPSimSellerCodeLists(ctx, dbq.SetUJPSimSellerCodeListsParams{Edb: edb, CodelistsChanged: on}))
}

// SetClockSkew sets UJP's real clock off by d (negative: behind): server
// time says so, and a requestTimestamp is judged by it, so a caller whose
// clock is right looks d off. 0 ends the fault. It applies to every
// caller.
func (s *Sim) SetClockSkew(ctx context.Context, d time.Duration) error {
	if d < -24*time.Hour || d > 24*time.Hour {
		return badRequest("a clock skew is within a day")
	}
	return wrap("clock skew", s.db.Writer().SetUJPSimClockSkew(ctx, int64(d)))
}

// BurstRateLimit makes the next n calls of user eujpID answer 429 E4007,
// whatever their timing.
func (s *Sim) BurstRateLimit(ctx context.Context, eujpID string, n int) error {
	if !validEUJPID(eujpID) || !countOK(n) {
		return badRequest("an EUJP id and a count from 0 to 1000000 are required")
	}
	return wrap("burst", s.db.Writer().SetUJPSimBurst(ctx, dbq.SetUJPSimBurstParams{EujpID: eujpID,
		NextAt: dbTime(time.Unix(0, 0)), Burst: int32(n)}))
}

// RateLimited says how many calls of each user the simulator answered
// 429 E4007 (too soon for the window, or a burst): users with none are
// left out. Every simulator on the store counts into the same numbers;
// Purge forgets the users it forgets the slots of.
func (s *Sim) RateLimited(ctx context.Context) (map[string]int64, error) {
	rows, err := s.db.Reader().ListUJPSimRefusals(ctx)
	if err != nil {
		return nil, wrap("rate limited", err)
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.EujpID] = r.Refused
	}
	return out, nil
}

// takeCallFault consumes the caller's call fault when one of kinds waits
// for this path.
func (s *Sim) takeCallFault(ctx context.Context, edb, path string, st callFaultView, kinds ...string) (*CallFault, error) {
	if st.count <= 0 || (st.path != "" && !strings.HasSuffix(path, st.path)) {
		return nil, nil
	}
	match := false
	for _, k := range kinds {
		match = match || st.kind == k
	}
	if !match {
		return nil, nil
	}
	kb := kinds[len(kinds)-1]
	r, err := s.db.Writer().TakeUJPSimSellerCallFault(ctx, dbq.TakeUJPSimSellerCallFaultParams{Edb: edb, KindA: kinds[0], KindB: kb})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &CallFault{Path: r.CallPath, Kind: r.CallKind, Status: int(r.CallStatus), Code: r.CallCode, Shape: r.CallShape}, nil
}

type callFaultView struct {
	count      int32
	path, kind string
}

// writeFault answers a FaultStatus call fault in its shape.
func (s *Sim) writeFault(w http.ResponseWriter, r *http.Request, f *CallFault) {
	switch f.Shape {
	case ShapeSpring:
		writeJSON(w, f.Status, map[string]any{"timestamp": time.Now().UTC().Format("2006-01-02T15:04:05.000+00:00"), "status": f.Status,
			"error": http.StatusText(f.Status), "path": r.URL.Path})
	case ShapeHTML:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(f.Status)
		fmt.Fprintf(w, "<!DOCTYPE html><html><head><title>%d %s</title></head><body><h1>%d %s</h1><hr><center>nginx</center></body></html>\n",
			f.Status, http.StatusText(f.Status), f.Status, http.StatusText(f.Status))
	default:
		if f.Code == "" {
			writeJSON(w, f.Status, map[string]any{"success": false, "createdDate": FormatTimestamp(s.opts.Now()), "errorStatus": nil})
			return
		}
		msg := map[string]string{"E5000": "Internal server error", "E5001": "Internal error occurred while processing the request",
			"E5007": "Document validation failed", "E5008": "Fetching TimeStampToken failed", "E4009": "The request took too long to process.Asynchronous request timeout occurred."}[f.Code]
		if msg == "" {
			msg = "Error"
		}
		s.fail(w, r, &simError{status: f.Status, code: f.Code, msg: msg})
	}
}
