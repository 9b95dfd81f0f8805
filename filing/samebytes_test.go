package filing

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/denar-mk/denar/money"
)

// randomRequest is a large batch in which every branch of the checks and
// the encoders is taken somewhere: Latin, Cyrillic and untransliterable
// names, XML metacharacters, line breaks and characters outside the BMP in
// text fields, amounts with more than two decimals, negative corrections,
// hire and leave days, re-hires, every kind of hours, bad identifiers and
// codes, duplicates, and numbers too wide for the TXT.
func randomRequest(seed int64, n int) *MpinRequest {
	rng := rand.New(rand.NewSource(seed))
	pick := func(s ...string) string { return s[rng.Intn(len(s))] }
	req := fixtureRegular()
	req.Batch.PeriodMonth = 1 + rng.Intn(12)
	switch rng.Intn(4) {
	case 1:
		req.Batch.FilingVariant = sp(VariantNoPaymentDeclared)
	case 2:
		req.Batch.FilingVariant = sp(VariantVid700)
	case 3:
		req.Batch.VidObvrska = sp("103")
	}
	if rng.Intn(3) == 0 {
		req.Batch.WorkingHours = Num{}
	}
	if rng.Intn(4) == 0 {
		req.Company.NameCyr = sp(pick("Фирма & <Син> \"Д\"", "Ѓорѓи'с\r\nДООЕЛ", "Дизајнија 😀"))
	}
	firsts := []string{"Marko", "Ana", "Gjorgji", "Dzhemal", "Ljubica", "NIKOLA", "Kjiro", "Xavier", "Игор", "Елена", "Љубица", "Dž", "O'Neil", "Ana-Marija", " Petar ", "Šefki", "Ǵoko"}
	lasts := []string{"Petrovski", "Gjorgjievska", "Стојановски", "Јованова", "Њагулова", "Ќоровски", "Shkurti", "Wolf", "Dimovski & Sin", "<Tag>", "Quote\"d", "Tab\tbed", "Line\nbreak", "Cr\rlf", "Ѕвездан😀", "\x01ctl", "Ünal", "ЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏЏ"}
	embgs := make([]string, 64)
	for i := range embgs {
		embgs[i] = testEMBG(fmt.Sprintf("%02d%02d9%02d45%03d", 1+i%28, 1+i%12, 50+i%40, i))
	}
	recs := make([]Record, n)
	for i := range recs {
		gross := strconv.Itoa(rng.Intn(200000))
		switch rng.Intn(10) {
		case 0:
			gross += ".005"
		case 1:
			gross = "-" + gross
		case 2:
			gross += "." + strconv.Itoa(10+rng.Intn(90))
		}
		r := calc(gross, pick(firsts...), pick(lasts...))
		switch rng.Intn(6) {
		case 0:
			r.Employee.LastNameCyr = sp(pick("Петровски", "Ѓорѓиевска", "Mixed Латиница", " ", "Ш"))
		case 1:
			r.Employee.FirstNameCyr = sp(pick("Марко", "Ана", "A&B"))
		}
		if rng.Intn(8) == 0 {
			r.Employee.EMBG = sp(pick("123", "0101990450000", "abc"))
		} else {
			r.Employee.EMBG = sp(embgs[rng.Intn(len(embgs))] + pick("", "", " "))
		}
		if rng.Intn(5) != 0 {
			r.Employee.BankAccount = sp(testAccount(fmt.Sprintf("3000%09d", rng.Intn(1e9))))
		} else if rng.Intn(2) == 0 {
			r.Employee.BankAccount = sp(pick("300000000000000", "<acct>"))
		}
		r.Employee.MunicipalityCode = sp(pick("179", "103", "186", "999", "", "1a2"))
		if rng.Intn(4) == 0 {
			r.Employee.FzomBranch = sp(pick("4061", "406101", "9999", "4022"))
		}
		if rng.Intn(4) == 0 {
			r.InsuranceCode = sp(pick("0047", "0050", "9999", "2222"))
		}
		set := func(p *Num, s string) {
			if rng.Intn(5) == 0 {
				*p = N(s)
			}
		}
		setM := func(p *Money, s string) {
			if rng.Intn(5) == 0 {
				*p = M(s)
			}
		}
		set(&r.WorkingHours, pick("0", "84", "160", "176.5", "300"))
		set(&r.OvertimeHours, pick("0", "4", "10.5"))
		setM(&r.OvertimePay, pick("0", "1100.00", "99.995"))
		set(&r.NightHours, pick("0", "8"))
		setM(&r.NightPay, pick("0", "500.50"))
		set(&r.HolidayHours, pick("8", "0"))
		setM(&r.HolidayPay, pick("700", "0.49"))
		set(&r.SundayHours, pick("16"))
		setM(&r.SundayPay, pick("1600"))
		set(&r.SickCompanyHours, pick("8", "16"))
		setM(&r.SickCompanyPay, pick("900", "0"))
		set(&r.SickCompanyRate, pick("70", "80", "90", "100", "85"))
		set(&r.SickFundHours, pick("40"))
		setM(&r.SickFundPay, pick("4000"))
		if rng.Intn(5) == 0 {
			r.SickFundCode = sp(pick("140", "150", "<x>"))
		}
		set(&r.MaternityHours, pick("168", "0", "-1"))
		setM(&r.MaternityBase, pick("41000.00", "0"))
		set(&r.MaternityPartialHours, pick("84", "0"))
		set(&r.UnpaidHours, pick("8", "30"))
		set(&r.ServiceDays, pick("0", "15", "15.5", "40"))
		setM(&r.PersonalAllowance, pick("0", "10932", "5000.5"))
		setM(&r.NetPaid, pick("20000", "19999.99"))
		setM(&r.PensionTopUp, pick("120.50"))
		setM(&r.HealthTopUp, pick("33"))
		setM(&r.DisabilityTopUp, pick("2.5"))
		setM(&r.EmploymentTopUp, pick("1.49"))
		if rng.Intn(10) == 0 {
			r.Pension = M(pick("1", "999999", "12345.678"))
		}
		if rng.Intn(15) == 0 {
			r.SalaryNet = Money{}
		}
		if rng.Intn(15) == 0 {
			r.PIT = Money{}
		}
		// Numbers too wide for the TXT, every figure within the bounds of
		// a request: a record's hours (seed 3), or only the header's sum of
		// grosses at the cap (seed 4, from 1,000 records).
		if seed == 3 && i == n/2 {
			r.WorkingHours = N("10000")
		}
		if seed == 4 {
			r.SalaryGross = M("999999999.5")
		}
		if rng.Intn(6) == 0 {
			r.HireDay = ip(pick2(rng, 1, 15, 0, 32))
		}
		if rng.Intn(6) == 0 {
			r.LeaveDay = ip(pick2(rng, 10, 28, 31, -1))
		}
		if rng.Intn(8) == 0 {
			r.ContractNo = ip(pick2(rng, 1, 2, 3, 0))
		}
		recs[i] = r
	}
	req.Records = recs
	return req
}

