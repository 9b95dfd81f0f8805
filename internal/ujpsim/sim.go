// Package ujpsim is a sandbox simulator of UJP's e-Faktura API: an
// http.Handler serving the same paths, headers, bodies and envelopes as the
// real service (see internal/ujp), with real validation and fault injection
// for testing how the service copes with UJP misbehaving.
//
// What it checks before it assigns an EUID, as UJP does: the certificate
// registered for the caller's company (X-EDB, X-SERIAL-NUMBER, X-EUJP-ID),
// the compact JWS (RS256 only) against that certificate, requestTimestamp
// within ±5 minutes of its clock in Skopje time, the document's required
// fields, codebook codes and totals (ujpdoc.Validate), the parties against
// its registry, and a repeated docId (E1023, nothing new created).
//
// Its state (documents with payloads, statuses and history, registered
// certificates, registry entries added through /_sim, faults, the business
// clock and the rate-limit slots) lives in the store (tables ujpsim_*), not
// in memory: every simulator on one database is the same simulated UJP.
// That is what makes several `denar serve` processes sharing PostgreSQL see
// one sandbox UJP, and what lets `denar ujp-sim` keep its documents across
// restarts. Everything that must happen once (one document per docId, one
// move from a status, one forced rejection, one call per second per user)
// is a single conditional statement, so it holds across processes on both
// engines. Stored documents are removed by a retention job (RegisterPurge).
//
// A simulator on the service's own store writes through the store's own
// transactions, so it must never be called (over the in-process transport
// or directly) from inside a store transaction: on SQLite, whose single
// write connection that transaction holds, the simulator's write would wait
// for it forever. Call UJP, simulated or not, between transactions.
//
// It runs in-process (New, then Handler or Transport) or as its own server
// (`denar ujp-sim`). The seeded registry and the /_sim admin endpoints,
// which require Options.ControlToken, are described in docs/sandbox.md.
package ujpsim

import (
	"context"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/ujp"
)

// Options configure a simulator. The zero value is usable.
type Options struct {
	// Now is the simulator's base clock (default time.Now); AdvanceClock
	// adds to it. It also stamps when documents were stored, which the
	// retention rule reads.
	Now func() time.Time
	// QRBase prefixes qr_link (default https://efakturatest.ujp.gov.mk);
	// qr_link is QRBase + "/euid/" + EUID, as UJP's.
	QRBase string
	// ControlToken is the bearer token the /_sim admin endpoints require
	// (Authorization: Bearer <token>). Empty: every /_sim request is
	// refused with 401, and the simulator is driven through its Go methods
	// only.
	ControlToken string
	// Codebooks default to ujpdoc.Snapshot().
	Codebooks *ujpdoc.Codebooks
	// Companies replace the seeded registry when not nil. Entries added
	// with AddCompany are stored and take precedence.
	Companies []ujp.Company
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// SlowRegistryDelay is how long the registry takes to answer for
	// TaxSlowRegistry; default DefaultSlowRegistryDelay.
	SlowRegistryDelay time.Duration
	// Window is the per-user rate window of the rate-limit fault: one
	// request per Window per X-EUJP-ID (default 1 s, UJP's).
	Window time.Duration
}

// DefaultSlowRegistryDelay is how long the registry takes for
// TaxSlowRegistry: longer than the service's inline validation budget
// (1 s), shorter than its registry timeout (10 s).
const DefaultSlowRegistryDelay = 3 * time.Second

// Well-known sandbox tax numbers (docs/sandbox.md).
const (
	TaxSeller   = "4030000000001" // active VAT payer, Skopje
	TaxBuyer    = "4030000000010" // active VAT payer, Skopje
	TaxSmallBiz = "4030000000028" // registered, not a VAT payer, Bitola
	// TaxSupplier (buyer.go) = "4030000000044": the fictitious supplier of
	// DropIncoming's invoices, a VAT payer in Tetovo.
	TaxNeverExisted = "4039999999997" // never registered: E1000
	TaxNoAnswer     = "4039999999989" // the registry never answers
	TaxSlowRegistry = "4030000000036" // the registry answers after SlowRegistryDelay
)

