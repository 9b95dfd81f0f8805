package filing

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/denar-mk/denar/money"
)

// TestWholeRowsAreAnyRows: for records whose figures are whole numbers (as
// calculation results are), the integer path writes exactly the rows of the
// general path — kinds in and out of the fund and the gross, pays rounded
// one by one beyond the gross, kinds that exceed the fund.
func TestWholeRowsAreAnyRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 3))
	b := &Batch{}
	base := detail{Staz: "0050", Contract: 1, From: 1, To: 30, Days: 30, Movement: "1"}
	for i := range 20000 {
		r := fixtureRegular().Records[i%len(fixtureRegular().Records)]
		hours, pays := kindFields(&r)
		for k := range kinds {
			if hours[k] != nil {
				*hours[k] = Num{}
			}
			if pays[k] != nil {
				*pays[k] = Money{}
			}
			if rng.IntN(3) != 0 {
				continue
			}
			if hours[k] != nil {
				*hours[k] = Num{D: money.FromInt(rng.Int64N(60)), Set: true}
			}
			if pays[k] != nil {
				*pays[k] = Money{D: money.FromInt(rng.Int64N(20000)), Set: true}
			}
		}
		gross := int64(0)
		for k := range kinds {
			if kinds[k].inGross {
				gross += payOfKind(pays[k]).Whole()
			}
		}
		switch rng.IntN(4) {
		case 0: // pays rounded one by one: a denar or two over the gross
			gross -= rng.Int64N(3)
		case 1:
			gross += rng.Int64N(50000)
		case 2:
			gross -= rng.Int64N(5000)
		}
		r.SalaryGross = Money{D: money.New(gross*100, 2), Set: true}
		r.AbsentHours = Num{}
		if rng.IntN(4) == 0 {
			r.AbsentHours = Num{D: money.FromInt(rng.Int64N(80)), Set: true}
		}
		r.WorkingHours = Num{}
		if rng.IntN(2) == 0 {
			r.WorkingHours = Num{D: money.FromInt(120 + rng.Int64N(80)), Set: true}
		}
		h := recordHours(&r, b)
		got, gotH := wholeRows(&r, h, base)
		if got == nil {
			t.Fatalf("record %d: whole figures not taken by the integer path", i)
		}
		want, wantH := anyRows(&r, h, base)
		if !reflect.DeepEqual(got, want) || gotH != wantH {
			t.Fatalf("record %d:\n whole %+v (%d)\n   any %+v (%d)", i, got, gotH, want, wantH)
		}
	}
	// A fraction anywhere leaves the record to the general path.
	r := fixtureRegular().Records[0]
	r.NightHours = Num{D: money.MustParse("1.5"), Set: true}
	if rows, _ := wholeRows(&r, recordHours(&r, b), base); rows != nil {
		t.Fatal("fractional hours taken by the integer path")
	}
}
