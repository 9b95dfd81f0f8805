package filing

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/ident"
	"github.com/denar-mk/denar/money"
)

// pitRate is the flat personal income tax on contractor and other non-salary
// income (R4, R11).
var pitRate = money.MustParse("0.10")

// normativeCosts are the е-ППД income sub-types we support and the share of
// gross the law deducts as normative costs before tax. Only sub-types with a
// published worked example or no deduction are listed (research §5 E16/E17);
// an unknown sub-type is a validation error rather than a guess.
var normativeCosts = map[string]money.Amount{
	"7.1":  money.Amount{}, // consultancy
	"7.2":  money.Amount{}, // intellectual services
	"7.3":  money.Amount{}, // other temporary services (default)
	"13.1": money.Amount{}, // other income
	"13.2": money.MustParse("0.35"),
}

// DefaultSubtype is the е-ППД sub-type used when a row or request names none.
const DefaultSubtype = "7.3"

// SupportedSubtypes lists the е-ППД sub-types gross-from-net and е-ППД accept.
func SupportedSubtypes() []string {
	s := make([]string, 0, len(normativeCosts))
	for k := range normativeCosts {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}

// GrossFromNetRequest is the body of gross-from-net.
type GrossFromNetRequest struct {
	Net           Money   `json:"net" example:"9000" doc:"The net the recipient is to get, in denars, a decimal string."`
	SubtypeIncome *string `json:"subtypeIncome" required:"false" example:"7.3" doc:"The е-ППД income sub-type, whose normative costs lower the tax base: 7.1, 7.2, 7.3 (default), 13.1 or 13.2."`
}

// GrossFromNetResponse is its answer: the net as given, the gross that
// pays it and the whole-denar PIT (UJP's calculator rounds the tax to
// whole denars).
type GrossFromNetResponse struct {
	Net   Money `json:"net" example:"9000" doc:"The net as given."`
	Gross Money `json:"gross" example:"10000" doc:"The gross income that leaves that net after PIT."`
	PIT   Money `json:"pit" example:"1000" doc:"The personal income tax, in whole denars."`
}

func subtypeCosts(p *string, path string, fe *denar.FieldErrors) (string, money.Amount) {
	st := defaulted(p, DefaultSubtype)
	c, ok := normativeCosts[st]
	if !ok && fe != nil {
		fe.Add(path, "sub-type %q is not supported (supported: %s)", st, strings.Join(SupportedSubtypes(), ", "))
	}
	return st, c
}

// pitOn is the whole-denar tax on gross after normative costs.
func pitOn(gross, costs money.Amount) money.Amount {
	return gross.Mul(money.FromInt(1).Sub(costs)).Mul(pitRate).Round(0)
}

// GrossFromNet grosses a net payment up for the flat 10 % tax (R11). The
// tax is whole denars, so the gross is net + PIT for the smallest whole
// PIT p with round(10 % × (1 − normative costs) × (net + p)) = p; p starts
// from the estimate net × k / (1 − k) (k the effective rate). The net is
// kept exactly as given (to the cent). Net 10000 → gross 11111, PIT 1111
// (sub-type 7.3); 13.2 → 10695, PIT 695; net 9999.99 → gross 11110.99.
func GrossFromNet(req *GrossFromNetRequest) (*GrossFromNetResponse, error) {
	var fe denar.FieldErrors
	moneyField(&fe, "net", req.Net, true)
	if req.Net.Set && !req.Net.D.IsPositive() {
		fe.Add("net", "must be positive")
	}
	cents(&fe, "net", req.Net)
	_, costs := subtypeCosts(req.SubtypeIncome, "subtypeIncome", &fe)
	if err := fe.Err(); err != nil {
		return nil, err
	}
	net := req.Net.D
	k := pitRate.Mul(money.FromInt(1).Sub(costs))
	est := net.MulDiv(k, money.FromInt(1).Sub(k), 0)
	pit := est
	for p := money.Max(est.Sub(money.FromInt(2)), money.Amount{}); p.Cmp(est.Add(money.FromInt(2))) <= 0; p = p.Add(money.FromInt(1)) {
		if pitOn(net.Add(p), costs).Equal(p) {
			pit = p
			break
		}
	}
	m := func(d money.Amount) Money { return Money{D: d, Set: true} }
	return &GrossFromNetResponse{Net: req.Net, Gross: m(net.Add(pit)), PIT: m(pit)}, nil
}

// cents refuses an amount with more than two decimals: the е-ППД and
// ПДД-ГИ layouts carry cents, and a finer amount would have to be rounded
// behind the caller's back.
func cents(fe *denar.FieldErrors, p string, m Money) {
	if m.Set && !m.D.Equal(m.D.Round(2)) {
		fe.Add(p, "has more than two decimals")
	}
}

// PddgiCompany is the payer of a ПДД-ГИ.
type PddgiCompany struct {
	Name             string  `json:"name" example:"Дизајнија ДООЕЛ" doc:"The payer's name."`
	TaxID            *string `json:"taxId" required:"false" doc:"The payer's ЕДБ: 13 digits, the 13th the mod-11 check digit of the first 12; anything else is 422 validation_failed at company.taxId."`
	Email            *string `json:"email" required:"false" example:"plati@dizajnija.mk" doc:"The payer's e-mail address."`
	Phone            *string `json:"phone" required:"false" example:"02 3111 111" doc:"The payer's phone number."`
	ContactPerson    *string `json:"contactPerson" required:"false" example:"Ана Ангеловска" doc:"The person to contact about the filing."`
	MunicipalityCode *string `json:"municipalityCode" required:"false" example:"182" doc:"The payer's municipality, a code of UJP's municipality list."`
}

// PddgiEmployee is the recipient of a contractor payment; embg may be
// null (spec, ПДД-ГИ request).
type PddgiEmployee struct {
	EMBG        *string `json:"embg" required:"false" example:"1505985412349" doc:"The recipient's ЕМБГ (13 digits, valid date and check digit); may be null."`
	FirstName   string  `json:"firstName" example:"Петар" doc:"The recipient's first name."`
	LastName    string  `json:"lastName" example:"Петровски" doc:"The recipient's last name."`
	BankAccount *string `json:"bankAccount" required:"false" example:"300000000012355" doc:"The recipient's bank account (15 digits, mod 97-10)."`
}

// PddgiRecord is one contractor payment.
type PddgiRecord struct {
	SalaryGross Money         `json:"salaryGross" example:"11111" doc:"The gross paid, in denars, a decimal string."`
	Employee    PddgiEmployee `json:"employee" doc:"Who was paid."`
}

// PddgiRequest is the body of the ПДД-ГИ endpoint.
type PddgiRequest struct {
	Company PddgiCompany  `json:"company" doc:"The payer."`
	Month   int           `json:"month" example:"10" doc:"The month of the payments, 1 to 12."`
	Year    int           `json:"year" example:"2026" doc:"The year."`
	Records []PddgiRecord `json:"records" maxItems:"100000" doc:"One record per payment."`
}

func checkPerson(fe *denar.FieldErrors, p string, embg *string, required bool, acct *string) {
	if embg != nil || required {
		if err := ident.EMBG(str(embg)); err != nil {
			fe.Add(p+".embg", "%v", err)
		}
	}
	if a := str(acct); a != "" {
		if err := ident.BankAccount(a); err != nil {
			fe.Add(p+".bankAccount", "%v", err)
		}
	}
}

// checkPddgi reports every wrong field of a ПДД-ГИ request.
func checkPddgi(req *PddgiRequest) (*PddgiRequest, error) {
	var fe denar.FieldErrors
	if strings.TrimSpace(req.Company.Name) == "" {
		fe.Add("company.name", "is required")
	}
	if err := ident.EDB(str(req.Company.TaxID)); err != nil {
		fe.Add("company.taxId", "%v", err)
	}
	if m := str(req.Company.MunicipalityCode); m != "" && !municipalityCode(m) {
		fe.AddCodebook("company.municipalityCode", "opstina", "%q is not in UJP's municipality list", m)
	}
	if req.Month < 1 || req.Month > 12 {
		fe.Add("month", "must be 1 to 12")
	}
	if req.Year < 2000 || req.Year > 2100 {
		fe.Add("year", "must be a four-digit year")
	}
	if req.Records == nil {
		fe.Add("records", "is required")
	}
	for i, r := range req.Records {
		p := fmt.Sprintf("records[%d]", i)
		moneyField(&fe, p+".salaryGross", r.SalaryGross, true)
		cents(&fe, p+".salaryGross", r.SalaryGross)
		if r.SalaryGross.Set && r.SalaryGross.D.IsNegative() {
			fe.Add(p+".salaryGross", "must not be negative")
		}
		if strings.TrimSpace(r.Employee.FirstName) == "" {
			fe.Add(p+".employee.firstName", "is required")
		}
		if strings.TrimSpace(r.Employee.LastName) == "" {
			fe.Add(p+".employee.lastName", "is required")
		}
		checkPerson(&fe, p+".employee", r.Employee.EMBG, false, r.Employee.BankAccount)
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	return req, nil
}

// Pddgi renders contractor payments as our ПДД-ГИ XML (docs/filing-formats.md,
// api/xsd/pddgi.xsd): 10 % PIT on gross, no contributions, no allowance (R4).
// The legacy form has no public XML; the layout is ours.
func Pddgi(req *PddgiRequest) ([]byte, error) {
	f, err := PddgiFile(req)
	if err != nil {
		return nil, err
	}
	return f.Bytes(), nil
}

// PddgiFile is Pddgi as a File, written row by row.
func PddgiFile(req *PddgiRequest) (*File, error) {
	if _, err := checkPddgi(req); err != nil {
		return nil, err
	}
	// R4: 10 % of the gross, in whole denars like the contractor
	// calculation and е-ППД.
	tax := func(g money.Amount) money.Amount { return g.Mul(pitRate).Round(0) }
	var gross, pit money.Amount
	for _, r := range req.Records {
		g := r.SalaryGross.D
		gross, pit = gross.Add(g), pit.Add(tax(g))
	}
	return &File{Name: "PDD-GI.xml", write: func(out io.Writer) error {
		w := &xw{}
		w.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n<PddGi>\n")
		w.WriteString("  <Isplatitel>\n")
		w.el("    ", "Edb", str(req.Company.TaxID))
		w.el("    ", "Naziv", req.Company.Name)
		w.el("    ", "SifraOpstina", str(req.Company.MunicipalityCode))
		w.el("    ", "KontaktLice", str(req.Company.ContactPerson))
		w.el("    ", "Telefon", str(req.Company.Phone))
		w.el("    ", "Email", str(req.Company.Email))
		w.WriteString("  </Isplatitel>\n")
		w.el("  ", "Mesec", pad2(req.Month))
		w.el("  ", "Godina", strconv.Itoa(req.Year))
		w.int("  ", "BrojPrimaci", int64(len(req.Records)))
		w.el("  ", "BrutoVk", gross.StringFixed(2))
		w.el("  ", "DanokVk", pit.StringFixed(2))
		w.el("  ", "NetoVk", gross.Sub(pit).StringFixed(2))
		for i, r := range req.Records {
			g := r.SalaryGross.D
			t := tax(g)
			w.WriteString("  <Primac>\n")
			w.int("    ", "RedenBroj", int64(i+1))
			w.el("    ", "Embg", str(r.Employee.EMBG))
			last, _ := cyrName(nil, r.Employee.LastName)
			first, _ := cyrName(nil, r.Employee.FirstName)
			w.el("    ", "Prezime", orRaw(last, r.Employee.LastName))
			w.el("    ", "Ime", orRaw(first, r.Employee.FirstName))
			w.el("    ", "TransakciskaSmetka", str(r.Employee.BankAccount))
			w.el("    ", "Bruto", g.StringFixed(2))
			w.el("    ", "Danok", t.StringFixed(2))
			w.el("    ", "Neto", g.Sub(t).StringFixed(2))
			w.WriteString("  </Primac>\n")
			if w.Len() >= 32<<10 {
				if _, err := out.Write(w.Bytes()); err != nil {
					return err
				}
				w.Reset()
			}
		}
		w.WriteString("</PddGi>\n")
		_, err := out.Write(w.Bytes())
		return err
	}}, nil
}

func orRaw(cyr, raw string) string {
	if cyr != "" {
		return cyr
	}
	return strings.TrimSpace(raw)
}

// EppdIssuer is the payer of an е-ППД.
type EppdIssuer struct {
	EDB         string  `json:"edb" doc:"The payer's ЕДБ: 13 digits, the 13th the mod-11 check digit of the first 12; anything else is 422 validation_failed at issuer.edb."`
	Name        string  `json:"name" example:"Дизајнија ДООЕЛ" doc:"The payer's name."`
	BankAccount *string `json:"bankAccount" required:"false" example:"300000000012355" doc:"The payer's bank account (15 digits, mod 97-10)."`
	Email       *string `json:"email" required:"false" example:"plati@dizajnija.mk" doc:"The payer's e-mail address."`
	Phone       *string `json:"phone" required:"false" example:"02 3111 111" doc:"The payer's phone number."`
}

// EppdRow is one payment of an е-ППД.
type EppdRow struct {
	EMBG             string  `json:"embg" example:"1505985412349" doc:"The recipient's ЕМБГ (13 digits, valid date and check digit)."`
	FirstName        string  `json:"firstName" example:"Петар" doc:"The recipient's first name."`
	LastName         string  `json:"lastName" example:"Петровски" doc:"The recipient's last name."`
	GrossIncome      Money   `json:"grossIncome" example:"10000" doc:"The gross income paid, in denars, a decimal string."`
	MunicipalityCode *string `json:"municipalityCode" required:"false" example:"182" doc:"The recipient's municipality, a code of UJP's municipality list."`
	SubtypeIncome    *string `json:"subtypeIncome" required:"false" example:"7.3" doc:"The income sub-type: 7.1, 7.2, 7.3, 13.1 or 13.2; default the request's, else 7.3."`
	BankAccount      *string `json:"bankAccount" required:"false" example:"300000000012355" doc:"The recipient's bank account (15 digits, mod 97-10)."`
}

// EppdRequest is the body of the е-ППД endpoint.
type EppdRequest struct {
	Issuer     EppdIssuer `json:"issuer" doc:"The payer."`
	PeriodFrom string     `json:"periodFrom" example:"2026-10-01" doc:"First day of the period, YYYY-MM-DD."`
	PeriodTo   string     `json:"periodTo" example:"2026-10-31" doc:"Last day of the period, YYYY-MM-DD, not before periodFrom."`
	Comment    *string    `json:"comment" required:"false" example:"Хонорари за октомври" doc:"Free text written to the file."`
	Rows       []EppdRow  `json:"rows" maxItems:"100000" doc:"One row per payment."`
}

// Eppd renders an е-ППД as our XML (docs/filing-formats.md, api/xsd/eppd.xsd).
// UJP's portal takes е-ППД by form entry and publishes no import schema, so
// the layout is ours. Per row: normative costs by sub-type, tax base, 10 %
// PIT rounded to whole denars, net.
func Eppd(req *EppdRequest) ([]byte, error) {
	f, err := EppdFile(req)
	if err != nil {
		return nil, err
	}
	return f.Bytes(), nil
}

// eppdCalc is the figures of an е-ППД row.
type eppdCalc struct {
	sub                          string
	gross, costs, base, pit, net money.Amount
}

// eppdRowCalc works out row r's figures; fe, when not nil, gets the row's
// wrong fields.
func eppdRowCalc(fe *denar.FieldErrors, i int, r *EppdRow) eppdCalc {
	var p string
	if fe != nil {
		p = fmt.Sprintf("rows[%d]", i)
		e := r.EMBG
		checkPerson(fe, p, &e, true, r.BankAccount)
		if strings.TrimSpace(r.FirstName) == "" {
			fe.Add(p+".firstName", "is required")
		}
		if strings.TrimSpace(r.LastName) == "" {
			fe.Add(p+".lastName", "is required")
		}
		moneyField(fe, p+".grossIncome", r.GrossIncome, true)
		cents(fe, p+".grossIncome", r.GrossIncome)
		if r.GrossIncome.Set && r.GrossIncome.D.IsNegative() {
			fe.Add(p+".grossIncome", "must not be negative")
		}
		if m := str(r.MunicipalityCode); m != "" && !municipalityCode(m) {
			fe.AddCodebook(p+".municipalityCode", "opstina", "%q is not in UJP's municipality list", m)
		}
	}
	sub, c := subtypeCosts(r.SubtypeIncome, p+".subtypeIncome", fe)
	g := r.GrossIncome.D
	costs := g.Mul(c).Round(2)
	base := g.Sub(costs)
	t := base.Mul(pitRate).Round(0)
	return eppdCalc{sub, g, costs, base, t, g.Sub(t)}
}

// EppdFile is Eppd as a File, written row by row.
func EppdFile(req *EppdRequest) (*File, error) {
	var fe denar.FieldErrors
	if err := ident.EDB(strings.TrimSpace(req.Issuer.EDB)); err != nil {
		fe.Add("issuer.edb", "%v", err)
	}
	if strings.TrimSpace(req.Issuer.Name) == "" {
		fe.Add("issuer.name", "is required")
	}
	if a := str(req.Issuer.BankAccount); a != "" {
		if err := ident.BankAccount(a); err != nil {
			fe.Add("issuer.bankAccount", "%v", err)
		}
	}
	from, errF := parseDate(req.PeriodFrom)
	if errF != nil {
		fe.Add("periodFrom", "must be a date YYYY-MM-DD")
	}
	to, errT := parseDate(req.PeriodTo)
	if errT != nil {
		fe.Add("periodTo", "must be a date YYYY-MM-DD")
	}
	if errF == nil && errT == nil && to.Before(from) {
		fe.Add("periodTo", "is before periodFrom")
	}
	if len(req.Rows) == 0 {
		fe.Add("rows", "at least one row is required")
	}
	var tot [5]money.Amount
	for i := range req.Rows {
		c := eppdRowCalc(&fe, i, &req.Rows[i])
		for k, v := range []money.Amount{c.gross, c.costs, c.base, c.pit, c.net} {
			tot[k] = tot[k].Add(v)
		}
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	return &File{Name: "e-PPD.xml", write: func(out io.Writer) error {
		w := &xw{}
		w.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n<EPpd>\n")
		w.WriteString("  <Isplatitel>\n")
		w.el("    ", "Edb", strings.TrimSpace(req.Issuer.EDB))
		w.el("    ", "Naziv", req.Issuer.Name)
		w.el("    ", "TransakciskaSmetka", str(req.Issuer.BankAccount))
		w.el("    ", "Email", str(req.Issuer.Email))
		w.el("    ", "Telefon", str(req.Issuer.Phone))
		w.WriteString("  </Isplatitel>\n")
		w.el("  ", "PeriodOd", from.Format("2006-01-02"))
		w.el("  ", "PeriodDo", to.Format("2006-01-02"))
		w.el("  ", "Komentar", str(req.Comment))
		w.int("  ", "BrojRedovi", int64(len(req.Rows)))
		for k, n := range []string{"BrutoVk", "NormiraniTrosociVk", "DanocnaOsnovaVk", "DanokVk", "NetoVk"} {
			w.el("  ", n, tot[k].StringFixed(2))
		}
		for i := range req.Rows {
			r := &req.Rows[i]
			c := eppdRowCalc(nil, i, r)
			w.WriteString("  <Red>\n")
			w.int("    ", "RedenBroj", int64(i+1))
			w.el("    ", "Embg", r.EMBG)
			last, _ := cyrName(nil, r.LastName)
			first, _ := cyrName(nil, r.FirstName)
			w.el("    ", "Prezime", orRaw(last, r.LastName))
			w.el("    ", "Ime", orRaw(first, r.FirstName))
			w.el("    ", "SifraOpstina", str(r.MunicipalityCode))
			w.el("    ", "PodvidPrihod", c.sub)
			w.el("    ", "TransakciskaSmetka", str(r.BankAccount))
			for k, n := range []string{"Bruto", "NormiraniTrosoci", "DanocnaOsnova", "Danok", "Neto"} {
				w.el("    ", n, []money.Amount{c.gross, c.costs, c.base, c.pit, c.net}[k].StringFixed(2))
			}
			w.WriteString("  </Red>\n")
			if w.Len() >= 32<<10 {
				if _, err := out.Write(w.Bytes()); err != nil {
					return err
				}
				w.Reset()
			}
		}
		w.WriteString("</EPpd>\n")
		_, err := out.Write(w.Bytes())
		return err
	}}, nil
}
