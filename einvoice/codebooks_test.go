package einvoice

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
)

// TestCodebooksDoc keeps docs/codebooks.md in step with the embedded
// snapshot: the page is generated from it (go test ./einvoice -run
// CodebooksDoc -update), so it cannot drift from what the service checks.
func TestCodebooksDoc(t *testing.T) {
	t.Parallel()
	got := codebooksMarkdown(ujpdoc.Snapshot())
	path := filepath.Join("..", "docs", "codebooks.md")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale; regenerate it with: go test ./einvoice -run CodebooksDoc -update", path)
	}
}

// TestCodebooks checks the catalogue against the lists validation uses:
// every list a field error can name is served, and every value the
// catalogue serves is one Build accepts.
func TestCodebooks(t *testing.T) {
	t.Parallel()
	cb := ujpdoc.Snapshot()
	names := CodebookNames()
	for _, n := range []string{ujpdoc.CBDocumentTypes, ujpdoc.CBRefDocumentTypes, ujpdoc.CBPaymentTypes, ujpdoc.CBCurrencies,
		ujpdoc.CBCountries, ujpdoc.CBVoidReasons, ujpdoc.CBCorrectionReasons, ujpdoc.CBRejectReasons, ujpdoc.CBTaxGroups,
		ujpdoc.CBTaxIndicators, ujpdoc.CBDocumentStatuses} {
		if !slices.Contains(names, n) {
			t.Errorf("codebook %s is not served", n)
		}
		info, values, ok := Codebook(cb, n)
		if !ok || info.Count != len(values) || len(values) == 0 {
			t.Errorf("%s: ok %v, count %d, %d values", n, ok, info.Count, len(values))
		}
	}
	if _, _, ok := Codebook(cb, "units"); ok {
		t.Error("an unknown list is served")
	}
	_, inds, _ := Codebook(cb, ujpdoc.CBTaxIndicators)
	for _, v := range inds {
		if len(v.VatPercents) == 0 || len(v.VatPercents) != len(v.TaxGroups) || v.VatImpact == "" {
			t.Errorf("tax indicator %s: groups %v, rates %v, impact %q", v.Code, v.TaxGroups, v.VatPercents, v.VatImpact)
		}
	}
	// Every tax indicator, at each of its rates, passes Build.
	for _, v := range inds {
		for _, pct := range v.VatPercents {
			r := validRequest()
			r.Lines = r.Lines[:1]
			r.Lines[0].TaxIndicator, r.Lines[0].VatPercent = v.Code, fmt.Sprint(pct)
			if _, err := r.Build(seller(), "doc-1", cb); err != nil && strings.Contains(err.Error(), "lines[0].taxIndicator") {
				t.Errorf("%s at %d%%: %v", v.Code, pct, err)
			}
		}
	}
}

