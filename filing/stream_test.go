package filing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"testing"
)

// errorText is an error as the API would answer it: a validation error's
// code, message and fields, a blocking error's issues, or the text.
func errorText(err error) string {
	var b *BlockingError
	if errors.As(err, &b) {
		err = b.AsDenarError()
	}
	if err == nil {
		return "<nil>"
	}
	out, _ := json.Marshal(err)
	return fmt.Sprintf("%T %v %s", err, err, out)
}

// sameFromStream checks that the streamed entry points (records worked out
// as they are decoded, a run at a time) answer body exactly as decoding it
// whole and calling the in-memory ones does: the same issues, file bytes
// and errors.
func sameFromStream(t *testing.T, body []byte) {
	t.Helper()
	st := stat2026{}
	req, derr := DecodeMpinFrom(bytes.NewReader(body))
	res, err := ValidateFrom(bytes.NewReader(body), st)
	if errorText(derr) != errorText(err) {
		t.Fatalf("%.300s\nvalidate: %s\nwant %s", body, errorText(err), errorText(derr))
	}
	if derr == nil {
		if got, want := mustJSON(t, res), mustJSON(t, Validate(req, st)); got != want {
			t.Fatalf("%.300s\nissues %.500s\nwant   %.500s", body, got, want)
		}
	}
	for _, kind := range []string{"xml", "txt"} {
		gen, from := MpinXML, MpinXMLFrom
		if kind == "txt" {
			gen, from = MpinTXT, MpinTXTFrom
		}
		f, err := from(bytes.NewReader(body), st)
		var want []byte
		werr := derr
		if derr == nil {
			want, werr = gen(req, st)
		}
		if errorText(err) != errorText(werr) {
			t.Fatalf("%.300s\n%s: %s\nwant %s", body, kind, errorText(err), errorText(werr))
		}
		if err == nil {
			if got := f.Bytes(); !bytes.Equal(got, want) {
				t.Fatalf("%.300s\n%s: %d bytes differ from the %d of the request in memory", body, kind, len(got), len(want))
			}
			if name := FileName(&req.Company, &req.Batch, kind); f.Name != name {
				t.Fatalf("%s: name %q, want %q", kind, f.Name, name)
			}
		}
	}
	creq, cderr := DecodeCombinedFrom(bytes.NewReader(body))
	f, err := CombinedTXTFrom(bytes.NewReader(body), st)
	var want []byte
	werr := cderr
	if cderr == nil {
		want, werr = CombinedTXT(creq, st)
	}
	if errorText(err) != errorText(werr) {
		t.Fatalf("%.300s\ncombined: %s\nwant %s", body, errorText(err), errorText(werr))
	}
	if err == nil && !bytes.Equal(f.Bytes(), want) {
		t.Fatalf("%.300s\ncombined: the file differs from the request in memory", body)
	}
}