// SeedCompanies is the fictitious registry every simulator starts with.
func SeedCompanies() []ujp.Company {
	vat := func(s string) *string { return &s }
	skopje := 132
	return []ujp.Company{
		{TaxNumber: TaxSeller, VatNumber: vat("МК" + TaxSeller), RegistrationNumber: "7000001", Name: "Тест Продавач ДООЕЛ Скопје",
			Address: ujp.CompanyAddress{Street: "бул. Партизански одреди", Number: "1", City: "Скопје", Zip: "1000"}, CountryID: &skopje, Golemina: "1", CountryCode: "MK"},
		{TaxNumber: TaxBuyer, VatNumber: vat("МК" + TaxBuyer), RegistrationNumber: "7000002", Name: "Тест Купувач ДОО Скопје",
			Address: ujp.CompanyAddress{Street: "ул. Македонија", Number: "2", City: "Скопје", Zip: "1000"}, CountryID: &skopje, Golemina: "2", CountryCode: "MK"},
		{TaxNumber: TaxSmallBiz, RegistrationNumber: "7000003", Name: "Тест Занаетчија Битола",
			Address: ujp.CompanyAddress{Street: "ул. Широк Сокак", Number: "3", City: "Битола", Zip: "7000"}, CountryID: &skopje, Golemina: "0", CountryCode: "MK"},
		{TaxNumber: TaxSlowRegistry, VatNumber: vat("МК" + TaxSlowRegistry), RegistrationNumber: "7000004", Name: "Тест Бавен Купувач ДОО Куманово",
			Address: ujp.CompanyAddress{Street: "ул. Октомвриска", Number: "4", City: "Куманово", Zip: "1300"}, CountryID: &skopje, Golemina: "2", CountryCode: "MK"},
		{TaxNumber: TaxSupplier, VatNumber: vat("МК" + TaxSupplier), RegistrationNumber: "7000005", Name: "Тест Добавувач ДООЕЛ Тетово",
			Address: ujp.CompanyAddress{Street: "ул. Илинденска", Number: "5", City: "Тетово", Zip: "1200"}, CountryID: &skopje, Golemina: "1", CountryCode: "MK"},
	}
}

// Faults are the misbehaviours the simulator can be told to show. They
// apply to UJP's API paths, never to /_sim.
type Faults struct {
	Outage    bool          `json:"outage"`    // every call → 503, no body UJP would send
	Latency   time.Duration `json:"latencyNs"` // added before each call is handled
	ErrorRate float64       `json:"errorRate"` // fraction of calls → 500 E5000
	RateLimit bool          `json:"rateLimit"` // 1 request/second per X-EUJP-ID → 429 E4007
	// RejectSends makes the next RejectSends.Count sends fail terminally
	// with the given UJP code, after verification passed.
	RejectSends *ForcedRejection `json:"rejectSends,omitempty"`
	// OutageSellers and RejectSellers are the same faults for the calls of
	// one company only (by X-EDB), so that one sandbox tenant testing an
	// outage does not stop everyone else's submissions.
	OutageSellers map[string]bool            `json:"outageSellers,omitempty"`
	RejectSellers map[string]ForcedRejection `json:"rejectSellers,omitempty"`
}

// ForcedRejection is a terminal error the simulator answers on demand.
type ForcedRejection struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Count   int    `json:"count"`
}

// Document is the simulator's record of an accepted document.
type Document struct {
	EUID       string             `json:"euid"`
	DocID      string             `json:"docId"`
	DocType    string             `json:"docType"`
	DocStorno  int                `json:"docStorno"`
	SellerTin  string             `json:"sellerTin"`
	BuyerTin   string             `json:"buyerTin"`
	Status     string             `json:"status"`
	QRLink     string             `json:"qrLink"`
	ReceivedAt time.Time          `json:"receivedAt"`
	DecideBy   time.Time          `json:"decideBy"`
	References string             `json:"references,omitempty"` // EUID of the voided or corrected original
	Payload    json.RawMessage    `json:"payload"`              // the signed payload, byte for byte
	History    []ujp.StatusChange `json:"history"`
}

// ErrNotFound is the simulator's E4008 for an EUID it does not hold (or no
// longer holds, after retention); errors.Is finds it in the errors of
// Document, Decide and ForceAutoAccept.
var ErrNotFound = errors.New("ujpsim: no such document")