// codebooksMarkdown renders docs/codebooks.md.
func codebooksMarkdown(cb *ujpdoc.Codebooks) []byte {
	var b bytes.Buffer
	b.WriteString(`# Codebooks

<!-- Generated from the embedded codebooks by go test ./einvoice -run CodebooksDoc -update; do not edit. -->

Some fields of an e-invoice take a code from one of UJP's code lists (codebooks): the tax indicator of
a line, the payment type, a storno's void reason, an inbox rejection's reason. This page lists the
values of each list as the service ships them. The service checks every such code before anything is
sent to UJP; a code that is not in the list is answered ` + "`422 validation_failed`" + ` with the
list's name in ` + "`errors[].codebook`" + ` and the endpoint that lists its values in the message:

` + "```json" + `
{"path": "lines[0].taxIndicator", "message": "\"DDV-X\" is not a tax indicator (allowed values: GET /v1/codebooks/tax-indicators)", "codebook": "tax-indicators"}
` + "```" + `

**The lists can change.** UJP publishes them through its API; the service reads UJP's lists every six
hours and checks against those, and uses the snapshot below until the first read succeeds (or when a
list comes back empty). Ask the service for the lists it checks against right now:

` + "```sh" + `
curl -s http://127.0.0.1:8081/v1/codebooks -H "Authorization: Bearer $KEY"                 # every list, with its size
curl -s http://127.0.0.1:8081/v1/codebooks/tax-indicators -H "Authorization: Bearer $KEY"  # one list's values
` + "```" + `

Both answers say where the values come from: ` + "`source`" + ` is ` + "`ujp`" + ` (UJP's lists, read at ` + "`fetchedAt`" + `) or
` + "`snapshot`" + ` (the copy on this page). Any API key or token of the e-invoicing service may read them; the lists
are those of the credential's environment (sandbox or production).

**When UJP changes a list.** The service compares each read with the lists it read before. A change (a
new tax indicator, a removed payment type, a renamed document type) is checked against from that read
on, in every process, and is told once:

- every company of the environment gets the event ` + "`codelists.changed`" + ` (as a webhook and in the event feed), whose
  object says per list which codes were ` + "`added`" + `, ` + "`removed`" + ` or ` + "`changed`" + ` (with each property
  before and after) and gives the change in one line (` + "`summary`" + `);
- ` + "`GET /v1/codebooks`" + ` says for each list whether its values are UJP's (` + "`live`" + `) and since when it is
  unchanged (` + "`unchangedSince`" + `): a list that moved lately is the one to look at.

A request using a code UJP removed is refused as any other unknown code (` + "`422`" + `, with the list's name);
a code UJP added is accepted as soon as it is read. Map your ERP's codes again when the event names one
you use. Before going live, ` + "`denar ujp check`" + ` shows how UJP's lists differ from the snapshot on this page
(docs/going-live.md).

Codes are compared verbatim. A few of UJP's codes contain Cyrillic letters that look Latin (the О of
О-6 and О-7, the А of DDV-PNPI-А): copy them from here or from the endpoint. Reject reasons are the
exception: a Latin O-6 or O-7 is accepted and UJP's spelling is sent.

Units of measure (` + "`lines[].unit`" + `) are free text, not a code list: write the unit as it should appear on
the invoice (` + "`час`" + `, ` + "`kg`" + `, ` + "`парче`" + `).

| List | Values | Sent in |
|---|---|---|
`)
	infos := Codebooks(cb)
	for _, info := range infos {
		fmt.Fprintf(&b, "| [%s](#%s) | %d | %s |\n", info.Title, info.Name, info.Count, fieldsText(info.Fields))
	}
	for _, info := range infos {
		_, values, _ := Codebook(cb, info.Name)
		fmt.Fprintf(&b, "\n<a id=\"%s\"></a>\n## %s (`%s`)\n\n%s\n\nSent in: %s. `GET /v1/codebooks/%s`\n\n",
			info.Name, info.Title, info.Name, info.Description, fieldsText(info.Fields), info.Name)
		switch info.Name {
		case ujpdoc.CBTaxIndicators:
			b.WriteString("| Code | VAT rates (vatPercent) | VAT impact | Name | Note on the invoice |\n|---|---|---|---|---|\n")
			for _, v := range values {
				fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", v.Code, RatesText(v), v.VatImpact, cell(v.Name), cell(v.Description))
			}
		case ujpdoc.CBTaxGroups:
			b.WriteString("| Code | vatPercent | Name |\n|---|---|---|\n")
			for _, v := range values {
				fmt.Fprintf(&b, "| `%s` | %d | %s |\n", v.Code, *v.Percent, cell(v.Name))
			}
		case ujpdoc.CBDocumentTypes:
			b.WriteString("| Code | Name | Lines | May refer to a document | Must refer to one |\n|---|---|---|---|---|\n")
			for _, v := range values {
				fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", v.Code, cell(v.Name), yes(*v.HasItems), yes(*v.HasReference), yes(*v.ReferenceRequired))
			}
		default:
			described := slices.ContainsFunc(values, func(v CodebookValue) bool { return v.Description != "" })
			if described {
				b.WriteString("| Code | Name | Description |\n|---|---|---|\n")
			} else {
				b.WriteString("| Code | Name |\n|---|---|\n")
			}
			for _, v := range values {
				if described {
					fmt.Fprintf(&b, "| `%s` | %s | %s |\n", v.Code, cell(v.Name), cell(v.Description))
				} else {
					fmt.Fprintf(&b, "| `%s` | %s |\n", v.Code, cell(v.Name))
				}
			}
		}
	}
	return b.Bytes()
}

func fieldsText(fields []string) string {
	if len(fields) == 0 {
		return "never sent (read only)"
	}
	var out []string
	for _, f := range fields {
		out = append(out, "`"+f+"`")
	}
	return strings.Join(out, ", ")
}

func cell(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ").Replace(s)
}

func yes(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}
