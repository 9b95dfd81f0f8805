package filing

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/denar-mk/denar/money"
)

// variedRecords are many records with issues sprinkled in: duplicates,
// wrong contributions, amounts with more than two decimals, so that the
// parallel and the sequential path meet every kind of record.
func variedRecords(n int) []Record {
	recs := manyRecords(n)
	for i := range recs {
		switch {
		case i%97 == 5:
			recs[i].Pension = Money{D: recs[i].Pension.D.Add(money.FromInt(7)), Set: true}
		case i%89 == 3:
			recs[i].SalaryGross = Money{D: recs[i].SalaryGross.D.Add(money.MustParse("0.005")), Set: true}
		case i%83 == 1:
			recs[i].PIT = Money{D: money.MustParse("1.5"), Set: true}
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
	run := func(from int) (Result, []byte, []byte) {
		res := validate(req, stat2026{}, from)
		x, err := mpinXML(req, stat2026{}, from)
		if err != nil {
			t.Fatal(err)
		}
		y, err := mpinTXT(req, stat2026{}, from)
		if err != nil {
			t.Fatal(err)
		}
		return res, x, y
	}
	pres, px, py := run(parallelMin)
	sres, sx, sy := run(sequential)
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

// BenchmarkMpinXML10kSequential is the baseline for BenchmarkMpinXML10k in
// the same run: the same file on one goroutine.
func BenchmarkMpinXML10kSequential(b *testing.B) {
	benchmarkMpinXML10k(b, sequential)
}

// BenchmarkMpinTXT10kSequential is the one-goroutine baseline of
// BenchmarkMpinTXT10k.
func BenchmarkMpinTXT10kSequential(b *testing.B) {
	benchmarkMpinTXT10k(b, sequential)
}
