// Package ujpsim is a sandbox simulator of UJP's e-Faktura API: an
// http.Handler serving the same paths, headers, bodies and envelopes as the
// real service (see internal/ujp), with in-memory state, real validation, and
// fault injection for testing how the service copes with UJP misbehaving.
//
// What it checks before it assigns an EUID, as UJP does: the certificate
// registered for the caller's company (X-EDB, X-SERIAL-NUMBER, X-EUJP-ID),
// the compact JWS (RS256 only) against that certificate, requestTimestamp
// within ±5 minutes of its clock in Skopje time, the document's required
// fields, codebook codes and totals (ujpdoc.Validate), the parties against
// its registry, and a repeated docId (E1023, nothing new created).
//
// It runs in-process (New, then Handler) or as its own server (`denar
// ujp-sim`); with Options.StatePath its documents survive a restart. The
// seeded registry and the /_sim admin endpoints are described in
// docs/sandbox.md.
package ujpsim

import (
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/ujp"
)

// Options configure a simulator. The zero value is usable.
type Options struct {
	// Now is the simulator's base clock (default time.Now); AdvanceClock
	// adds to it.
	Now func() time.Time
	// QRBase prefixes qr_link (default https://efakturatest.ujp.gov.mk);
	// qr_link is QRBase + "/euid/" + EUID, as UJP's.
	QRBase string
	// StatePath, if set, is a JSON file the state is loaded from at start
	// and written to after every change.
	StatePath string
	// Codebooks default to ujpdoc.Snapshot().
	Codebooks *ujpdoc.Codebooks
	// Companies replace the seeded registry when not nil.
	Companies []ujp.Company
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// SlowRegistryDelay is how long the registry takes to answer for
	// TaxSlowRegistry; default DefaultSlowRegistryDelay.
	SlowRegistryDelay time.Duration
}

// DefaultSlowRegistryDelay is how long the registry takes for
// TaxSlowRegistry: longer than the service's inline validation budget
// (1 s), shorter than its registry timeout (10 s).
const DefaultSlowRegistryDelay = 3 * time.Second

// Well-known sandbox tax numbers (docs/sandbox.md).
const (
	TaxSeller       = "4030000000001" // active VAT payer, Skopje
	TaxBuyer        = "4030000000002" // active VAT payer, Skopje
	TaxSmallBiz     = "4030000000003" // registered, not a VAT payer, Bitola
	TaxNeverExisted = "4039999999999" // never registered: E1000
	TaxNoAnswer     = "4039999999998" // the registry never answers
	TaxSlowRegistry = "4030000000004" // the registry answers after SlowRegistryDelay
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

type certificate struct {
	EUJPID   string    `json:"eujpId"`
	EDB      string    `json:"edb"`
	Serial   string    `json:"serial"`
	DER      []byte    `json:"der"`
	NotAfter time.Time `json:"notAfter"`
	cert     *x509.Certificate
}

// state is everything that survives a restart.
type state struct {
	Documents   map[string]*Document `json:"documents"`
	ByDocID     map[string]string    `json:"byDocId"` // sellerTin|docId → EUID
	Certs       []*certificate       `json:"certificates"`
	Companies   []ujp.Company        `json:"companies"`
	ClockOffset time.Duration        `json:"clockOffsetNs"`
	NextID      int64                `json:"nextHistoryId"`
}

// Sim is the simulator. Its methods are safe for concurrent use.
type Sim struct {
	opts Options
	cb   *ujpdoc.Codebooks
	log  *slog.Logger

	mu       sync.Mutex
	st       state
	faults   Faults
	limiters map[string]*rate.Limiter
}

// New returns a simulator, loading Options.StatePath if it exists.
func New(opts Options) (*Sim, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.QRBase == "" {
		opts.QRBase = "https://efakturatest.ujp.gov.mk"
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.SlowRegistryDelay <= 0 {
		opts.SlowRegistryDelay = DefaultSlowRegistryDelay
	}
	cb := opts.Codebooks
	if cb == nil {
		cb = ujpdoc.Snapshot()
	}
	s := &Sim{opts: opts, cb: cb, log: opts.Logger, limiters: map[string]*rate.Limiter{}}
	s.st = state{Documents: map[string]*Document{}, ByDocID: map[string]string{}, Companies: opts.Companies, NextID: 1}
	if s.st.Companies == nil {
		s.st.Companies = SeedCompanies()
	}
	if opts.StatePath != "" {
		b, err := os.ReadFile(opts.StatePath)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("ujpsim: read state: %w", err)
		default:
			if err := json.Unmarshal(b, &s.st); err != nil {
				return nil, fmt.Errorf("ujpsim: state file %s: %w", opts.StatePath, err)
			}
			for _, c := range s.st.Certs {
				if c.cert, err = x509.ParseCertificate(c.DER); err != nil {
					return nil, fmt.Errorf("ujpsim: state file %s: certificate %s: %w", opts.StatePath, c.Serial, err)
				}
			}
		}
	}
	return s, nil
}

// now is the simulator's clock: the base clock plus any advance.
func (s *Sim) now() time.Time { return s.opts.Now().Add(s.st.ClockOffset) }

// Now returns the simulator's clock.
func (s *Sim) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now()
}

