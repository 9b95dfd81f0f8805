// Package ujpsim is a sandbox simulator of UJP's e-Faktura API: an
// http.Handler serving UJP's paths, headers, bodies and envelopes, written
// from UJP's published reference (/work/shared/reference/ujp, cited as
// file:line) and not from the service's own gateway. It shares no code with
// the gateway (internal/ujp) or the document package (einvoice/...):
// internal/archtest holds it apart, so that where the two read UJP
// differently a test sees it.
//
// It is as strict as the reference: identity headers on every service,
// users, certificates and portal privileges registered only out of band
// (Go methods, the /_sim control API, `denar ujp-sim` commands), one
// request per second per user on every call, the document's required
// fields, code lists, totals, tax indicators, dates, parties and storno
// rules checked with its own code (validate.go, totals.go), and a repeated
// docId refused with UJP's E1023 text and no EUID. docs/sandbox.md
// describes what it checks and the faults it can inject.
//
// Its state (documents, statuses and history, users, certificates,
// privileges, registry entries added through /_sim, faults, the business
// clock and the rate-limit slots) lives in the store (tables ujpsim_*):
// every simulator on one database is the same simulated UJP, across
// processes. Everything that must happen once is a single conditional
// statement, so it holds on both engines.
//
// A simulator on the service's own store writes through the store's own
// transactions, so it must never be called from inside a store
// transaction (on SQLite the simulator's write would wait for it forever).
package ujpsim