// Sim is the simulator. Its methods are safe for concurrent use, also by
// several simulators (processes) on one store.
type Sim struct {
	db   *store.DB
	opts Options
	cb   *ujpdoc.Codebooks
	log  *slog.Logger
	seed map[string]ujp.Company
}

// New returns a simulator whose state is in db (migrated; the tables of
// migration 00008). Simulators on the same database are one simulated UJP.
func New(db *store.DB, opts Options) (*Sim, error) {
	if db == nil {
		return nil, errors.New("ujpsim: a store is required")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.QRBase == "" {
		opts.QRBase = "https://efakturatest.ujp.gov.mk"
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Window <= 0 {
		opts.Window = time.Second
	}
	if opts.SlowRegistryDelay <= 0 {
		opts.SlowRegistryDelay = DefaultSlowRegistryDelay
	}
	cb := opts.Codebooks
	if cb == nil {
		cb = ujpdoc.Snapshot()
	}
	companies := opts.Companies
	if companies == nil {
		companies = SeedCompanies()
	}
	seed := make(map[string]ujp.Company, len(companies))
	for _, c := range companies {
		seed[c.TaxNumber] = c
	}
	return &Sim{db: db, opts: opts, cb: cb, log: opts.Logger, seed: seed}, nil
}

// dbTime is a time as stored: UTC (SQLite compares timestamps as text) and
// microseconds (what PostgreSQL keeps).
func dbTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// storable reports whether s can be stored in a TEXT column of either
// engine and found again: valid UTF-8 without NUL (PostgreSQL refuses both).
func storable(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// lookupKey makes a header value usable as a lookup key whatever bytes it holds.
func lookupKey(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// callKey carries what an API call read with its faults (callState), so
// that the call does not read it again.
type callKey struct{}

// callState is the part of the simulator's settings an API call read when
// it arrived.
type callState struct {
	clockOffset time.Duration
	// pendingRejects is whether a forced rejection (of every seller, or of
	// the caller's company) was waiting; a send without one does not look.
	pendingRejects bool
}

// now is the simulator's business clock: the base clock plus the stored
// offset.
func (s *Sim) now(ctx context.Context) (time.Time, error) {
	if st, ok := ctx.Value(callKey{}).(callState); ok {
		return s.opts.Now().Add(st.clockOffset), nil
	}
	st, err := s.db.Reader().GetUJPSimSettings(ctx)
	if err != nil {
		return time.Time{}, fmt.Errorf("ujpsim: clock: %w", err)
	}
	return s.opts.Now().Add(time.Duration(st.ClockOffsetNs)), nil
}

// Now returns the simulator's business clock.
func (s *Sim) Now(ctx context.Context) (time.Time, error) { return s.now(ctx) }

// Faults returns the fault configuration.
func (s *Sim) Faults(ctx context.Context) (Faults, error) {
	q := s.db.Reader()
	st, err := q.GetUJPSimSettings(ctx)
	if err != nil {
		return Faults{}, fmt.Errorf("ujpsim: faults: %w", err)
	}
	f := Faults{Outage: st.Outage, Latency: time.Duration(st.LatencyNs), ErrorRate: st.ErrorRate, RateLimit: st.RateLimit}
	if st.RejectCount > 0 {
		f.RejectSends = &ForcedRejection{Code: st.RejectCode, Message: st.RejectMessage, Count: int(st.RejectCount)}
	}
	rows, err := q.ListUJPSimSellerFaults(ctx)
	if err != nil {
		return Faults{}, fmt.Errorf("ujpsim: seller faults: %w", err)
	}
	for _, r := range rows {
		if r.Outage {
			if f.OutageSellers == nil {
				f.OutageSellers = map[string]bool{}
			}
			f.OutageSellers[r.Edb] = true
		}
		if r.RejectCount > 0 {
			if f.RejectSellers == nil {
				f.RejectSellers = map[string]ForcedRejection{}
			}
			f.RejectSellers[r.Edb] = ForcedRejection{Code: r.RejectCode, Message: r.RejectMessage, Count: int(r.RejectCount)}
		}
	}
	return f, nil
}

// countOK bounds a count of forced rejections (stored as a 32-bit integer).
func countOK(n int) bool { return n >= 0 && n <= 1_000_000 }

// checkFaults refuses a fault set that cannot be stored or makes no sense.
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
	for edb, r := range f.RejectSellers {
		if !storable(edb) || !countOK(r.Count) || !storable(r.Code) || !storable(r.Message) {
			return errors.New("rejectSellers: a tax number, code or message is not valid text, or a count is not from 0 to 1000000")
		}
	}
	return nil
}

// SetFaults replaces the fault configuration, the sellers' included.
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
			RateLimit: f.RateLimit, RejectCode: rej.Code, RejectMessage: rej.Message, RejectCount: int32(rej.Count)}); err != nil {
			return fmt.Errorf("ujpsim: set faults: %w", err)
		}
		if err := tx.DeleteUJPSimSellerFaults(ctx); err != nil {
			return fmt.Errorf("ujpsim: set faults: %w", err)
		}
		sellers := map[string]dbq.PutUJPSimSellerFaultsParams{}
		for edb, on := range f.OutageSellers {
			if on {
				sellers[edb] = dbq.PutUJPSimSellerFaultsParams{Edb: edb, Outage: true}
			}
		}
		for edb, r := range f.RejectSellers {
			p := sellers[edb]
			p.Edb, p.RejectCode, p.RejectMessage, p.RejectCount = edb, r.Code, r.Message, int32(r.Count)
			sellers[edb] = p
		}
		for _, p := range sellers {
			if err := tx.PutUJPSimSellerFaults(ctx, p); err != nil {
				return fmt.Errorf("ujpsim: set faults of %s: %w", p.Edb, err)
			}
		}
		return nil
	})
}

