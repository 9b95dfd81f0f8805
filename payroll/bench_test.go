package payroll_test

import (
	"testing"

	"github.com/denar-mk/denar/payroll"
)

func BenchmarkGrossToNet(b *testing.B) {
	in := payroll.Input{GrossSalary: s("36037"), EffectiveDate: s("2026-01-15"), OvertimeHours: payroll.NewNumber(8)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := payroll.Calculate(&in, today); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNetToGross(b *testing.B) {
	in := payroll.Input{TargetNet: s("50000"), EffectiveDate: s("2025-06-15")}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := payroll.Calculate(&in, today); err != nil {
			b.Fatal(err)
		}
	}
}