import (
	"context"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/denar-mk/denar/ident"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// Options configure a simulator. The zero value is usable.
type Options struct {
	// Now is the simulator's base clock (default time.Now); AdvanceClock
	// adds to it.
	Now func() time.Time
	// QRBase prefixes qr_link (default https://efakturatest.ujp.gov.mk).
	QRBase string
	// ControlToken is the bearer token of the /_sim control API. Empty:
	// /_sim refuses everything and the simulator is driven by its Go
	// methods only.
	ControlToken string
	// Companies replace the seeded registry when not nil. Entries added
	// with AddCompany are stored and take precedence.
	Companies []Company
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// SlowRegistryDelay is how long the registry takes for
	// TaxSlowRegistry; default DefaultSlowRegistryDelay.
	SlowRegistryDelay time.Duration
	// Window is the per-user rate window: one request per Window per
	// X-EUJP-ID, on every call (api-specification.txt:111). Default (and
	// any non-positive value) DefaultWindow; it cannot be switched off.
	Window time.Duration
	// SerialFormat is how X-SERIAL-NUMBER must be written: "decimal"
	// (default) or "hex". The reference does not say; a serial in the
	// other form is E4021.
	SerialFormat string
}

// DefaultWindow is UJP's one request per second per user.
const DefaultWindow = time.Second

// Serial formats of Options.SerialFormat.
const (
	SerialDecimal = "decimal"
	SerialHex     = "hex"
)

// DefaultSlowRegistryDelay is how long the registry takes for
// TaxSlowRegistry: longer than the service's inline validation budget
// (1 s), shorter than its registry timeout (10 s).
const DefaultSlowRegistryDelay = 3 * time.Second

// Well-known sandbox tax numbers (docs/sandbox.md); all carry valid ЕДБ
// check digits.
const (
	TaxSeller       = "4030000000001" // active VAT payer, Skopje
	TaxBuyer        = "4030000000010" // active VAT payer, Skopje
	TaxSmallBiz     = "4030000000028" // registered, not a VAT payer, Bitola
	TaxNeverExisted = "4039999999997" // never registered: E1000
	TaxNoAnswer     = "4039999999989" // the registry never answers
	TaxSlowRegistry = "4030000000036" // the registry answers after SlowRegistryDelay
)

// Portal privileges (api-specification.txt:836, 1143, 1249, 1396).
const (
	PrivilegePDF     = "DP" // the PDF of a document
	PrivilegePayload = "RD" // a document's JSON payload
	PrivilegeASiC    = "DA" // the ASiC container
)

// SeedCompanies is the fictitious registry every simulator starts with.
func SeedCompanies() []Company {
	vat := func(s string) *string { return &s }
	mk := 132
	return []Company{
		{TaxNumber: TaxSeller, VatNumber: vat("МК" + TaxSeller), RegistrationNumber: "7000001", Name: "Тест Продавач ДООЕЛ Скопје",
			Address: CompanyAddress{Street: "бул. Партизански одреди", Number: "1", City: "Скопје", Zip: "1000"}, CountryID: &mk, Golemina: "1", CountryCode: "MK"},
		{TaxNumber: TaxBuyer, VatNumber: vat("МК" + TaxBuyer), RegistrationNumber: "7000002", Name: "Тест Купувач ДОО Скопје",
			Address: CompanyAddress{Street: "ул. Македонија", Number: "2", City: "Скопје", Zip: "1000"}, CountryID: &mk, Golemina: "2", CountryCode: "MK"},
		{TaxNumber: TaxSmallBiz, RegistrationNumber: "7000003", Name: "Тест Занаетчија Битола",
			Address: CompanyAddress{Street: "ул. Широк Сокак", Number: "3", City: "Битола", Zip: "7000"}, CountryID: &mk, Golemina: "0", CountryCode: "MK"},
		{TaxNumber: TaxSlowRegistry, VatNumber: vat("МК" + TaxSlowRegistry), RegistrationNumber: "7000004", Name: "Тест Бавен Купувач ДОО Куманово",
			Address: CompanyAddress{Street: "ул. Октомвриска", Number: "4", City: "Куманово", Zip: "1300"}, CountryID: &mk, Golemina: "2", CountryCode: "MK"},
		{TaxNumber: TaxSupplier, VatNumber: vat("МК" + TaxSupplier), RegistrationNumber: "7000005", Name: "Тест Добавувач ДООЕЛ Тетово",
			Address: CompanyAddress{Street: "ул. Илинденска", Number: "5", City: "Тетово", Zip: "1200"}, CountryID: &mk, Golemina: "1", CountryCode: "MK"},
	}
}

// Document is the simulator's record of an accepted document.
type Document struct {
	EUID       string          `json:"euid"`
	DocID      string          `json:"docId"`
	DocType    string          `json:"docType"`
	DocStorno  int             `json:"docStorno"`
	SellerTin  string          `json:"sellerTin"`
	BuyerTin   string          `json:"buyerTin"`
	Status     string          `json:"status"`
	QRLink     string          `json:"qrLink"`
	ReceivedAt time.Time       `json:"receivedAt"`
	DecideBy   time.Time       `json:"decideBy"`
	References string          `json:"references,omitempty"` // EUID of the voided or corrected original
	Payload    json.RawMessage `json:"payload"`              // the signed payload, byte for byte
	History    []StatusChange  `json:"history"`
}

// ErrNotFound is the simulator's E4008 for an EUID it does not hold;
// errors.Is finds it in the errors of Document, Decide and AutoAccept.
var ErrNotFound = errors.New("ujpsim: no such document")

// Sim is the simulator. Its methods are safe for concurrent use, also by
// several simulators (processes) on one store.
type Sim struct {
	db      *store.DB
	opts    Options
	lists   *codeLists // as served
	changed *codeLists // after the codeListChange fault
	log     *slog.Logger
	seed    map[string]Company
	// supplier is the fictitious supplier's registration (buyer.go).
	supplier supplierOnce
}

// New returns a simulator whose state is in db (migrated). Simulators on
// the same database are one simulated UJP.
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
	if opts.SlowRegistryDelay <= 0 {
		opts.SlowRegistryDelay = DefaultSlowRegistryDelay
	}
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	switch opts.SerialFormat {
	case "":
		opts.SerialFormat = SerialDecimal
	case SerialDecimal, SerialHex:
	default:
		return nil, fmt.Errorf("ujpsim: serial format %q: want %q or %q", opts.SerialFormat, SerialDecimal, SerialHex)
	}
	cl, err := loadCodeLists()
	if err != nil {
		return nil, err
	}
	companies := opts.Companies
	if companies == nil {
		companies = SeedCompanies()
	}
	seed := make(map[string]Company, len(companies))
	for _, c := range companies {
		seed[c.TaxNumber] = c
	}
	return &Sim{db: db, opts: opts, lists: cl, changed: cl.changed(), log: opts.Logger, seed: seed}, nil
}