// SetOutage starts or ends an outage.
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

// SetErrorRate makes a fraction (0…1) of API calls fail with 500.
func (s *Sim) SetErrorRate(ctx context.Context, r float64) error {
	if r < 0 || r > 1 {
		return badRequest("errorRate must be between 0 and 1")
	}
	return wrap("set error rate", s.db.Writer().SetUJPSimErrorRate(ctx, r))
}

// SetRateLimit turns UJP's 1 request/second per user limit on or off. It
// holds across every simulator on the store.
func (s *Sim) SetRateLimit(ctx context.Context, on bool) error {
	return wrap("set rate limit", s.db.Writer().SetUJPSimRateLimit(ctx, on))
}

// RejectNextSends makes the next n sends fail with a terminal UJP code.
func (s *Sim) RejectNextSends(ctx context.Context, n int, code, message string) error {
	if !countOK(n) || !storable(code) || !storable(message) {
		return badRequest("rejectSends needs a count from 0 to 1000000 and a code and message without NUL")
	}
	return wrap("reject sends", s.db.Writer().SetUJPSimRejectSends(ctx, dbq.SetUJPSimRejectSendsParams{RejectCode: code,
		RejectMessage: message, RejectCount: int32(n)}))
}

// SetSellerOutage starts or ends an outage seen only by calls with X-EDB
// edb. It is also the sandbox simulate endpoint's outage_starts and
// outage_ends (einvoiceapi.SandboxUJP).
func (s *Sim) SetSellerOutage(ctx context.Context, edb string, on bool) error {
	if !storable(edb) {
		return badRequest("the tax number is not valid text")
	}
	return wrap("seller outage", s.db.Writer().SetUJPSimSellerOutage(ctx, dbq.SetUJPSimSellerOutageParams{Edb: edb, Outage: on}))
}

// RejectNextSellerSends makes the next n sends of seller edb fail with a
// terminal UJP code.
func (s *Sim) RejectNextSellerSends(ctx context.Context, edb string, n int, code, message string) error {
	if !storable(edb) || !countOK(n) || !storable(code) || !storable(message) {
		return badRequest("a tax number, code and message without NUL, and a count from 0 to 1000000 are required")
	}
	return wrap("seller rejections", s.db.Writer().SetUJPSimSellerRejects(ctx, dbq.SetUJPSimSellerRejectsParams{Edb: edb,
		RejectCode: code, RejectMessage: message, RejectCount: int32(n)}))
}

// RejectNextSend makes the seller's next send fail with UJP code code (the
// sandbox simulate endpoint's terminal_error; einvoiceapi.SandboxUJP).
func (s *Sim) RejectNextSend(ctx context.Context, edb, code, message string) error {
	return s.RejectNextSellerSends(ctx, edb, 1, code, message)
}

func wrap(op string, err error) error {
	if err != nil {
		return fmt.Errorf("ujpsim: %s: %w", op, err)
	}
	return nil
}

