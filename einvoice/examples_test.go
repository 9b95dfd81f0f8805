package einvoice

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
)

// The examples corpus: einvoice/examples/NAME.json are request bodies as a
// caller sends them (an issue body, and for a storno or a correction the
// body of that operation on the issued original), and examples/out/ holds
// what the service makes of each: the payload the company signs and UJP
// receives, and the totals the API answers. TestExamples rebuilds every
// output and compares it byte for byte (-update rewrites them); the strict
// simulator checks the same outputs with its own reading of UJP's rules
// (internal/ujpsim, TestExamplesCorpus).

// example is one file of the corpus.
type example struct {
	Description string             `json:"description"`
	Issue       json.RawMessage    `json:"issue"`
	Storno      *exampleStorno     `json:"storno,omitempty"`
	Correction  *CorrectionRequest `json:"correction,omitempty"`
}

// exampleStorno is the body of POST /v1/einvoices/{id}/storno.
type exampleStorno struct {
	Reason    string  `json:"reason"`
	Comment   *string `json:"comment"`
	Number    string  `json:"number"`
	IssueDate string  `json:"issueDate"`
}

// exampleOut is one document of the corpus's output.
type exampleOut struct {
	Totals  Totals         `json:"totals"`
	Payload ujpdoc.Request `json:"payload"`
}

// exampleSeller is the sandbox's seller as UJP's registry has it.
func exampleSeller() ujpdoc.Seller {
	vat := "МК4030000000001"
	return ujpdoc.Seller{SellerCCode: "MK", SellerCName: "Северна Македонија", SellerTin: "4030000000001", SellerVatNumber: &vat,
		SellerName:    "Тест Продавач ДООЕЛ Скопје",
		SellerAddress: ujpdoc.Address{StreetAddress: "бул. Партизански одреди", StreetNumber: "1", PostalCode: "1000", City: "Скопје"}}
}

// exampleTimestamp is the request timestamp of every output: the payload is
// signed within minutes of it, so it is fixed for the golden files.
var exampleTimestamp = time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC)

// exampleEUID is the EUID UJP gave the original of a storno or correction.
const exampleEUID = "0193a1f2-7c4e-7d3a-9b21-5e6f7a8b9c0d"

func TestExamples(t *testing.T) {
	cb := ujpdoc.Snapshot()
	files, err := filepath.Glob("examples/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	written := map[string]bool{}
	var docs []*ujpdoc.Document
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var ex example
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&ex); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if ex.Description == "" {
				t.Errorf("%s: no description", f)
			}
			// The issue body is decoded as the API decodes it: strictly.
			req, err := Decode(bytes.NewReader(ex.Issue))
			if err != nil {
				t.Fatalf("issue: %v", err)
			}
			orig, err := req.Build(exampleSeller(), "einv_ex_"+name, cb)
			if err != nil {
				t.Fatalf("issue: %v", err)
			}
			docs = append(docs, orig)
			golden(t, name, orig)
			written[name] = true
			if s := ex.Storno; s != nil {
				if err := (Storno{Reason: s.Reason, Comment: s.Comment}).Validate(cb); err != nil {
					t.Fatalf("storno: %v", err)
				}
				d, err := ujpdoc.Storno(orig, exampleEUID, "einv_ex_"+name+"_storno", s.Number, s.Reason, s.Comment, s.IssueDate, cb)
				if err != nil {
					t.Fatalf("storno: %v", err)
				}
				if ps := ujpdoc.Validate(d, cb); len(ps) > 0 {
					t.Fatalf("storno: %v", ps.Err())
				}
				docs = append(docs, d)
				golden(t, name+".storno", d)
				written[name+".storno"] = true
			}
			if c := ex.Correction; c != nil {
				d, err := c.Build(exampleSeller(), "einv_ex_"+name+"_correction", cb)
				if err != nil {
					t.Fatalf("correction: %v", err)
				}
				ujpdoc.MarkCorrection(d, exampleEUID, orig.Header.DocDate, c.Reason, c.Comment, cb)
				if ps := ujpdoc.Validate(d, cb); len(ps) > 0 {
					t.Fatalf("correction: %v", ps.Err())
				}
				docs = append(docs, d)
				golden(t, name+".correction", d)
				written[name+".correction"] = true
			}
		})
	}

	// No output without its example.
	outs, _ := filepath.Glob("examples/out/*.json")
	for _, o := range outs {
		if n := strings.TrimSuffix(filepath.Base(o), ".json"); !written[n] {
			t.Errorf("%s has no example (remove it, or run with -update)", o)
		}
	}

	// The corpus covers what the spec's documents can be: every document
	// type, every vatImpact of a tax indicator, discounts, an advance, a
	// foreign currency, a storno and a correction.
	seen := map[string]bool{}
	for _, d := range docs {
		seen["type "+d.Header.DocType] = true
		seen["storno "+string(rune('0'+d.Header.DocStorno))] = true
		if d.DocPayment.DocCurrencyCode != "MKD" {
			seen["foreign currency"] = true
		}
		if !d.DocTotals.DocAvansAmount.IsZero() {
			seen["advance"] = true
		}
		if !d.DocTotals.DocDiscountAmount.IsZero() {
			seen["discount"] = true
		}
		if d.Buyer.BuyerCCode != "MK" {
			seen["foreign buyer"] = true
		}
		if d.Sender != nil {
			seen["sender"] = true
		}
		for _, it := range d.DocItems {
			if ti, ok := cb.TaxIndicator(it.DocItemTaxIndicator); ok {
				seen["vatImpact "+string(ti.VatImpact)] = true
			}
		}
	}
	var want []string
	for _, dt := range cb.DocumentTypes {
		want = append(want, "type "+dt.Code)
	}
	impacts := map[string]bool{}
	for _, ti := range cb.TaxIndicators {
		impacts[string(ti.VatImpact)] = true
	}
	for v := range impacts {
		want = append(want, "vatImpact "+v)
	}
	want = append(want, "storno 0", "storno 1", "storno 2", "foreign currency", "advance", "discount", "foreign buyer", "sender")
	slices.Sort(want)
	for _, w := range want {
		if !seen[w] {
			t.Errorf("the corpus has no example of %s", w)
		}
	}
}

// golden compares d's output with examples/out/name.json.
func golden(t *testing.T, name string, d *ujpdoc.Document) {
	t.Helper()
	out := exampleOut{Totals: DocTotals(d), Payload: ujpdoc.Request{RequestTimestamp: ujpdoc.FormatTimestamp(exampleTimestamp), Document: *d}}
	got, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("examples", "out", name+".json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what the example builds now (run with -update and review the diff)\n%s", path, got)
	}
}