// dbTime is a time as stored: UTC, microseconds.
func dbTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// storable reports whether s can be stored in a TEXT column of either
// engine: valid UTF-8 without NUL.
func storable(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// lookupKey makes a header value usable as a lookup key whatever it holds.
func lookupKey(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// callKey carries what an API call read when it arrived (callState).
type callKey struct{}

type callState struct {
	arrived        time.Time     // stamped first thing: the rate limit's clock
	skew           time.Duration // the clock-skew fault (SetClockSkew)
	clockOffset    time.Duration
	pendingRejects bool
	changedLists   bool
}

// clock is UJP's real clock at the call's arrival: what server-time says
// and what a requestTimestamp is judged by.
func (st callState) clock() time.Time { return st.arrived.Add(st.skew) }

func stateOf(ctx context.Context) (callState, bool) {
	st, ok := ctx.Value(callKey{}).(callState)
	return st, ok
}

// listsFor is the code lists a call sees: the changed ones when the
// caller's company has the codeListChange fault.
func (s *Sim) listsFor(ctx context.Context) *codeLists {
	if st, ok := stateOf(ctx); ok && st.changedLists {
		return s.changed
	}
	return s.lists
}

// now is the business clock: the base clock plus the stored offset.
func (s *Sim) now(ctx context.Context) (time.Time, error) {
	if st, ok := stateOf(ctx); ok {
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

func wrap(op string, err error) error {
	if err != nil {
		return fmt.Errorf("ujpsim: %s: %w", op, err)
	}
	return nil
}

// AdvanceClock moves the business clock forward; documents past their
// decision deadline are auto-accepted at once.
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

// checkEDB refuses what an operator gives as a company's tax number unless
// it is an ЕДБ: 13 digits, the 13th the check digit of the first twelve
// (ident.EDB; docs/decisions.md, "ЕДБ check digits"). UJP's portal knows
// only real companies; the documents the simulator receives are checked
// by its own reading of UJP, which states no such rule.
func checkEDB(field, edb string) *simError {
	if err := ident.EDB(edb); err != nil {
		msg := "is not an ЕДБ: 13 digits"
		if errors.Is(err, ident.ErrChecksum) {
			msg = "does not carry its check digit"
		}
		return badRequest(fmt.Sprintf("%s %q %s (the 13th digit is the check digit of the first twelve)", field, edb, msg))
	}
	return nil
}

// AddCompany adds or replaces a registry entry; its taxNumber must be an
// ЕДБ with its check digit.
func (s *Sim) AddCompany(ctx context.Context, c Company) error {
	if e := checkEDB("taxNumber", c.TaxNumber); e != nil {
		return e
	}
	if c.Name == "" || !storable(c.Name) {
		return badRequest("a name is required")
	}
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("ujpsim: add company: %w", err)
	}
	return wrap("add company", s.db.Writer().PutUJPSimCompany(ctx, dbq.PutUJPSimCompanyParams{TaxNumber: c.TaxNumber,
		Company: string(b), UpdatedAt: dbTime(s.opts.Now())}))
}

// company looks a tax number up: stored entries, then the seeded ones.
func (s *Sim) company(ctx context.Context, tax string) (Company, bool, error) {
	found, err := s.companies(ctx, tax, tax)
	if err != nil {
		return Company{}, false, err
	}
	c, ok := found[tax]
	return c, ok, nil
}

// companies looks two tax numbers up at once.
func (s *Sim) companies(ctx context.Context, first, second string) (registry, error) {
	out := registry{}
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
		var c Company
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

// validEUJPID bounds an EUJP id: text, 1 to 100 characters.
func validEUJPID(id string) bool {
	return id != "" && storable(id) && utf8.RuneCountInString(id) <= 100 && strings.TrimSpace(id) == id
}

// AddUser registers a user (an EUJP id) as UJP's portal does; idempotent.
func (s *Sim) AddUser(ctx context.Context, eujpID string) error {
	if !validEUJPID(eujpID) {
		return badRequest("an EUJP id is 1 to 100 characters of text without surrounding spaces")
	}
	return wrap("add user", s.db.Writer().PutUJPSimUser(ctx, dbq.PutUJPSimUserParams{EujpID: eujpID, CreatedAt: dbTime(s.opts.Now())}))
}

// userKnown reports whether eujpID is a registered user.
func (s *Sim) userKnown(ctx context.Context, eujpID string) (bool, error) {
	n, err := s.db.Reader().CountUJPSimUser(ctx, lookupKey(eujpID))
	return n > 0, err
}

// RegisterCertificate registers a signing certificate (DER) of user eujpID
// for company edb (an ЕДБ with its check digit), adding the user if
// unknown, and returns its serial number as X-SERIAL-NUMBER must carry it
// (Options.SerialFormat). Registering the same certificate again is a
// no-op.
func (s *Sim) RegisterCertificate(ctx context.Context, eujpID, edb string, der []byte) (string, error) {
	if !validEUJPID(eujpID) {
		return "", badRequest("an EUJP id is 1 to 100 characters of text without surrounding spaces")
	}
	if e := checkEDB("edb", edb); e != nil {
		return "", e
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return "", &simError{status: 400, code: "E5004", msg: "Certificate validation failed: " + err.Error()}
	}
	if c.PublicKeyAlgorithm != x509.RSA {
		return "", &simError{status: 400, code: "E5004", msg: fmt.Sprintf("Certificate validation failed: the key is %s; signatures are RS256", c.PublicKeyAlgorithm)}
	}
	if c.SerialNumber.Sign() <= 0 {
		return "", &simError{status: 400, code: "E5004", msg: "Certificate validation failed: the serial number is not positive"}
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.PutUJPSimUser(ctx, dbq.PutUJPSimUserParams{EujpID: eujpID, CreatedAt: dbTime(s.opts.Now())}); err != nil {
			return err
		}
		return tx.PutUJPSimCertificate(ctx, dbq.PutUJPSimCertificateParams{Edb: edb, Serial: c.SerialNumber.String(), EujpID: eujpID,
			Der: der, NotAfter: dbTime(c.NotAfter), RegisteredAt: dbTime(s.opts.Now())})
	})
	if err != nil {
		return "", fmt.Errorf("ujpsim: register certificate: %w", err)
	}
	return s.FormatSerial(c.SerialNumber), nil
}

// FormatSerial writes a certificate serial as X-SERIAL-NUMBER must carry
// it: decimal, or upper-case hexadecimal.
func (s *Sim) FormatSerial(n *big.Int) string {
	if s.opts.SerialFormat == SerialHex {
		return strings.ToUpper(n.Text(16))
	}
	return n.String()
}

// parseSerial reads X-SERIAL-NUMBER in the configured format only.
func (s *Sim) parseSerial(v string) (*big.Int, bool) {
	if v == "" || len(v) > 100 {
		return nil, false
	}
	digits := "0123456789"
	base := 10
	if s.opts.SerialFormat == SerialHex {
		digits, base = "0123456789abcdefABCDEF", 16
	}
	for _, r := range v {
		if !strings.ContainsRune(digits, r) {
			return nil, false
		}
	}
	n, ok := new(big.Int).SetString(v, base)
	return n, ok && n.Sign() > 0
}

func validPrivilege(p string) bool {
	return p == PrivilegePDF || p == PrivilegePayload || p == PrivilegeASiC
}

// Grant gives user eujpID portal privileges for company edb (DP, RD, DA).
// The user must be registered.
func (s *Sim) Grant(ctx context.Context, eujpID, edb string, privileges ...string) error {
	return s.privileges(ctx, eujpID, edb, privileges, true)
}

// Revoke takes portal privileges away.
func (s *Sim) Revoke(ctx context.Context, eujpID, edb string, privileges ...string) error {
	return s.privileges(ctx, eujpID, edb, privileges, false)
}

func (s *Sim) privileges(ctx context.Context, eujpID, edb string, privileges []string, grant bool) error {
	if !validEUJPID(eujpID) || len(privileges) == 0 {
		return badRequest("an EUJP id and at least one privilege (DP, RD, DA) are required")
	}
	if e := checkEDB("edb", edb); e != nil {
		return e
	}
	for _, p := range privileges {
		if !validPrivilege(p) {
			return badRequest(fmt.Sprintf("privilege %q: want DP, RD or DA", p))
		}
	}
	if known, err := s.userKnown(ctx, eujpID); err != nil {
		return fmt.Errorf("ujpsim: privileges: %w", err)
	} else if !known {
		return &simError{status: 404, code: "E1010", msg: "User not found"}
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		for _, p := range privileges {
			var err error
			if grant {
				err = tx.PutUJPSimPrivilege(ctx, dbq.PutUJPSimPrivilegeParams{EujpID: eujpID, Edb: edb, Privilege: p})
			} else {
				err = tx.DeleteUJPSimPrivilege(ctx, dbq.DeleteUJPSimPrivilegeParams{EujpID: eujpID, Edb: edb, Privilege: p})
			}
			if err != nil {
				return fmt.Errorf("ujpsim: privilege %s: %w", p, err)
			}
		}
		return nil
	})
}

// Privileges lists the privileges of a user, as "edb:privilege".
func (s *Sim) Privileges(ctx context.Context, eujpID string) ([]string, error) {
	rows, err := s.db.Reader().ListUJPSimPrivileges(ctx, lookupKey(eujpID))
	if err != nil {
		return nil, fmt.Errorf("ujpsim: privileges: %w", err)
	}
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.Edb+":"+r.Privilege)
	}
	return out, nil
}