// AdvanceClock moves the simulator's business clock forward; documents
// past their decision deadline are auto-accepted at once.
func (s *Sim) AdvanceClock(ctx context.Context, d time.Duration) error {
	if d < 0 {
		return badRequest("the clock only moves forward")
	}
	off, err := s.db.Writer().AdvanceUJPSimClock(ctx, int64(d))
	if err != nil {
		return fmt.Errorf("ujpsim: advance clock: %w", err)
	}
	return s.sweep(ctx, s.opts.Now().Add(time.Duration(off)))
}

// AddCompany adds or replaces a registry entry.
func (s *Sim) AddCompany(ctx context.Context, c ujp.Company) error {
	if !storable(c.TaxNumber) || c.TaxNumber == "" || c.Name == "" {
		return badRequest("taxNumber and name are required, as text without NUL")
	}
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("ujpsim: add company: %w", err)
	}
	return wrap("add company", s.db.Writer().PutUJPSimCompany(ctx, dbq.PutUJPSimCompanyParams{TaxNumber: c.TaxNumber,
		Company: string(b), UpdatedAt: dbTime(s.opts.Now())}))
}

// company looks a tax number up: the entries added through AddCompany,
// then the seeded registry.
func (s *Sim) company(ctx context.Context, tax string) (ujp.Company, bool, error) {
	found, err := s.companies(ctx, tax, tax)
	if err != nil {
		return ujp.Company{}, false, err
	}
	c, ok := found[tax]
	return c, ok, nil
}

// companies looks two tax numbers up at once (a document's parties).
func (s *Sim) companies(ctx context.Context, first, second string) (map[string]ujp.Company, error) {
	out := map[string]ujp.Company{}
	if !storable(first) {
		first = ""
	}
	if !storable(second) {
		second = ""
	}
	rows, err := s.db.Reader().ListUJPSimCompanies(ctx, dbq.ListUJPSimCompaniesParams{First: first, Second: second})
	if err != nil {
		return nil, fmt.Errorf("ujpsim: registry: %w", err)
	}
	for _, r := range rows {
		var c ujp.Company
		if err := json.Unmarshal([]byte(r.Company), &c); err != nil {
			return nil, fmt.Errorf("ujpsim: stored registry entry %s: %w", r.TaxNumber, err)
		}
		out[r.TaxNumber] = c
	}
	for _, tax := range []string{first, second} {
		if _, stored := out[tax]; !stored {
			if c, ok := s.seed[tax]; ok && tax != "" {
				out[tax] = c
			}
		}
	}
	return out, nil
}

// RegisterCertificate registers a signing certificate (DER) for a signer of
// a company and returns its serial number (decimal), the X-SERIAL-NUMBER.
func (s *Sim) RegisterCertificate(ctx context.Context, eujpID, edb string, der []byte) (string, error) {
	if !storable(eujpID) || !storable(edb) || eujpID == "" || edb == "" {
		return "", badRequest("eujpId and edb are required, as text without NUL")
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return "", &simError{status: 400, code: "E5004", msg: "Certificate validation failed: " + err.Error()}
	}
	if c.PublicKeyAlgorithm != x509.RSA {
		return "", &simError{status: 400, code: "E5004", msg: fmt.Sprintf("Certificate validation failed: the key is %s; UJP signatures are RS256", c.PublicKeyAlgorithm)}
	}
	serial := c.SerialNumber.String()
	err = s.db.Writer().PutUJPSimCertificate(ctx, dbq.PutUJPSimCertificateParams{Edb: edb, Serial: serial, EujpID: eujpID,
		Der: der, NotAfter: dbTime(c.NotAfter), RegisteredAt: dbTime(s.opts.Now())})
	if err != nil {
		return "", fmt.Errorf("ujpsim: register certificate: %w", err)
	}
	return serial, nil
}

// AddUser makes eujpID a user UJP knows (out of band, as UJP's portal
// does). This simulator does not check users yet; the call is accepted so
// that the service's sandbox set-up can make it.
func (s *Sim) AddUser(ctx context.Context, eujpID string) error {
	if !storable(eujpID) || eujpID == "" {
		return badRequest("eujpId is required, as text without NUL")
	}
	return nil
}

