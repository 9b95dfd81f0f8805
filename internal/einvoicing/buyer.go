package einvoicing

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/ident"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/ujp"
)

// CBRegistry names UJP's company registry (GET /companies/{tax}) in field
// errors, as codebook names the code list a rule comes from.
const CBRegistry = "companies"

// buyerCacheTTL is how long a registry answer is reused: companies rarely
// change name, and an invoice run names the same buyers again and again.
const buyerCacheTTL = 10 * time.Minute

type buyerEntry struct {
	name    string
	vat     string // "" when the buyer is not a VAT payer
	addr    Address
	missing bool
	until   time.Time
}

// buyerCache remembers registry answers per environment and tax number.
type buyerCache struct {
	mu sync.Mutex
	m  map[string]buyerEntry
}

func (c *buyerCache) get(key string, now time.Time) (buyerEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok || now.After(e.until) {
		return buyerEntry{}, false
	}
	return e, true
}

func (c *buyerCache) put(key string, e buyerEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) > 10000 {
		c.m = map[string]buyerEntry{} // bounded: start over rather than grow
	}
	c.m[key] = e
}

// checkBuyer compares a Macedonian buyer with UJP's registry the way UJP
// will on submission (the tax number must exist; the name, a VAT number,
// city and postal code given must be the registry's), so the caller learns
// it now as field errors instead of as a failed document later. It waits for the registry at most timeout; err
// is not nil when the registry did not answer (in time), and then the
// buyer is neither accepted nor refused. Answers are cached. The look-up is
// made as the seller (UJP's X-EDB), whose tax number seller gives when a
// look-up is needed.
func (s *Service) checkBuyer(ctx context.Context, env string, seller func() (string, error), b einvoice.Party, timeout time.Duration) ([]denar.FieldError, error) {
	if s.registry == nil || (b.Country != "" && b.Country != "MK") || b.TaxNumber == "" {
		return nil, nil
	}
	if ident.EDB(b.TaxNumber) != nil {
		// Not an ЕДБ: building the document reports it at buyer.taxNumber,
		// and the registry is not asked about a number it cannot hold.
		return nil, nil
	}
	key := env + "/" + b.TaxNumber
	now := time.Now()
	e, ok := s.buyers.get(key, now)
	if !ok {
		as, err := seller()
		if err != nil {
			return nil, err
		}
		// The look-up waits for the operator's turn at UJP as long as the
		// caller waits for the answer.
		lctx, cancel := context.WithTimeout(ujp.WithTurnWait(ctx, timeout), timeout)
		c, err := s.registry.LookupCompany(lctx, env, as, b.TaxNumber)
		cancel()
		switch {
		case errors.Is(err, ErrRegistryNotFound):
			e = buyerEntry{missing: true}
		case err != nil:
			return nil, fmt.Errorf("buyer %s in UJP's registry: %w", b.TaxNumber, err)
		default:
			e = buyerEntry{name: c.Name, vat: c.VATNumber, addr: c.Address}
		}
		e.until = now.Add(buyerCacheTTL)
		s.buyers.put(key, e)
	}
	if e.missing {
		return []denar.FieldError{{Path: "buyer.taxNumber", Codebook: CBRegistry,
			Message: "not found in UJP's registry (UJP refuses it with E1014)"}}, nil
	}
	var out []denar.FieldError
	if strings.TrimSpace(b.Name) != e.name {
		out = append(out, denar.FieldError{Path: "buyer.name", Codebook: CBRegistry,
			Message: fmt.Sprintf("must be the name in UJP's registry, %q (UJP refuses another with E10006)", e.name)})
	}
	// A VAT payer's VAT number goes on the document
	// (sifrarnici-field-codebook.txt:620-625): one omitted is taken from
	// the registry (fillBuyer), one given must be the registry's (UJP's
	// E10007; without one there, E10008).
	if b.VatNumber != nil && *b.VatNumber != "" && *b.VatNumber != e.vat {
		msg := "the buyer is not a VAT payer in UJP's registry; leave vatNumber out (UJP refuses it with E10007)"
		if e.vat != "" {
			msg = fmt.Sprintf("must be the VAT number in UJP's registry, %q, or left out (UJP refuses another with E10007)", e.vat)
		}
		out = append(out, denar.FieldError{Path: "buyer.vatNumber", Codebook: CBRegistry, Message: msg})
	}
	// UJP compares the city and the postal code with the registry
	// (error-codes.txt:64-65, E10004 and E10005); one left out is taken
	// from it (fillBuyer).
	if v := text(b.Address.City); v != "" && e.addr.City != "" && v != e.addr.City {
		out = append(out, denar.FieldError{Path: "buyer.address.city", Codebook: CBRegistry,
			Message: fmt.Sprintf("must be the city in UJP's registry, %q (UJP refuses another with E10004)", e.addr.City)})
	}
	if v := text(b.Address.PostalCode); v != "" && e.addr.Zip != "" && v != e.addr.Zip {
		out = append(out, denar.FieldError{Path: "buyer.address.postalCode", Codebook: CBRegistry,
			Message: fmt.Sprintf("must be the postal code in UJP's registry, %q, or left out (UJP refuses another with E10005)", e.addr.Zip)})
	}
	return out, nil
}

