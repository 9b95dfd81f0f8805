package payroll_test

import (
	"fmt"
	"testing"

	"github.com/denar-mk/denar/payroll"
)

// BenchmarkGrossToNet: one gross→net month (target: under 5 µs and 20
// allocations), with an overtime item so the hours model runs too.
func BenchmarkGrossToNet(b *testing.B) {
	in := payroll.Input{GrossSalary: s("36037"), EffectiveDate: s("2026-01-15"), OvertimeHours: payroll.NewNumber(8)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := payroll.Calculate(&in, today); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNetToGross: one net→gross inversion (target: under 25 µs).
func BenchmarkNetToGross(b *testing.B) {
	in := payroll.Input{TargetNet: s("50000"), EffectiveDate: s("2025-06-15")}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := payroll.Calculate(&in, today); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNetToGrossAboveCap starts the estimate far from the answer (the
// closed form ignores the cap), so the search does more steps.
func BenchmarkNetToGrossAboveCap(b *testing.B) {
	in := payroll.Input{TargetNet: s("1500000"), EffectiveDate: s("2026-09-15")}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := payroll.Calculate(&in, today); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNetBasedTargetNet: targetNet with net-priced premiums, an
// inversion nested in an inversion (R10 with net-first).
func BenchmarkNetBasedTargetNet(b *testing.B) {
	in := payroll.Input{TargetNet: s("40000"), NetBased: true, OvertimeHours: payroll.NewNumber(10), NightHours: payroll.NewNumber(16), BonusAmount: s("3000")}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := payroll.Calculate(&in, today); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeAndCalculate includes strict JSON decoding and encoding,
// as one HTTP request would do.
func BenchmarkDecodeAndCalculate(b *testing.B) {
	body := []byte(`{"grossSalary":"36037","effectiveDate":"2026-01-15","overtimeHours":8,"nightHours":16,"deductions":[{"description":"x","amount":"100"}]}`)
	b.ReportAllocs()
	for b.Loop() {
		in, err := payroll.DecodeInput(body)
		if err != nil {
			b.Fatal(err)
		}
		r, err := payroll.Calculate(in, today)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = r.MarshalJSON()
	}
}

// BenchmarkBatch500: 500 gross→net months, the engine alone (decoded
// inputs, results kept): the baseline of the batch endpoint.
func BenchmarkBatch500(b *testing.B) {
	inputs := make([]payroll.Input, 500)
	for i := range inputs {
		g := fmt.Sprint(30000 + 37*i)
		inputs[i] = payroll.Input{GrossSalary: &g, EffectiveDate: s("2026-09-15")}
	}
	b.ReportAllocs()
	for b.Loop() {
		for i := range inputs {
			if _, err := payroll.Calculate(&inputs[i], today); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkBatch500JSON: the same 500 months from the request body to the
// response body, as the batch endpoint runs them without HTTP.
func BenchmarkBatch500JSON(b *testing.B) {
	var body []byte
	body = append(body, `{"inputs":[`...)
	for i := range 500 {
		if i > 0 {
			body = append(body, ',')
		}
		body = fmt.Appendf(body, `{"grossSalary":"%d","effectiveDate":"2026-09-15"}`, 30000+37*i)
	}
	body = append(body, "]}"...)
	buf := make([]byte, 0, 1<<20)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = payroll.AppendBatchJSON(buf[:0], body, today, false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendGrossToNet is BenchmarkGrossToNet as the HTTP handler
// runs it: the result written as JSON into a reused buffer, never kept.
func BenchmarkAppendGrossToNet(b *testing.B) {
	in := payroll.Input{GrossSalary: s("36037"), EffectiveDate: s("2026-01-15"), OvertimeHours: payroll.NewNumber(8)}
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = payroll.AppendCalculation(buf[:0], &in, today, false); err != nil {
			b.Fatal(err)
		}
	}
}