// Grant gives eujpID portal privileges (DP, RD, DA) for company edb. This
// simulator does not check privileges yet; the call is accepted so that the
// service's sandbox set-up can make it.
func (s *Sim) Grant(ctx context.Context, eujpID, edb string, privileges ...string) error {
	if !storable(eujpID) || !storable(edb) || eujpID == "" || edb == "" {
		return badRequest("eujpId and edb are required, as text without NUL")
	}
	for _, p := range privileges {
		switch p {
		case "DP", "RD", "DA":
		default:
			return badRequest("privileges are DP, RD and DA")
		}
	}
	return nil
}

// Document returns the record of a document; ErrNotFound when the
// simulator does not hold it.
func (s *Sim) Document(ctx context.Context, euid string) (Document, error) {
	now, err := s.now(ctx)
	if err != nil {
		return Document{}, err
	}
	if err := s.sweep(ctx, now); err != nil {
		return Document{}, err
	}
	return s.document(ctx, s.db.Reader(), euid)
}

func (s *Sim) document(ctx context.Context, q *dbq.Queries, euid string) (Document, error) {
	if !storable(euid) {
		return Document{}, errNotFound()
	}
	row, err := q.GetUJPSimDocument(ctx, euid)
	if errors.Is(err, sql.ErrNoRows) {
		return Document{}, errNotFound()
	}
	if err != nil {
		return Document{}, fmt.Errorf("ujpsim: document %s: %w", euid, err)
	}
	hist, err := q.ListUJPSimHistory(ctx, euid)
	if err != nil {
		return Document{}, fmt.Errorf("ujpsim: history of %s: %w", euid, err)
	}
	return toDocument(row, hist)
}

func errNotFound() *simError {
	return &simError{status: 404, code: "E4008", msg: "The requested resource could not be found"}
}

func toDocument(row dbq.UjpsimDocument, hist []dbq.UjpsimHistory) (Document, error) {
	d := Document{EUID: row.Euid, DocID: row.DocID, DocType: row.DocType, DocStorno: int(row.DocStorno), SellerTin: row.SellerTin,
		BuyerTin: row.BuyerTin, Status: row.Status, QRLink: row.QrLink, ReceivedAt: row.ReceivedAt.UTC(), DecideBy: row.DecideBy.UTC(),
		References: row.ReferencesEuid, Payload: json.RawMessage(row.Payload), History: make([]ujp.StatusChange, 0, len(hist))}
	for _, h := range hist {
		ch, err := toChange(h)
		if err != nil {
			return Document{}, err
		}
		d.History = append(d.History, ch)
	}
	return d, nil
}

func toChange(h dbq.UjpsimHistory) (ujp.StatusChange, error) {
	var ch ujp.StatusChange
	if err := json.Unmarshal([]byte(h.Change), &ch); err != nil {
		return ch, fmt.Errorf("ujpsim: stored status change %d: %w", h.ID, err)
	}
	ch.ID, ch.EUID = h.ID, h.Euid
	return ch, nil
}