// membersInOrder writes the object m with its members in the order given
// (those not named after them, sorted).
func membersInOrder(m map[string]any, order ...string) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	done := map[string]bool{}
	keys := append([]string(nil), order...)
	rest := []string{}
	for k := range m {
		rest = append(rest, k)
	}
	sort.Strings(rest)
	for _, k := range append(keys, rest...) {
		v, ok := m[k]
		if !ok || done[k] {
			continue
		}
		if len(done) > 0 {
			b.WriteByte(',')
		}
		done[k] = true
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(v)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// recordChanges are what streamedBody does to records: every check, and
// (rarely) what decoding refuses.
var recordChanges = []func(r *rand.Rand, rec map[string]any){
	func(r *rand.Rand, rec map[string]any) { rec["contractNo"] = r.IntN(4) },
	func(r *rand.Rand, rec map[string]any) { rec["hireDay"] = r.IntN(33) },
	func(r *rand.Rand, rec map[string]any) { rec["leaveDay"] = r.IntN(33) },
	func(r *rand.Rand, rec map[string]any) { delete(rec, "leaveDay") },
	func(r *rand.Rand, rec map[string]any) { rec["salaryGross"] = fmt.Sprint(30000 + r.IntN(90000)) },
	func(r *rand.Rand, rec map[string]any) { rec["pension"] = "1.5" },
	func(r *rand.Rand, rec map[string]any) { rec["overtimeHours"] = r.IntN(20) },
	func(r *rand.Rand, rec map[string]any) { rec["workingHours"] = r.IntN(200) },
	func(r *rand.Rand, rec map[string]any) { rec["absentHours"] = r.IntN(30) },
	func(r *rand.Rand, rec map[string]any) {
		rec["sickCompanyHours"] = r.IntN(30)
		rec["sickCompanyRate"] = 70
	},
	func(r *rand.Rand, rec map[string]any) { rec["netPaid"] = "999999" },
	func(r *rand.Rand, rec map[string]any) { rec["insuranceCode"] = "9999" },
	func(r *rand.Rand, rec map[string]any) { rec["serviceDays"] = r.IntN(40) },
	func(r *rand.Rand, rec map[string]any) { rec["salaryGross"] = "999999999.99" },
	func(r *rand.Rand, rec map[string]any) { rec["bonusAmount"] = "123.456" },
	func(r *rand.Rand, rec map[string]any) {
		rec["employee"].(map[string]any)["embg"] = []string{"0101970450052", "", "1234"}[r.IntN(3)]
	},
	func(r *rand.Rand, rec map[string]any) {
		e := rec["employee"].(map[string]any)
		e["lastName"] = []string{"Petrov", "Ѓорѓиев", "Zhivkov", "Xy1", "Јованов"}[r.IntN(5)]
		delete(e, "lastNameCyr")
	},
	// Refused by decoding:
	func(r *rand.Rand, rec map[string]any) { rec["pit"] = "abc" },
	func(r *rand.Rand, rec map[string]any) { rec["workingHours"] = 1e12 },
	func(r *rand.Rand, rec map[string]any) { rec["colour"] = 1 },
	func(r *rand.Rand, rec map[string]any) { rec["employee"].(map[string]any)["firstName"] = 5 },
}

// refusedFrom is the index of the first recordChanges decoding refuses.
const refusedFrom = 17

// streamedBody is a random МПИН or combined request: records with every
// kind of issue, duplicates, re-hires, batches (some null or empty), and
// the members in every order (the records before the company or batch
// are worked out from their bytes once both are known).
func streamedBody(r *rand.Rand, records int) []byte {
	req := fixtureRegular()
	if r.IntN(3) == 0 {
		req = fixtureCorrection()
	}
	req.Records = variedRecords(1 + r.IntN(records))
	req.Force = r.IntN(2) == 0
	if r.IntN(5) == 0 {
		req.Batch.PeriodMonth = []int{0, 7, 12}[r.IntN(3)]
	}
	if r.IntN(8) == 0 {
		req.Batch.PeriodYear = 2025 // no statutory figures
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(mustJSON(&testing.T{}, req)), &m); err != nil {
		panic(err)
	}
	recs := m["records"].([]any)
	for _, rec := range recs {
		if r.IntN(3) != 0 {
			continue
		}
		k := r.IntN(len(recordChanges))
		for k >= refusedFrom && r.IntN(60) != 0 {
			k = r.IntN(len(recordChanges))
		}
		recordChanges[k](r, rec.(map[string]any))
	}
	if len(recs) > 3 && r.IntN(3) == 0 {
		recs[len(recs)-1] = recs[1]
	}
	if r.IntN(2) == 0 {
		var batches []any
		k := 1 + r.IntN(3)
		for i := range k {
			switch r.IntN(8) {
			case 0:
				batches = append(batches, nil)
			case 1:
				batches = append(batches, map[string]any{"records": []any{}})
			default:
				batches = append(batches, map[string]any{"records": recs[len(recs)*i/k : len(recs)*(i+1)/k]})
			}
		}
		m["batches"] = batches
		delete(m, "records")
	}
	orders := [][]string{{"company", "batch", "force"}, {"records", "batches", "company", "batch"}, {"company", "records", "batches", "batch"}, {"force", "batch", "batches", "records"}}
	return membersInOrder(m, orders[r.IntN(len(orders))]...)
}

// TestStreamedIsInMemory: the file endpoints' streamed work answers
// exactly what the request decoded whole does, on varied requests small
// and larger than a run of records.
func TestStreamedIsInMemory(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(30, 47))
	for range 300 {
		sameFromStream(t, streamedBody(r, 30))
	}
	for range 6 {
		sameFromStream(t, streamedBody(r, 3*runLength))
	}
	for _, body := range []string{
		``, `null`, `{}`, `{"records":null}`, `{"batches":[]}`, `{"records":[],"company":{"name":"x"}}`,
		`{"records":[{"colour":1}],"company":{"colour":1}}`,
		`{"records":[{}],"batch":{"periodMonth":5,"periodYear":2026},"company":{"name":"x"}}`,
		`{"batches":[null,{"records":[{}]}],"batch":{"periodMonth":5,"periodYear":2026},"company":{"name":"x"}}`,
		`{"records" : [ ] , "batch":{"periodMonth":5,"periodYear":2026},"company":{"name":"x"}}`,
	} {
		sameFromStream(t, []byte(body))
	}
}

func FuzzStreamedIsInMemory(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		f.Add(streamedBody(r, 8))
	}
	f.Fuzz(func(t *testing.T, body []byte) { sameFromStream(t, body) })
}

// TestStreamedFileHoldsEmployees: a file built from a streamed request
// holds its employees, not its records: 20,000 records (2.2 kB each, 44 MB)
// leave a File of a few megabytes. Not parallel: it reads the heap.
func TestStreamedFileHoldsEmployees(t *testing.T) {
	req := fixtureRegular()
	req.Records, req.Force = manyRecords(20000), true
	body := []byte(mustJSON(t, req))
	heap := func() int64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	with := func() int64 {
		f, err := MpinXMLFrom(bytes.NewReader(body), stat2026{})
		if err != nil {
			t.Fatal(err)
		}
		h := heap()
		if b := f.Bytes(); len(b) < 20000*1000 || !bytes.HasSuffix(b, []byte(xmlFooter)) {
			t.Errorf("a file of %d bytes", len(b))
		}
		return h
	}()
	held := with - heap()
	if held > 16<<20 {
		t.Errorf("the file of 20,000 records holds %d MB", held>>20)
	}
	t.Logf("the file of 20,000 records holds %.1f MB", float64(held)/(1<<20))
	runtime.KeepAlive(body)
}
