package filing

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/denar-mk/denar"
)

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sameDecoding checks that the streaming decoders accept exactly what the
// buffered ones accept and decode it to the same request.
func sameDecoding(t *testing.T, body string) {
	t.Helper()
	want, werr := DecodeMpin([]byte(body))
	got, gerr := DecodeMpinFrom(strings.NewReader(body))
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%.200q: DecodeMpin error %v, DecodeMpinFrom error %v", body, werr, gerr)
	}
	if werr == nil && !reflect.DeepEqual(want, got) {
		t.Fatalf("%.200q: decoded differently:\n%+v\n%+v", body, want, got)
	}
	var de *denar.Error
	if gerr != nil && !errors.As(gerr, &de) {
		t.Fatalf("%.200q: %v is not a validation error", body, gerr)
	}
	cwant, cwerr := DecodeCombined([]byte(body))
	cgot, cgerr := DecodeCombinedFrom(strings.NewReader(body))
	if (cwerr == nil) != (cgerr == nil) {
		t.Fatalf("%.200q: DecodeCombined error %v, DecodeCombinedFrom error %v", body, cwerr, cgerr)
	}
	if cwerr == nil && !reflect.DeepEqual(cwant, cgot) {
		t.Fatalf("%.200q: combined decoded differently:\n%+v\n%+v", body, cwant, cgot)
	}
}

func TestDecodeFromMatchesDecode(t *testing.T) {
	t.Parallel()
	reg, cor := fixtureRegular(), fixtureCorrection()
	regular := mustJSON(t, reg)
	combined := mustJSON(t, &CombinedRequest{Company: reg.Company, Batch: reg.Batch, Batches: []BatchRecords{{reg.Records}, {cor.Records}}})
	for _, body := range []string{
		regular, mustJSON(t, cor), combined,
		strings.Replace(regular, `"records"`, `"Records"`, 1), // keys match without regard to case
		strings.Replace(regular, `"company"`, `"company":{"name":"first"},"company"`, 1),
		`{"company":{"name":"x"},"batch":{"periodMonth":5,"periodYear":2026},"records":[]}`,
		`{"company":{"name":"x"},"batch":{"periodMonth":5,"periodYear":2026},"records":[null]}`,
		`{"company":{"name":"x"},"batch":{"periodMonth":5,"periodYear":2026},"records":null}`,
		`{"company":{"name":"x"},"batch":{"periodMonth":5,"periodYear":2026},"batches":[{"records":[]},null]}`,
		`{"company":{"name":"x"},"batch":{"periodMonth":5,"periodYear":2026},"records":[],"force":"yes"}`,
		`{"company":{"name":"x"},"batch":{"periodMonth":5,"periodYear":2026},"records":{}}`,
		`{"company":{"name":"x"},"records":[{"hireDay":"1"}]}`,
		`{"records":[{"colour":1}]}`, `{"colour":1}`, `{"batches":[{"colour":1}]}`,
		`null`, ``, ` `, `[]`, `"x"`, `{`, `{"records":[`, `{"records":[{}`, `{} {}`, `{}]`, `{"a"}`,
	} {
		sameDecoding(t, body)
	}
}

// TestMalformedJSONAlike: malformed JSON is one error at the root with the
// byte offset of the token that failed, the same from the streaming
// decoder as from decoding the body whole.
func TestMalformedJSONAlike(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		``, `   `, `{`, `{"records":[`, `{"records":[{"salaryGross":}]}`, `{"company":{"name":"x",}}`,
		`{"records":[{},{"employee":{"firstName":"a" "lastName":"b"}}]}`, `{"batch":{"periodMonth":5,"periodYear":20x6}}`,
		`{"records":[{"hireDay":1}]`, `{"force":tru}`,
	} {
		_, whole := DecodeMpin([]byte(body))
		_, streamed := DecodeMpinFrom(strings.NewReader(body))
		var w, s *denar.Error
		if !errors.As(whole, &w) || !errors.As(streamed, &s) || len(w.Fields) != 1 || len(s.Fields) != 1 {
			t.Errorf("%q: %v / %v", body, whole, streamed)
			continue
		}
		if w.Fields[0].Path != s.Fields[0].Path || w.Fields[0].Message != s.Fields[0].Message {
			t.Errorf("%q: whole %+v, streamed %+v", body, w.Fields[0], s.Fields[0])
		}
		if f := s.Fields[0]; f.Path != "" || !strings.HasPrefix(f.Message, "malformed JSON") || (body != "" && body != "   " && !strings.Contains(f.Message, "at byte ")) {
			t.Errorf("%q: %+v, want malformed JSON at the root with its byte", body, f)
		}
	}
}