// persist writes the state file; called with s.mu held after a change.
func (s *Sim) persist() {
	if s.opts.StatePath == "" {
		return
	}
	b, err := json.Marshal(&s.st)
	if err == nil {
		tmp := s.opts.StatePath + ".tmp"
		if err = os.WriteFile(tmp, b, 0o600); err == nil {
			err = os.Rename(tmp, s.opts.StatePath)
		}
	}
	if err != nil {
		// The simulator keeps serving from memory; only a restart would lose
		// this change.
		s.log.Error("ujpsim: write state", "path", filepath.Clean(s.opts.StatePath), "err", err)
	}
}

// SetFaults replaces the fault configuration.
func (s *Sim) SetFaults(f Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = f
}

// Faults returns the fault configuration.
func (s *Sim) Faults() Faults {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faults
}

// SetOutage starts or ends an outage.
func (s *Sim) SetOutage(on bool) { s.update(func(f *Faults) { f.Outage = on }) }

// SetLatency adds d before every API call is handled.
func (s *Sim) SetLatency(d time.Duration) { s.update(func(f *Faults) { f.Latency = d }) }

// SetErrorRate makes a fraction (0…1) of API calls fail with 500.
func (s *Sim) SetErrorRate(r float64) { s.update(func(f *Faults) { f.ErrorRate = r }) }

// SetRateLimit turns UJP's 1 request/second per user limit on or off.
func (s *Sim) SetRateLimit(on bool) { s.update(func(f *Faults) { f.RateLimit = on }) }

// RejectNextSends makes the next n sends fail with a terminal UJP code.
func (s *Sim) RejectNextSends(n int, code, message string) {
	s.update(func(f *Faults) { f.RejectSends = &ForcedRejection{Code: code, Message: message, Count: n} })
}

// SetSellerOutage starts or ends an outage seen only by calls with X-EDB edb.
func (s *Sim) SetSellerOutage(edb string, on bool) {
	s.update(func(f *Faults) {
		m := make(map[string]bool, len(f.OutageSellers)+1)
		for k, v := range f.OutageSellers {
			m[k] = v
		}
		if on {
			m[edb] = true
		} else {
			delete(m, edb)
		}
		f.OutageSellers = m
	})
}

// RejectNextSellerSends makes the next n sends of seller edb fail with a
// terminal UJP code.
func (s *Sim) RejectNextSellerSends(edb string, n int, code, message string) {
	s.update(func(f *Faults) {
		m := make(map[string]ForcedRejection, len(f.RejectSellers)+1)
		for k, v := range f.RejectSellers {
			m[k] = v
		}
		m[edb] = ForcedRejection{Code: code, Message: message, Count: n}
		f.RejectSellers = m
	})
}

func (s *Sim) update(fn func(*Faults)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(&s.faults)
}

// AdvanceClock moves the simulator's clock forward (documents past their
// decision deadline are auto-accepted on the next call).
func (s *Sim) AdvanceClock(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.ClockOffset += d
	s.sweep()
	s.persist()
}

// AddCompany adds or replaces a registry entry.
func (s *Sim) AddCompany(c ujp.Company) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.st.Companies {
		if s.st.Companies[i].TaxNumber == c.TaxNumber {
			s.st.Companies[i] = c
			s.persist()
			return
		}
	}
	s.st.Companies = append(s.st.Companies, c)
	s.persist()
}

func (s *Sim) company(tax string) (ujp.Company, bool) {
	for _, c := range s.st.Companies {
		if c.TaxNumber == tax {
			return c, true
		}
	}
	return ujp.Company{}, false
}

// RegisterCertificate registers a signing certificate (DER) for a signer of
// a company and returns its serial number (decimal), the X-SERIAL-NUMBER.
func (s *Sim) RegisterCertificate(eujpID, edb string, der []byte) (string, error) {
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return "", fmt.Errorf("parse certificate: %w", err)
	}
	if c.PublicKeyAlgorithm != x509.RSA {
		return "", fmt.Errorf("certificate key is %s; UJP signatures are RS256", c.PublicKeyAlgorithm)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	serial := c.SerialNumber.String()
	for _, old := range s.st.Certs {
		if old.EDB == edb && old.Serial == serial {
			old.EUJPID, old.DER, old.cert, old.NotAfter = eujpID, der, c, c.NotAfter
			s.persist()
			return serial, nil
		}
	}
	s.st.Certs = append(s.st.Certs, &certificate{EUJPID: eujpID, EDB: edb, Serial: serial, DER: der, NotAfter: c.NotAfter, cert: c})
	s.persist()
	return serial, nil
}

// Document returns a copy of the record of a document.
func (s *Sim) Document(euid string) (Document, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep()
	d, ok := s.st.Documents[euid]
	if !ok {
		return Document{}, false
	}
	c := *d
	c.History = append([]ujp.StatusChange(nil), d.History...)
	return c, true
}

