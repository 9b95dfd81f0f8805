package filing

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/shopspring/decimal"
)

// variedRecords are many records with issues sprinkled in: duplicates,
// wrong contributions, amounts with more than two decimals (which take the
// decimal path), so that both paths of every optimisation are exercised.
func variedRecords(n int) []Record {
	recs := manyRecords(n)
	for i := range recs {
		switch {
		case i%97 == 5:
			recs[i].Pension = Money{D: recs[i].Pension.D.Add(decimal.NewFromInt(7)), Set: true}
		case i%89 == 3:
			recs[i].SalaryGross = Money{D: recs[i].SalaryGross.D.Add(decimal.RequireFromString("0.005")), Set: true}
		case i%83 == 1:
			recs[i].PIT = Money{D: decimal.RequireFromString("1.5"), Set: true}
		}
	}
	return recs
}

// TestParallelOutputIsSequentialOutput: for a batch big enough to be split
// over the CPUs, validation issues and every file byte are exactly what one
// sequential pass produces.
func TestParallelOutputIsSequentialOutput(t *testing.T) {
	req := fixtureRegular()
	req.Records, req.Force = variedRecords(3000), true
	run := func() (Result, []byte, []byte) {
		res := Validate(req, stat2026{})
		x, err := MpinXML(req, stat2026{})
		if err != nil {
			t.Fatal(err)
		}
		y, err := MpinTXT(req, stat2026{})
		if err != nil {
			t.Fatal(err)
		}
		return res, x, y
	}
	pres, px, py := run()
	old := parallelMin
	parallelMin = 1 << 30
	sres, sx, sy := run()
	parallelMin = old
	if !reflect.DeepEqual(pres, sres) {
		t.Fatalf("issues differ: %d parallel, %d sequential", len(pres.Issues), len(sres.Issues))
	}
	if len(pres.Issues) == 0 {
		t.Fatal("the varied batch raised no issue; the comparison proves little")
	}
	if !bytes.Equal(px, sx) || !bytes.Equal(py, sy) {
		t.Fatal("files differ between the parallel and the sequential path")
	}
}

// FuzzFastAmounts: the integer checks never pass a record the decimal
// checks would flag, and the integer amounts equal the decimal ones.
func FuzzFastAmounts(f *testing.F) {
	f.Add("50000", "4700", "3000", "250", "600", "3761.50", "38488.50", "", "")
	f.Add("36037.49", "3387.52", "1801.87", "180.19", "432.45", "2186.50", "28048.96", "9000", "0.5")
	f.Add("100", "9.40", "5.00", "0.50", "1.20", "0", "83.90", "", "1.005")
	f.Fuzz(func(t *testing.T, gross, pension, health, injury, empl, pit, net, allowance, extra string) {
		parse := func(s string) Money {
			d, err := decimal.NewFromString(s)
			if err != nil || s == "" || d.Abs().GreaterThan(decimal.NewFromInt(1e9)) {
				return Money{}
			}
			return Money{D: d, Set: true}
		}
		r := Record{SalaryGross: parse(gross), Pension: parse(pension), Health: parse(health), AdditionalHealth: parse(injury),
			EmploymentContrib: parse(empl), PIT: parse(pit), SalaryNet: parse(net), OvertimePay: parse(extra)}
		if pa := parse(allowance); pa.Set {
			r.PersonalAllowance = pa
		}
		if !r.SalaryGross.Set {
			return
		}
		rates, err := stat2026{}.On(periodEnd(2026, 1))
		if err != nil {
			t.Skip(err)
		}
		if amountsPass(&r, rates) {
			c := &checker{}
			// Bypass the fast path: the decimal checks alone.
			c.amountsDecimal(&r, "r", rates)
			if len(c.issues) != 0 {
				t.Fatalf("fast path passed a record the decimal checks flag: %+v", c.issues)
			}
		}
		if got, ok := amountsCents(&r, rates.Allowance, VariantRegular); ok {
			want := slowAmounts(&r, rates.Allowance)
			if got != want {
				t.Fatalf("amounts %v, decimal %v", got, want)
			}
		}
		if got, want := regularAmount(&r), whole(dec(r.SalaryGross).Sub(dec(r.OvertimePay))); got != want {
			t.Fatalf("regular %d, decimal %d", got, want)
		}
	})
}

func slowAmounts(r *Record, allowance decimal.Decimal) [15]int64 {
	contrib := dec(r.Pension).Add(dec(r.Health)).Add(dec(r.AdditionalHealth)).Add(dec(r.EmploymentContrib))
	allow := allowance
	if r.PersonalAllowance.Set {
		allow = r.PersonalAllowance.D
	}
	if left := dec(r.SalaryGross).Sub(contrib); left.LessThan(allow) {
		allow = decimal.Max(left, decimal.Zero)
	}
	vals := [15]decimal.Decimal{dec(r.SalaryGross), dec(r.Pension), dec(r.PensionTopUp), dec(r.Health), dec(r.HealthTopUp),
		dec(r.AdditionalHealth), dec(r.DisabilityTopUp), dec(r.EmploymentContrib), dec(r.EmploymentTopUp),
		decimal.Zero, decimal.Zero, dec(r.PIT), dec(r.SalaryNet), dec(r.SalaryNet), allow}
	var out [15]int64
	for k, v := range vals {
		out[k] = v.Round(0).IntPart()
	}
	return out
}

func TestWholeMatchesRound(t *testing.T) {
	for _, s := range []string{"0", "0.5", "-0.5", "1.49", "1.5", "-1.5", "2.5", "123456.785", "-0.005", "99999999999.999", "1e3", "12345678901234567.5"} {
		d := decimal.RequireFromString(s)
		if got, want := whole(d), d.Round(0).IntPart(); got != want {
			t.Errorf("whole(%s) = %d, Round(0) = %d", s, got, want)
		}
	}
}

// BenchmarkMpinXML10kSequential is the baseline for BenchmarkMpinXML10k in
// the same run: the same file on one goroutine.
func BenchmarkMpinXML10kSequential(b *testing.B) {
	old := parallelMin
	parallelMin = 1 << 30
	defer func() { parallelMin = old }()
	BenchmarkMpinXML10k(b)
}

// BenchmarkMpinTXT10kSequential is the one-goroutine baseline of
// BenchmarkMpinTXT10k.
func BenchmarkMpinTXT10kSequential(b *testing.B) {
	old := parallelMin
	parallelMin = 1 << 30
	defer func() { parallelMin = old }()
	BenchmarkMpinTXT10k(b)
}