// Documents returns every document a seller issued, oldest first (EUIDs
// are UUIDv7, so their order is their time order).
func (s *Sim) Documents(ctx context.Context, sellerTin string) ([]Document, error) {
	now, err := s.now(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.sweep(ctx, now); err != nil {
		return nil, err
	}
	if !storable(sellerTin) {
		return []Document{}, nil
	}
	q := s.db.Reader()
	rows, err := q.ListUJPSimDocumentsBySeller(ctx, sellerTin)
	if err != nil {
		return nil, fmt.Errorf("ujpsim: documents of %s: %w", sellerTin, err)
	}
	hist, err := q.ListUJPSimHistoryBySeller(ctx, sellerTin)
	if err != nil {
		return nil, fmt.Errorf("ujpsim: history of %s: %w", sellerTin, err)
	}
	byEUID := map[string][]dbq.UjpsimHistory{}
	for _, h := range hist {
		byEUID[h.Euid] = append(byEUID[h.Euid], h)
	}
	out := make([]Document, 0, len(rows))
	for _, r := range rows {
		d, err := toDocument(r, byEUID[r.Euid])
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// DocumentCount is how many documents the simulator holds (a crash test
// checks it to prove there is no duplicate).
func (s *Sim) DocumentCount(ctx context.Context) (int, error) {
	n, err := s.db.Reader().CountUJPSimDocuments(ctx)
	if err != nil {
		return 0, fmt.Errorf("ujpsim: count documents: %w", err)
	}
	return int(n), nil
}

// Decide records a buyer's decision on the buyer's behalf, as if the buyer
// had called accept-reject: only from 01 (E1016 otherwise). It is the
// sandbox simulate endpoint's buyer_accepts and buyer_rejects
// (einvoiceapi.SandboxUJP); a refusal has a UJPCode method.
func (s *Sim) Decide(ctx context.Context, euid string, accept bool, reasonCode, comment string) error {
	now, err := s.now(ctx)
	if err != nil {
		return err
	}
	if err := s.sweep(ctx, now); err != nil {
		return err
	}
	if se := s.decide(ctx, now, euid, "", accept, reasonCode, comment); se != nil {
		return se
	}
	return nil
}

// ForceAutoAccept moves a document in 01 to 04 as if its deadline passed.
func (s *Sim) ForceAutoAccept(ctx context.Context, euid string) error {
	now, err := s.now(ctx)
	if err != nil {
		return err
	}
	d, err := s.document(ctx, s.db.Reader(), euid)
	if err != nil {
		return err
	}
	if d.Status != ujp.StatusSent {
		return errNotNew()
	}
	moved := false
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		moved, err = s.move(ctx, tx, docRef{d.EUID, d.SellerTin, d.BuyerTin}, ujp.StatusSent, ujp.StatusAutoAccepted, now,
			ujp.StatusChange{Comment: strp("Document auto accept after expiration date")})
		return err
	})
	if err != nil {
		return err
	}
	if !moved {
		return errNotNew()
	}
	return nil
}

// AutoAccept is ForceAutoAccept under the name of the sandbox simulate
// endpoint's deadline_passes (einvoiceapi.SandboxUJP).
func (s *Sim) AutoAccept(ctx context.Context, euid string) error { return s.ForceAutoAccept(ctx, euid) }

func errNotNew() *simError {
	return &simError{status: 409, code: "E1016", msg: "Document is not in status NEW. Cannot be accepted, rejected, or cancelled."}
}

func strp(s string) *string { return &s }

// decideByFor is the instant the buyer's deadline ends: the end of the
// day einvoice.DecideBy names for the supply (docTurnoverDate, else docDate),
// Skopje time. UJP does not publish its rule (research §6.1); this is our
// spec's, the same function the service counts days with.
func decideByFor(doc *ujpdoc.Document, received time.Time) time.Time {
	day := doc.Header.DocTurnoverDate
	if day == "" {
		day = doc.Header.DocDate
	}
	t, err := time.ParseInLocation(time.DateOnly, day, ujpdoc.Skopje)
	if err != nil {
		t = received.In(ujpdoc.Skopje)
	}
	return einvoice.DeadlineEnd(einvoice.DecideBy(t))
}

// sweepBatch bounds the documents one sweep transaction moves.
const sweepBatch = 100

// sweep auto-accepts documents past their deadline, as of now. It is a
// read of an index when nothing is due; each move is conditional, so two
// processes sweeping at once move a document once.
func (s *Sim) sweep(ctx context.Context, now time.Time) error {
	for {
		due, err := s.db.Reader().UJPSimDueDocuments(ctx, dbq.UJPSimDueDocumentsParams{Now: dbTime(now), MaxRows: sweepBatch})
		if err != nil {
			return fmt.Errorf("ujpsim: due documents: %w", err)
		}
		if len(due) == 0 {
			return nil
		}
		err = s.db.InTx(ctx, func(tx *store.Tx) error {
			for _, d := range due {
				// The move is recorded when the deadline ended, or when
				// the document arrived if it arrived later (a late
				// invoice): a change never precedes its document.
				at := d.DecideBy
				if d.ReceivedAt.After(at) {
					at = d.ReceivedAt
				}
				if _, err := s.move(ctx, tx, docRef{d.Euid, d.SellerTin, d.BuyerTin}, ujp.StatusSent, ujp.StatusAutoAccepted,
					at, ujp.StatusChange{Comment: strp("Document auto accept after expiration date")}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(due) < sweepBatch {
			return nil
		}
	}
}

func (s *Sim) statusName(code string) string {
	if c, ok := s.cb.Lookup(ujpdoc.CBDocumentStatuses, code); ok {
		return c.Name
	}
	return ""
}

// docRef names a document and its parties, which its history rows repeat.
type docRef struct{ euid, seller, buyer string }

// move changes a document's status from from to to and records the change
// at at, in tx; false (and nothing written) when the document was not in
// from any more.
func (s *Sim) move(ctx context.Context, tx *store.Tx, d docRef, from, to string, at time.Time, extra ujp.StatusChange) (bool, error) {
	n, err := tx.MoveUJPSimDocument(ctx, dbq.MoveUJPSimDocumentParams{Euid: d.euid, FromStatus: from, ToStatus: to})
	if err != nil {
		return false, fmt.Errorf("ujpsim: move %s to %s: %w", d.euid, to, err)
	}
	if n == 0 {
		return false, nil
	}
	return true, s.record(ctx, tx, d, from, to, at, extra)
}

// record writes a status change of d at at.
func (s *Sim) record(ctx context.Context, tx *store.Tx, d docRef, from, to string, at time.Time, extra ujp.StatusChange) error {
	// UJP's timestamps have seconds; the stored time is the one the
	// change feeds are filtered by, so it is the same second.
	at = dbTime(at).Truncate(time.Second)
	ch := extra
	ch.ID, ch.EUID = 0, ""
	if from != "" {
		ch.OldStatus = ujp.StatusRef{Code: from, Name: s.statusName(from)}
	}
	ch.NewStatus = ujp.StatusRef{Code: to, Name: s.statusName(to)}
	ch.Timestamp = ujpdoc.FormatTimestamp(at)
	b, err := json.Marshal(ch)
	if err != nil {
		return fmt.Errorf("ujpsim: encode status change: %w", err)
	}
	if _, err := tx.InsertUJPSimHistory(ctx, dbq.InsertUJPSimHistoryParams{Euid: d.euid, SellerTin: d.seller, BuyerTin: d.buyer,
		At: at, Change: string(b)}); err != nil {
		return fmt.Errorf("ujpsim: record status change of %s: %w", d.euid, err)
	}
	return nil
}

// decide applies a buyer decision; buyerTin "" skips the ownership check
// (the admin acting for the buyer).
func (s *Sim) decide(ctx context.Context, now time.Time, euid, buyerTin string, accept bool, reasonCode, comment string) error {
	d, err := s.document(ctx, s.db.Reader(), euid)
	var se *simError
	switch {
	case errors.As(err, &se):
		return se
	case err != nil:
		return err
	case buyerTin != "" && d.BuyerTin != buyerTin:
		return errNotFound()
	case d.Status != ujp.StatusSent:
		return errNotNew()
	}
	ch := ujp.StatusChange{}
	if comment != "" {
		ch.Comment = strp(comment)
	}
	to := ujp.StatusAccepted
	if !accept {
		r, ok := s.cb.RejectReason(reasonCode)
		if !ok {
			return &simError{status: 400, code: "E1002", msg: "Reject reason not found", prop: "rejectReasonCode", codebook: ujpdoc.CBRejectReasons}
		}
		ch.RejectReasonCode, ch.RejectReason = strp(r.Code), strp(r.Name)
		to = ujp.StatusRejected
	}
	moved := false
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		moved, err = s.move(ctx, tx, docRef{d.EUID, d.SellerTin, d.BuyerTin}, ujp.StatusSent, to, now, ch)
		return err
	})
	if err != nil {
		return err
	}
	if !moved {
		return errNotNew() // decided (or auto-accepted) by another call meanwhile
	}
	return nil
}

// simError is an answer in UJP's error envelope.
type simError struct {
	status   int
	code     string
	msg      string
	prop     string
	codebook string
	items    []ujp.ErrorItem
}

func (e *simError) Error() string { return e.code + " " + e.msg }

// badRequest is the simulator's refusal of a bad control request (E4000).
func badRequest(msg string) *simError {
	return &simError{status: 400, code: "E4000", msg: "Bad request: " + msg}
}

// UJPCode is the simulator's (UJP's) error code: what the sandbox simulate
// endpoint reports when the simulator refuses a transition.
func (e *simError) UJPCode() string { return e.code }

// Is makes errors.Is(err, ErrNotFound) true for E4008.
func (e *simError) Is(target error) bool { return target == ErrNotFound && e.code == "E4008" }