// text is the trimmed value of an optional field.
func text(v *string) string {
	if v == nil {
		return ""
	}
	return strings.TrimSpace(*v)
}

// fillBuyer puts on d what UJP requires of a registered buyer and the
// request left out, from UJP's registry, once checkBuyer accepted the
// buyer: a VAT payer's VAT number (UJP refuses its document without it,
// E10008), and the street, number and postal code of the address (required
// fields, sifrarnici-field-codebook.txt:642-660; the postal code is the one
// UJP checks, E10005).
func (s *Service) fillBuyer(env string, d *ujpdoc.Document) {
	if d == nil || d.Buyer.BuyerTin == "" {
		return
	}
	if d.Buyer.BuyerCCode != "" && d.Buyer.BuyerCCode != "MK" {
		return
	}
	e, ok := s.buyers.get(env+"/"+d.Buyer.BuyerTin, time.Now())
	if !ok || e.missing {
		return
	}
	if e.vat != "" && (d.Buyer.BuyerVatNumber == nil || *d.Buyer.BuyerVatNumber == "") {
		v := e.vat
		d.Buyer.BuyerVatNumber = &v
	}
	a := &d.Buyer.BuyerAddress
	for _, f := range []struct {
		to   *string
		from string
	}{
		{&a.StreetAddress, e.addr.Street}, {&a.StreetNumber, e.addr.Number}, {&a.PostalCode, e.addr.Zip}, {&a.City, e.addr.City},
	} {
		if strings.TrimSpace(*f.to) == "" && f.from != "" {
			*f.to = f.from
		}
	}
}

// buyerOf is the buyer of a built document as the registry check reads it.
func buyerOf(d *ujpdoc.Document) einvoice.Party {
	a := d.Buyer.BuyerAddress
	return einvoice.Party{Country: d.Buyer.BuyerCCode, TaxNumber: d.Buyer.BuyerTin, Name: d.Buyer.BuyerName, VatNumber: d.Buyer.BuyerVatNumber,
		Address: einvoice.PartyAddress{Street: &a.StreetAddress, Number: &a.StreetNumber, PostalCode: &a.PostalCode, City: &a.City}}
}

// sellerTax returns the tax number of company id of account, read when a
// buyer check needs it.
func (s *Service) sellerTax(ctx context.Context, account, id string) func() (string, error) {
	return func() (string, error) {
		co, err := s.db.Reader().GetAccountCompany(ctx, dbq.GetAccountCompanyParams{ID: id, AccountID: account})
		if err != nil {
			return "", fmt.Errorf("seller %s: %w", id, err)
		}
		return co.TaxNumber, nil
	}
}

// CodeLists is the port through which validation reads UJP's code lists:
// the code-list room (*codelists.Service), which stands below the core.
type CodeLists interface {
	// Lists returns the code lists validation uses in env: UJP's as last
	// recorded, else the embedded snapshot.
	Lists(env string) *ujpdoc.Codebooks
}

// codebooks returns the code lists validation uses in env (Deps.CodeLists).
func (s *Service) codebooks(env string) *ujpdoc.Codebooks { return s.lists.Lists(env) }

// CodeLists returns UJP's code lists of env as validation uses them (the
// inbox checks decisions against them; the dashboard offers the reject and
// void reasons from them).
func (s *Service) CodeLists(env string) *ujpdoc.Codebooks { return s.codebooks(env) }

// withBuyerError adds the registry's field errors to the outcome of
// building the document: to its field errors when validation failed too,
// alone when it did not. Other failures (totals_mismatch) stand as they are.
func withBuyerError(buildErr error, fes ...denar.FieldError) error {
	if len(fes) == 0 {
		return buildErr
	}
	if buildErr == nil {
		return denar.Invalid(fes...)
	}
	var de *denar.Error
	if errors.As(buildErr, &de) && de.Code == denar.ECodeValidation {
		out := *de
		out.Fields = append(append([]denar.FieldError{}, de.Fields...), fes...)
		return &out
	}
	return buildErr
}

// withVATPayerErrors adds to buildErr the lines that show VAT when the
// company is not registered for VAT (no VAT number in UJP's registry):
// einvoice.Request.NoVATShown.
func withVATPayerErrors(buildErr error, co dbq.Company, req *einvoice.Request) error {
	if co.VatNumber != "" {
		return buildErr
	}
	for _, fe := range req.NoVATShown() {
		buildErr = withBuyerError(buildErr, fe)
	}
	return buildErr
}
