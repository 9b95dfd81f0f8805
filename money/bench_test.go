package money_test

import (
	"testing"

	"github.com/denar-mk/denar/money"
)

var sink money.Amount

func BenchmarkAddSameScale(b *testing.B) {
	x, y := money.New(3603750, 2), money.New(12345, 2)
	for b.Loop() {
		sink = x.Add(y)
	}
}

func BenchmarkAddMixedScale(b *testing.B) {
	x, y := money.FromInt(36037), money.New(12345, 2)
	for b.Loop() {
		sink = x.Add(y)
	}
}

func BenchmarkMulDiv(b *testing.B) {
	x, y, z := money.FromInt(36037), money.New(2160, 0), money.FromInt(17600)
	for b.Loop() {
		sink = x.MulDiv(y, z, 2)
	}
}

func BenchmarkMulRound(b *testing.B) {
	x, y := money.New(3603750, 2), money.New(188, 3)
	for b.Loop() {
		sink = x.Mul(y).Round(2)
	}
}