// Documents returns copies of every document a seller issued, oldest first
// (EUIDs are UUIDv7, so their order is their time order).
func (s *Sim) Documents(sellerTin string) []Document {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep()
	var out []Document
	for _, d := range s.st.Documents {
		if d.SellerTin == sellerTin {
			c := *d
			c.History = append([]ujp.StatusChange(nil), d.History...)
			out = append(out, c)
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].EUID < out[j-1].EUID; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// DocumentCount is how many documents the simulator holds (a crash test
// checks it to prove there is no duplicate).
func (s *Sim) DocumentCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.st.Documents)
}

// Decide records a buyer's decision on the buyer's behalf, as if the buyer
// had called accept-reject: only from 01 (E1016 otherwise).
func (s *Sim) Decide(euid string, accept bool, reasonCode, comment string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep()
	if err := s.decide(euid, "", accept, reasonCode, comment); err != nil {
		return err
	}
	s.persist()
	return nil
}

// ForceAutoAccept moves a document in 01 to 04 as if its deadline passed.
func (s *Sim) ForceAutoAccept(euid string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.st.Documents[euid]
	if !ok {
		return &simError{status: 404, code: "E4008", msg: "The requested resource could not be found"}
	}
	if d.Status != ujp.StatusSent {
		return &simError{status: 409, code: "E1016", msg: "Document is not in status NEW. Cannot be accepted, rejected, or cancelled."}
	}
	s.move(d, ujp.StatusAutoAccepted, ujp.StatusChange{Comment: strp("Document auto accept after expiration date")})
	s.persist()
	return nil
}

func strp(s string) *string { return &s }

// decideByFor is the buyer's deadline: the end of the 10th day of the month
// after the supply (docTurnoverDate, else docDate), Skopje time. UJP does not
// publish its rule (research §6.1); this is our spec's.
func decideByFor(doc *ujpdoc.Document, received time.Time) time.Time {
	day := doc.Header.DocTurnoverDate
	if day == "" {
		day = doc.Header.DocDate
	}
	t, err := time.ParseInLocation(time.DateOnly, day, ujpdoc.Skopje)
	if err != nil {
		t = received.In(ujpdoc.Skopje)
	}
	return time.Date(t.Year(), t.Month()+1, 11, 0, 0, 0, 0, ujpdoc.Skopje)
}

// sweep auto-accepts documents past their deadline; called with s.mu held.
func (s *Sim) sweep() {
	now := s.now()
	changed := false
	for _, d := range s.st.Documents {
		if d.Status == ujp.StatusSent && d.DocStorno != ujpdoc.StornoVoid && !now.Before(d.DecideBy) {
			s.moveAt(d, ujp.StatusAutoAccepted, d.DecideBy, ujp.StatusChange{Comment: strp("Document auto accept after expiration date")})
			changed = true
		}
	}
	if changed {
		s.persist()
	}
}

func (s *Sim) statusName(code string) string {
	if c, ok := s.cb.Lookup(ujpdoc.CBDocumentStatuses, code); ok {
		return c.Name
	}
	return ""
}

// move records a status change at the simulator's current time.
func (s *Sim) move(d *Document, to string, extra ujp.StatusChange) { s.moveAt(d, to, s.now(), extra) }

func (s *Sim) moveAt(d *Document, to string, at time.Time, extra ujp.StatusChange) {
	ch := extra
	ch.ID = s.st.NextID
	s.st.NextID++
	ch.EUID = d.EUID
	if d.Status != "" {
		ch.OldStatus = ujp.StatusRef{Code: d.Status, Name: s.statusName(d.Status)}
	}
	ch.NewStatus = ujp.StatusRef{Code: to, Name: s.statusName(to)}
	ch.Timestamp = ujpdoc.FormatTimestamp(at)
	d.Status = to
	d.History = append(d.History, ch)
}

// decide applies a buyer decision; buyerTin "" skips the ownership check
// (the admin acting for the buyer). Called with s.mu held.
func (s *Sim) decide(euid, buyerTin string, accept bool, reasonCode, comment string) error {
	d, ok := s.st.Documents[euid]
	if !ok || (buyerTin != "" && d.BuyerTin != buyerTin) {
		return &simError{status: 404, code: "E4008", msg: "The requested resource could not be found"}
	}
	if d.Status != ujp.StatusSent {
		return &simError{status: 409, code: "E1016", msg: "Document is not in status NEW. Cannot be accepted, rejected, or cancelled."}
	}
	ch := ujp.StatusChange{}
	if comment != "" {
		ch.Comment = strp(comment)
	}
	if accept {
		s.move(d, ujp.StatusAccepted, ch)
		return nil
	}
	r, ok := s.cb.RejectReason(reasonCode)
	if !ok {
		return &simError{status: 400, code: "E1002", msg: "Reject reason not found", prop: "rejectReasonCode", codebook: ujpdoc.CBRejectReasons}
	}
	ch.RejectReasonCode, ch.RejectReason = strp(r.Code), strp(r.Name)
	s.move(d, ujp.StatusRejected, ch)
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