func (s *Sim) hasPrivilege(ctx context.Context, eujpID, edb, p string) (bool, error) {
	n, err := s.db.Reader().CountUJPSimPrivilege(ctx, dbq.CountUJPSimPrivilegeParams{EujpID: lookupKey(eujpID), Edb: lookupKey(edb), Privilege: p})
	return n > 0, err
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
		References: row.ReferencesEuid, Payload: json.RawMessage(row.Payload), History: make([]StatusChange, 0, len(hist))}
	for _, h := range hist {
		ch, err := toChange(h)
		if err != nil {
			return Document{}, err
		}
		d.History = append(d.History, ch)
	}
	return d, nil
}

func toChange(h dbq.UjpsimHistory) (StatusChange, error) {
	var ch StatusChange
	if err := json.Unmarshal([]byte(h.Change), &ch); err != nil {
		return ch, fmt.Errorf("ujpsim: stored status change %d: %w", h.ID, err)
	}
	ch.ID, ch.EUID = h.ID, h.Euid
	return ch, nil
}

// Documents returns every document a seller issued, oldest first.
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

// DocumentCount is how many documents the simulator holds.
func (s *Sim) DocumentCount(ctx context.Context) (int, error) {
	n, err := s.db.Reader().CountUJPSimDocuments(ctx)
	if err != nil {
		return 0, fmt.Errorf("ujpsim: count documents: %w", err)
	}
	return int(n), nil
}