// TestDecodeFromPaths: the streaming decoder names the record of a bad
// field.
func TestDecodeFromPaths(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ body, path string }{
		{`{"records":[{},{"hireDay":"1"}]}`, "records[1].hireDay"},
		{`{"records":[{},{},{"employee":{"firstName":5}}]}`, "records[2].employee.firstName"},
		{`{"records":[{"colour":1}]}`, "records[0].colour"},
		{`{"colour":1}`, "colour"},
		{`{"force":"yes"}`, "force"},
		{`{"records":5}`, "records"},
		{`{"batches":[{"records":[{"leaveDay":true}]}]}`, "batches[0].records[0].leaveDay"},
		{`{"records":[`, ""}, // malformed JSON: at the root
		{`{"records":[]} {}`, ""},
		{`{"records":[{"employee":{"age":1}}]}`, "records[0].employee.age"},
		{`{"company":{"name":"a"},"records":[],"company":{"name":"b"}}`, "company"},
		{`{"records":[],"Records":[]}`, "Records"},
		{`{"batches":[{"records":[]},{"records":[],"records":[]}]}`, "batches[1].records"},
		{`{"records":[{},{"employee":{"firstName":"a","firstName":"b"}}]}`, "records[1].employee.firstName"},
		{`{"records":[{"employee":{"firstName":"\ud800"}}]}`, "records[0].employee.firstName"},
	} {
		_, err := DecodeMpinFrom(strings.NewReader(tt.body))
		if strings.Contains(tt.body, "batches") {
			_, err = DecodeCombinedFrom(strings.NewReader(tt.body))
		}
		var de *denar.Error
		if !errors.As(err, &de) || len(de.Fields) == 0 || de.Fields[0].Path != tt.path {
			t.Errorf("%s: %v, want a field error at %s", tt.body, err, tt.path)
		}
	}
}

type failingReader struct {
	r   io.Reader
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, f.err
	}
	return n, err
}

// TestDecodeFromReadError: an error of the reader (the body over its limit,
// say) is not mistaken for the client's malformed JSON.
func TestDecodeFromReadError(t *testing.T) {
	t.Parallel()
	tooBig := errors.New("body too large")
	body := mustJSON(t, fixtureRegular())
	for _, cut := range []int{0, 1, len(body) / 2, len(body) - 1} {
		_, err := DecodeMpinFrom(&failingReader{r: strings.NewReader(body[:cut]), err: tooBig})
		var de *denar.Error
		if !errors.Is(err, tooBig) || errors.As(err, &de) {
			t.Errorf("cut at %d: %v, want the reader's error unchanged", cut, err)
		}
	}
}

// TestDecodeFromReadsRecordByRecord: decoding 2,000 records holds at most a
// record or two of the body at a time, not the whole body.
func TestDecodeFromReadsRecordByRecord(t *testing.T) {
	t.Parallel()
	req := fixtureRegular()
	req.Records = manyRecords(2000)
	body := []byte(mustJSON(t, req))
	r := &countingReader{r: bytes.NewReader(body)}
	got, err := DecodeMpinFrom(r)
	if err != nil || len(got.Records) != 2000 {
		t.Fatalf("%d records, %v", len(got.Records), err)
	}
	if r.maxChunk > 64<<10 {
		t.Errorf("the decoder asked for %d bytes at once from a %d-byte body", r.maxChunk, len(body))
	}
}

type countingReader struct {
	r        io.Reader
	maxChunk int
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.maxChunk = max(c.maxChunk, len(p))
	return c.r.Read(p)
}

func FuzzDecodeFrom(f *testing.F) {
	f.Add(mustJSON(f, fixtureRegular()))
	f.Add(`{"company":{"name":"x"},"batch":{"periodMonth":5,"periodYear":2026},"batches":[{"records":[{"salaryGross":"1"}]}]}`)
	f.Add(`{"records":[null,{"hireDay":1}],"Force":true}`)
	f.Add(`{"company":{"name":"x"},"company":{"taxId":"1"}}`)
	f.Fuzz(func(t *testing.T, body string) { sameDecoding(t, body) })
}
