package filing

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./filing -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run go test ./filing -update and review the diff)", name)
	}
}

// xmllint validates a golden XML against its XSD in a subtest of its own,
// so that a missing xmllint skips only this step and never the checks that
// follow it in the caller (the TXT golden, say). The subtest skips visibly
// when xmllint is missing unless DENAR_TEST_REQUIRE_XMLLINT=1.
func xmllint(t *testing.T, xmlFile, xsd string) {
	t.Helper()
	t.Run("xmllint "+xsd, func(t *testing.T) {
		bin, err := exec.LookPath("xmllint")
		if err != nil {
			if os.Getenv("DENAR_TEST_REQUIRE_XMLLINT") == "1" {
				t.Fatal("xmllint not found and DENAR_TEST_REQUIRE_XMLLINT=1 (apt-get install -y libxml2-utils)")
			}
			t.Skip("SKIP: xmllint not found; XSD validation not run (apt-get install -y libxml2-utils)")
		}
		out, err := exec.Command(bin, "--noout", "--schema", filepath.Join("..", "api", "xsd", xsd), filepath.Join("testdata", xmlFile)).CombinedOutput()
		if err != nil {
			t.Errorf("xmllint %s against %s: %v\n%s", xmlFile, xsd, err, out)
		}
	})
}

func variant(req *MpinRequest, v string) *MpinRequest {
	c := *req
	c.Batch.FilingVariant = sp(v)
	return &c
}

func TestMpinGolden(t *testing.T) {
	cases := []struct {
		name string
		req  *MpinRequest
	}{
		{"mpin_regular", fixtureRegular()},
		{"mpin_no_payment_declared", variant(fixtureRegular(), VariantNoPaymentDeclared)},
		{"mpin_vid_700", variant(fixtureRegular(), VariantVid700)},
		{"mpin_correction_103", fixtureCorrection()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := Validate(tc.req, stat2026{})
			if !res.OK {
				t.Fatalf("fixture has blocking issues: %+v", res.Issues)
			}
			js, _ := json.MarshalIndent(res, "", "  ")
			golden(t, tc.name+".validate.json", append(js, '\n'))
			x, err := MpinXML(tc.req, stat2026{})
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name+".xml", x)
			xmllint(t, tc.name+".xml", "mpin.xsd")
			txt, err := MpinTXT(tc.req, stat2026{})
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name+".txt", txt)
			checkTXTBytes(t, txt)
		})
	}
}

func TestCombinedGolden(t *testing.T) {
	reg, cor := fixtureRegular(), fixtureCorrection()
	req := &CombinedRequest{Company: reg.Company, Batch: reg.Batch, Batches: []BatchRecords{{reg.Records}, {cor.Records}}}
	txt, err := CombinedTXT(req, stat2026{})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "mpin_combined.txt", txt)
	checkTXTBytes(t, txt)
	d, err := decodeTXT(txt)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Emps) != len(reg.Records)+1 {
		t.Fatalf("%d employees, want %d", len(d.Emps), len(reg.Records)+1)
	}
	var sum [15]int64
	for i, e := range d.Emps {
		if e.No != i+1 {
			t.Errorf("employee %d numbered %d", i, e.No)
		}
		for k := range sum {
			sum[k] += e.Amounts[k]
		}
	}
	if sum != d.Totals {
		t.Errorf("totals %v, sum of records %v", d.Totals, sum)
	}
	wantOrder := []string{"Јованова", "Ќоровски", "Њагулова", "Петровски", "Стојановски", "Стојановски", "Ѓорѓиевска"}
	_ = wantOrder // Ѓ sorts after Г and before Д; checked in TestCollation
}