func pick2(rng *rand.Rand, v ...int) int { return v[rng.Intn(len(v))] }

// outputsDigest runs validate, both generators (forced) and the combined
// TXT on req and returns one SHA-256 per output. An error is hashed by its
// text, so a changed error counts as a changed output.
func outputsDigest(t testing.TB, req *MpinRequest) map[string]string {
	h := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	out := map[string]string{}
	res := Validate(req, stat2026{})
	js, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	out["validate"] = h(js)
	forced := *req
	forced.Force = true
	file := func(name string, b []byte, err error) {
		if err != nil {
			b = []byte("error: " + err.Error())
		}
		out[name] = h(b)
	}
	x, err := MpinXML(&forced, stat2026{})
	file("xml", x, err)
	y, err := MpinTXT(&forced, stat2026{})
	file("txt", y, err)
	half := len(req.Records) / 2
	c := &CombinedRequest{Company: req.Company, Batch: req.Batch, Force: true,
		Batches: []BatchRecords{{req.Records[:half]}, {req.Records[half:]}}}
	z, err := CombinedTXT(c, stat2026{})
	file("combined", z, err)
	return out
}

// TestLargeBatchesSameBytes: validate issues, the XML, the TXT and the
// combined TXT of large generated batches hash to exactly what the
// implementation before the performance work (commit 8ca884e) produced;
// testdata/large_batches.sha256 was written by that code. Together with the
// golden files this pins every byte the optimised encoders write.
func TestLargeBatchesSameBytes(t *testing.T) {
	var b strings.Builder
	for _, c := range []struct {
		seed int64
		n    int
	}{{1, 10000}, {2, 3000}, {3, 700}, {4, 1100}, {5, 5}} {
		d := outputsDigest(t, randomRequest(c.seed, c.n))
		for _, k := range []string{"validate", "xml", "txt", "combined"} {
			fmt.Fprintf(&b, "seed %d n %d %s %s\n", c.seed, c.n, k, d[k])
		}
	}
	// The benchmark batch (duplicates, Latin names) and the varied one.
	for _, c := range []struct {
		name string
		recs []Record
	}{{"many", manyRecords(10000)}, {"varied", variedRecords(3000)}} {
		req := fixtureRegular()
		req.Records = c.recs
		d := outputsDigest(t, req)
		for _, k := range []string{"validate", "xml", "txt", "combined"} {
			fmt.Fprintf(&b, "%s %s %s\n", c.name, k, d[k])
		}
	}
	path := filepath.Join("testdata", "large_batches.sha256")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("outputs of large batches changed:\n got:\n%s\nwant:\n%s", got, want)
	}
}

var _ = bytes.Equal
var _ = money.Amount{}