// Decide records a buyer's decision on the buyer's behalf, as if the buyer
// had called accept-reject: only from 01 (E1016 otherwise). Accepting a
// storno voids its original (07). A refusal has a UJPCode method.
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
	if !storable(euid) {
		return errNotFound()
	}
	row, err := s.db.Reader().GetUJPSimDocument(ctx, euid)
	if errors.Is(err, sql.ErrNoRows) {
		return errNotFound()
	}
	if err != nil {
		return err
	}
	if row.Status != statusSent {
		return errNotNew()
	}
	moved := false
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		moved, err = s.decided(ctx, tx, row, statusAutoAccepted, now, StatusChange{Comment: strp("Document auto accept after expiration date")})
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

// AutoAccept is ForceAutoAccept under the sandbox simulate endpoint's name.
func (s *Sim) AutoAccept(ctx context.Context, euid string) error { return s.ForceAutoAccept(ctx, euid) }

func errNotNew() *simError {
	return &simError{status: 409, code: "E1016", msg: "Document is not in status NEW. Cannot be accepted, rejected, or cancelled."}
}

// sweepBatch bounds the documents one sweep transaction moves.
const sweepBatch = 100

// sweep auto-accepts documents past their deadline, as of now. Each move
// is conditional, so two processes sweeping at once move a document once.
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
				// Recorded when the deadline ended, or when the
				// document arrived if later: a change never precedes
				// its document.
				at := d.DecideBy
				if d.ReceivedAt.After(at) {
					at = d.ReceivedAt
				}
				row, err := tx.GetUJPSimDocument(ctx, d.Euid)
				if err != nil {
					return err
				}
				if _, err := s.decided(ctx, tx, row, statusAutoAccepted, at, StatusChange{Comment: strp("Document auto accept after expiration date")}); err != nil {
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

// docRef names a document and its parties, which its history rows repeat.
type docRef struct{ euid, seller, buyer string }

func refOf(r dbq.UjpsimDocument) docRef { return docRef{r.Euid, r.SellerTin, r.BuyerTin} }

// move changes a document's status from from to to and records the change,
// in tx; false (and nothing written) when it was not in from any more.
func (s *Sim) move(ctx context.Context, tx *store.Tx, d docRef, from, to string, at time.Time, extra StatusChange) (bool, error) {
	n, err := tx.MoveUJPSimDocument(ctx, dbq.MoveUJPSimDocumentParams{Euid: d.euid, FromStatus: from, ToStatus: to})
	if err != nil {
		return false, fmt.Errorf("ujpsim: move %s to %s: %w", d.euid, to, err)
	}
	if n == 0 {
		return false, nil
	}
	return true, s.record(ctx, tx, d, from, to, at, extra)
}

// decided moves a document in 01 to the buyer's decision (03, 04 or 05).
// A storno accepted (03) or auto-accepted (04) voids its original, in the
// same transaction: the stricter reading of statuses.txt:20-22, "сторнирана
// ... со претходна потврда од страна на Примачот".
func (s *Sim) decided(ctx context.Context, tx *store.Tx, row dbq.UjpsimDocument, to string, at time.Time, ch StatusChange) (bool, error) {
	moved, err := s.move(ctx, tx, refOf(row), statusSent, to, at, ch)
	if err != nil || !moved || row.DocStorno != stornoVoid || row.ReferencesEuid == "" || to == statusRejected {
		return moved, err
	}
	orig, err := tx.GetUJPSimDocument(ctx, row.ReferencesEuid)
	if errors.Is(err, sql.ErrNoRows) {
		return true, nil // purged meanwhile
	}
	if err != nil {
		return false, err
	}
	if orig.Status == statusVoided || orig.Status == statusCorrected {
		return true, nil
	}
	var req sendRequest
	_ = json.Unmarshal(row.Payload, &req)
	h := req.Document.Header
	vc := StatusChange{VoidReasonCode: h.VoidReasonCode, VoidComment: h.VoidComment}
	if r, ok := s.lists.voidReason(deref(h.VoidReasonCode)); ok {
		vc.VoidReason = strp(r.VoidReason)
	}
	if _, err := s.move(ctx, tx, refOf(orig), orig.Status, statusVoided, at, vc); err != nil {
		return false, err
	}
	return true, nil
}

// record writes a status change of d at at.
func (s *Sim) record(ctx context.Context, tx *store.Tx, d docRef, from, to string, at time.Time, extra StatusChange) error {
	at = dbTime(at).Truncate(time.Second)
	ch := extra
	ch.ID, ch.EUID = 0, ""
	if from != "" {
		ch.OldStatus = StatusRef{Code: from, Name: s.lists.statusName(from)}
	}
	ch.NewStatus = StatusRef{Code: to, Name: s.lists.statusName(to)}
	ch.Timestamp = FormatTimestamp(at)
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
// (the control API acting for the buyer).
func (s *Sim) decide(ctx context.Context, now time.Time, euid, buyerTin string, accept bool, reasonCode, comment string) error {
	if !storable(euid) {
		return errNotFound()
	}
	row, err := s.db.Reader().GetUJPSimDocument(ctx, euid)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return errNotFound()
	case err != nil:
		return err
	case buyerTin != "" && row.BuyerTin != buyerTin:
		return errNotFound()
	case row.Status != statusSent:
		return errNotNew()
	}
	ch := StatusChange{}
	if comment != "" {
		ch.Comment = strp(comment)
	}
	to := statusAccepted
	if !accept {
		r, ok := s.listsFor(ctx).rejectReason(reasonCode)
		if !ok {
			return &simError{status: 400, code: "E1002", msg: "Reject reason not found", prop: "rejectReasonCode", codebook: "reject-reason"}
		}
		ch.RejectReasonCode, ch.RejectReason = strp(r.Code), strp(r.RejectReason)
		to = statusRejected
	}
	moved := false
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		moved, err = s.decided(ctx, tx, row, to, now, ch)
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

// simError is an answer in UJP's error envelope.
type simError struct {
	status   int
	code     string
	msg      string
	prop     string
	codebook string
	items    []ErrorItem
}

func (e *simError) Error() string { return e.code + " " + e.msg }

// UJPCode is the simulator's (UJP's) error code.
func (e *simError) UJPCode() string { return e.code }

// Is makes errors.Is(err, ErrNotFound) true for E4008.
func (e *simError) Is(target error) bool { return target == ErrNotFound && e.code == "E4008" }

// badRequest is the simulator's refusal of a bad control request (E4000).
func badRequest(msg string) *simError {
	return &simError{status: 400, code: "E4000", msg: "Bad request: " + msg}
}