// checkTXTBytes is the byte-level check of the TXT: BOM FF FE, every record
// of its documented width followed by CRLF, UTF-16LE throughout.
func checkTXTBytes(t *testing.T, b []byte) {
	t.Helper()
	if len(b) < 2 || b[0] != 0xFF || b[1] != 0xFE {
		t.Fatalf("no UTF-16LE BOM: % x", b[:min(2, len(b))])
	}
	if len(b)%2 != 0 {
		t.Fatal("odd length: not UTF-16")
	}
	body := b[2:]
	recs := 0
	for len(body) > 0 {
		var w int
		switch {
		case body[0] == 'H' && body[1] == 0:
			w = WidthH
		case body[0] == 'E' && body[1] == 0:
			w = WidthE
		case body[0] == 'D' && body[1] == 0:
			w = WidthD
		default:
			t.Fatalf("record %d: unknown type % x", recs, body[:2])
		}
		if len(body) < 2*w+4 {
			t.Fatalf("record %d (%c): truncated", recs, body[0])
		}
		if !bytes.Equal(body[2*w:2*w+4], []byte{'\r', 0, '\n', 0}) {
			t.Fatalf("record %d (%c): no CRLF after %d units: % x", recs, body[0], w, body[2*w:2*w+4])
		}
		for i := 0; i < 2*w; i += 2 {
			if body[i] == '\r' && body[i+1] == 0 || body[i] == '\n' && body[i+1] == 0 {
				t.Fatalf("record %d: line break inside the record", recs)
			}
		}
		body = body[2*w+4:]
		recs++
	}
	if recs < 1 {
		t.Fatal("no records")
	}
}

