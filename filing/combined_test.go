package filing

import (
	"fmt"
	"math/rand"
	"testing"
)

// The Macedonian alphabet in its own order. Byte (code point) order differs:
// Ѓ Ѕ Ј Љ Њ Ќ Џ are U+0403…U+040F and would all sort before А.
var alphabet = []string{"А", "Б", "В", "Г", "Д", "Ѓ", "Е", "Ж", "З", "Ѕ", "И", "Ј", "К", "Л", "Љ", "М", "Н", "Њ", "О", "П", "Р", "С", "Т", "Ќ", "У", "Ф", "Х", "Ц", "Ч", "Џ", "Ш"}

func TestCollation(t *testing.T) {
	var want []string
	for _, l := range alphabet {
		want = append(want, l+"анески")
	}
	// Two surnames that differ only after a shared prefix, and a Latin one
	// that transliterates to Ѓ.
	want = append(append(append([]string{}, want[:6]...), "Ѓорѓиевска"), want[6:]...)
	recs := make([]Record, len(want))
	perm := rand.New(rand.NewSource(1)).Perm(len(want))
	for i, j := range perm {
		recs[i].Employee.LastName = want[j]
		recs[i].Employee.FirstName = "Име"
	}
	for i, j := range perm {
		if j == 6 {
			recs[i].Employee.LastName = "Gjorgjievska" // Latin; its Cyrillic is derived
		}
	}
	got := sortRecords(recs)
	for i := range got {
		name, _ := cyrName(got[i].Employee.LastNameCyr, got[i].Employee.LastName)
		if name != want[i] {
			t.Errorf("position %d: %s, want %s", i, name, want[i])
		}
	}
}

func TestCombinedDuplicatesAcrossBatches(t *testing.T) {
	reg := fixtureRegular()
	req := &CombinedRequest{Company: reg.Company, Batch: reg.Batch, Batches: []BatchRecords{{reg.Records[:1]}, {reg.Records[:1]}}}
	if res := ValidateCombined(req, stat2026{}); !res.OK {
		t.Errorf("the same employee in a regular run and its correction is not a duplicate: %+v", res.Issues)
	}
	req.Batches[1].Records = append(req.Batches[1].Records, reg.Records[0])
	res := ValidateCombined(req, stat2026{})
	if res.OK || res.Issues[len(res.Issues)-1].Path != "batches[1].records[1].employee.embg" {
		t.Errorf("duplicate inside a batch not reported with its path: %+v", res.Issues)
	}
}

func manyRecords(n int) []Record {
	base := fixtureRegular().Records
	out := make([]Record, n)
	for i := range out {
		out[i] = base[i%len(base)]
		out[i].Employee.LastNameCyr = sp(fmt.Sprintf("%sовски%d", alphabet[i%len(alphabet)], i))
		out[i].ContractNo = nil
		out[i].HireDay, out[i].LeaveDay = nil, nil
	}
	return out
}

func BenchmarkCombinedSort10k(b *testing.B) {
	recs := manyRecords(10000)
	b.ResetTimer()
	for b.Loop() {
		sortRecords(recs)
	}
}

func BenchmarkMpinXML10k(b *testing.B) { benchmarkMpinXML10k(b, parallelMin) }

func benchmarkMpinXML10k(b *testing.B, from int) {
	req := fixtureRegular()
	req.Records, req.Force = manyRecords(10000), true
	b.ResetTimer()
	for b.Loop() {
		if _, err := mpinXML(req, stat2026{}, from); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMpinTXT10k(b *testing.B) { benchmarkMpinTXT10k(b, parallelMin) }

func benchmarkMpinTXT10k(b *testing.B, from int) {
	req := fixtureRegular()
	req.Records, req.Force = manyRecords(10000), true
	b.ResetTimer()
	for b.Loop() {
		if _, err := mpinTXT(req, stat2026{}, from); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidate10k(b *testing.B) {
	req := fixtureRegular()
	req.Records = manyRecords(10000)
	b.ResetTimer()
	for b.Loop() {
		Validate(req, stat2026{})
	}
}

// TestCombinedCorrectionReplaces: a regular run and a 103 correction of one
// of its employees combine into one filing in which that employee appears
// once, with the corrected figures (research §4.1: a correction replaces
// the month's data of the employees it contains). Before, the ЕМБГ was
// written twice under contract 1, which the checks call a blocking
// duplicate (issue 16, defect 5).
func TestCombinedCorrectionReplaces(t *testing.T) {
	reg := fixtureRegular()
	fix := calc("38000", "Marko", "Petrovski")
	fix.Employee = reg.Records[0].Employee
	req := &CombinedRequest{Company: reg.Company, Batch: reg.Batch, Batches: []BatchRecords{{reg.Records}, {[]Record{fix}}}}
	if res := ValidateCombined(req, stat2026{}); !res.OK {
		t.Fatalf("issues: %+v", res.Issues)
	}
	txt, err := CombinedTXT(req, stat2026{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := decodeTXT(txt)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Emps) != len(reg.Records) {
		t.Fatalf("%d employees, want %d (the corrected one once)", len(d.Emps), len(reg.Records))
	}
	seen := map[string]int{}
	for _, e := range d.Emps {
		seen[e.EMBG+"/"+e.Details[0].Staz]++
		if e.EMBG == *fix.Employee.EMBG && e.Amounts[0] != 38000 {
			t.Errorf("corrected employee filed with gross %d, want 38000", e.Amounts[0])
		}
	}
	for k, n := range seen {
		if n > 1 && k != *reg.Records[2].Employee.EMBG+"/0050" { // Игор's two contracts
			t.Errorf("%s filed %d times", k, n)
		}
	}
}