func TestTXTRoundTrip(t *testing.T) {
	req := fixtureRegular()
	txt, err := MpinTXT(req, stat2026{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := decodeTXT(txt)
	if err != nil {
		t.Fatal(err)
	}
	want := testDoc(req)
	want.Emps[1].FirstName, want.Emps[1].LastName = "Ана", "Ѓорѓиевска"
	again, err := encodeTXT(d)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, txt) {
		t.Error("decode then encode changed the bytes")
	}
	if d.Emps[1].LastName != "Ѓорѓиевска" || d.PayerName != "Дизајнија ДООЕЛ" {
		t.Errorf("Cyrillic not preserved: %q %q", d.Emps[1].LastName, d.PayerName)
	}
	if d.Totals != want.Totals || len(d.Emps[2].Details) != len(want.Emps[2].Details) {
		t.Error("decoded document differs")
	}
}

func TestGateBlocks(t *testing.T) {
	req := fixtureRegular()
	req.Records[0].Employee.EMBG = sp("1234567890123")
	for name, gen := range map[string]func(*MpinRequest, Statutory) ([]byte, error){"xml": MpinXML, "txt": MpinTXT} {
		_, err := gen(req, stat2026{})
		var be *BlockingError
		if !errors.As(err, &be) || be.Issues[0].Path != "records[0].employee.embg" {
			t.Errorf("%s: err = %v, want a BlockingError on records[0].employee.embg", name, err)
		}
		if be != nil && be.AsDenarError().Code != "mpin_validation_failed" {
			t.Errorf("%s: code %q", name, be.AsDenarError().Code)
		}
		req.Force = true
		if _, err := gen(req, stat2026{}); err != nil {
			t.Errorf("%s with force: %v", name, err)
		}
		req.Force = false
	}
}

// TestDocumentedWidths pins the record widths to docs/filing-formats.md.
func TestDocumentedWidths(t *testing.T) {
	if WidthH != 311 || WidthE != 293 || WidthD != 61 {
		t.Errorf("widths H=%d E=%d D=%d; docs/filing-formats.md says 311, 293, 61", WidthH, WidthE, WidthD)
	}
}

func TestFileName(t *testing.T) {
	c := Company{Name: "DESIGNIA DOOEL"}
	if got := FileName(&c, &Batch{PeriodMonth: 5, PeriodYear: 2026}, "xml"); got != "DESIGNIA DOOEL_2026_05_101.xml" {
		t.Errorf("FileName = %q", got)
	}
	c.Name = "Дизајнија/ДООЕЛ"
	got := FileName(&c, &Batch{PeriodMonth: 5, PeriodYear: 2026, VidObvrska: sp("103")}, "txt")
	if got != "Дизајнија_ДООЕЛ_2026_05_103.txt" {
		t.Errorf("FileName = %q", got)
	}
	if cd := ContentDisposition(got); cd != `attachment; filename="________________2026_05_103.txt"; filename*=UTF-8''%D0%94%D0%B8%D0%B7%D0%B0%D1%98%D0%BD%D0%B8%D1%98%D0%B0_%D0%94%D0%9E%D0%9E%D0%95%D0%9B_2026_05_103.txt` {
		t.Errorf("ContentDisposition = %s", cd)
	}
}

// TestKindRows (issue 16, defect 3): each kind of hours and pay of a record
// is its own level-3 row with UJP's type code; the regular row (001) takes
// the fund's remaining hours and the gross's remaining amount, so the
// hours add up to the fund (overtime on top, absent hours outside the
// employment) and the amounts to the gross. Before, premium, shift and
// seniority pay were folded into the regular row, absent hours were
// ignored and a record with premium hours filed 210 hours in a 168-hour
// month.
func TestKindRows(t *testing.T) {
	req := fixtureRegular()
	r := calc("60000", "Марко", "Петровски")
	r.Employee = req.Records[0].Employee
	set := func(h *Num, p *Money, hours, pay string) {
		if h != nil {
			*h = N(hours)
		}
		*p = M(pay)
	}
	set(&r.OvertimeHours, &r.OvertimePay, "10", "1000")
	set(&r.NightHours, &r.NightPay, "20", "2000")
	set(&r.HolidayHours, &r.HolidayPay, "8", "800")
	set(&r.SundayHours, &r.SundayPay, "6", "600")
	set(&r.HolidayNightHours, &r.HolidayNightPay, "4", "400")
	set(&r.SundayNightHours, &r.SundayNightPay, "3", "300")
	set(&r.SundayHolidayHours, &r.SundayHolidayPay, "2", "200")
	set(&r.Shift1Hours, &r.Shift1Pay, "12", "1200")
	set(&r.Shift2Hours, &r.Shift2Pay, "11", "1100")
	set(&r.Shift3Hours, &r.Shift3Pay, "9", "900")
	set(&r.SpecialHours, &r.SpecialPay, "5", "500")
	r.SpecialCode = sp("006")
	set(nil, &r.Seniority, "", "1500")
	set(nil, &r.BonusAmount, "", "2500")
	set(&r.SickCompanyHours, &r.SickCompanyPay, "16", "1300")
	r.SickCompanyRate = N("80")
	r.SickFundHours, r.SickFundCode = N("24"), sp("128")
	r.UnpaidHours = N("8")
	r.AbsentHours, r.LeaveDay = N("16"), ip(28)
	req.Records = []Record{r}
	x, err := MpinXML(req, stat2026{})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Emps []struct {
			Hours   int64 `xml:"RabotniCasoviVkVrab"`
			Details []struct {
				Type   string `xml:"SifraTipRabotenCas"`
				Hours  int64  `xml:"BrojCasovi"`
				Amount int64  `xml:"BrutoIznos"`
			} `xml:"MpinCalculationStDetail"`
		} `xml:"MpinCalculationSt"`
	}
	if err := xml.Unmarshal(x, &doc); err != nil {
		t.Fatal(err)
	}
	// Inside the fund of 168: 20+8+6+4+3+2+12+11+9+5 premium, 16+24 sick,
	// 8 unpaid, 16 absent = 144, so 24 regular hours. Gross 60,000 less
	// 1,000+2,000+800+600+400+300+200+1,200+1,100+900+500+1,500+2,500+1,300
	// = 14,300 leaves 45,700 regular.
	want := []string{"001 24 45700", "005 10 1000", "003 20 2000", "007 8 800", "044 6 600", "045 4 400", "047 3 300", "007 2 200",
		"100 12 1200", "100 11 1100", "100 9 900", "006 5 500", "037 0 1500", "099 0 2500", "126 16 1300", "128 24 0", "023 8 0"}
	var got []string
	for _, d := range doc.Emps[0].Details {
		got = append(got, fmt.Sprintf("%s %d %d", d.Type, d.Hours, d.Amount))
	}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("rows\n got %v\nwant %v", got, want)
	}
	if doc.Emps[0].Hours != 168-16+10 {
		t.Errorf("RabotniCasoviVkVrab %d, want 162 (the fund less the absent hours, plus overtime)", doc.Emps[0].Hours)
	}
	if res := Validate(req, stat2026{}); !res.OK {
		t.Errorf("issues %+v", res.Issues)
	}
}
