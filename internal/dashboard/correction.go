package dashboard

// The correction form of an issued e-invoice: the use case of
// POST /v1/einvoices/{id}/correction (einvoicing.Service.CorrectEInvoice),
// whose body is the complete replacement document. The form starts from
// the original (einvoice.RequestOf) and lets a person change its number,
// dates and lines and give UJP's correction reason; the parties, payment
// terms and references stay the original's.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/einvoicing"
)

const (
	// maxFormLines is the most lines the correction form edits (the page
	// stays under 100 KB); a longer document is corrected through the API.
	maxFormLines = 20
	// blankLines are the empty rows the form adds for new lines.
	blankLines = 3
	// maxDescRunes and maxFieldRunes bound what a row of the form carries:
	// a description, and each other field (amounts are at most 32
	// characters anyway). A document with longer values is corrected
	// through the API.
	maxDescRunes  = 400
	maxFieldRunes = 40
)

// maxRunes is the most characters the form takes in field key of a line.
func maxRunes(key string) int {
	if key == "description" {
		return maxDescRunes
	}
	return maxFieldRunes
}

// fitsForm reports whether the correction form can carry doc's lines.
func fitsForm(doc *ujpdoc.Document) bool {
	if len(doc.DocItems) > maxFormLines {
		return false
	}
	for _, l := range einvoice.RequestOf(doc).Lines {
		vals := map[string]string{"description": l.Description, "unit": deref(l.Unit), "quantity": l.Quantity, "unitPrice": l.UnitPrice,
			"unitDiscount": l.UnitDiscount, "vatPercent": l.VatPercent, "taxIndicator": l.TaxIndicator}
		for k, v := range vals {
			if utf8.RuneCountInString(v) > maxRunes(k) {
				return false
			}
		}
	}
	return true
}

// lineKeys are the fields of a line the form edits, in column order.
var lineKeys = []string{"description", "unit", "quantity", "unitPrice", "unitDiscount", "vatPercent", "taxIndicator"}

// lineIDs are the one-letter id suffixes of a row's inputs (l3q: row 3's
// quantity): short ids keep a full form with errors well under 100 KB.
var lineIDs = map[string]byte{"description": 'd', "unit": 'u', "quantity": 'q', "unitPrice": 'p', "unitDiscount": 'r',
	"vatPercent": 'v', "taxIndicator": 't'}

// corrLine is one row of the form: Row is its index in the form, Values its
// fields by key.
type corrLine struct {
	Row    int
	Values map[string]string
}

type correctionData struct {
	base
	Inv                                            einvoicing.EInvoice
	Doc                                            ujpdoc.Document
	Number, IssueDate, SupplyDate, Reason, Comment string
	Reasons                                        []ujpdoc.Code
	Lines                                          []corrLine
	Keys                                           []string
	Indicators                                     []string
	VatPercents                                    []string
	// Other are errors of fields the form does not show (the original's
	// parties or payment), path and message.
	OtherErrs []string
}

// lineField is one input of a line row as the template draws it.
type lineField struct {
	Name, ID, Label, Value, Err, List string
	Size, Max                         int
}

// LineField describes the input of key in row l.
func (c correctionData) LineField(l corrLine, key string) lineField {
	name := fmt.Sprintf("lines[%d].%s", l.Row, key)
	f := lineField{Name: name, ID: fmt.Sprintf("l%d%c", l.Row, lineIDs[key]), Label: fmt.Sprintf("%s, %s %d", c.T("corr."+key), c.T("corr.line"), l.Row+1),
		Value: l.Values[key], Err: c.FieldErr(name), Size: 10, Max: maxRunes(key)}
	// A message may repeat the value (a tax indicator's); clipped, the
	// page stays bounded.
	if r := []rune(f.Err); len(r) > 80 {
		f.Err = string(r[:80]) + "…"
	}
	switch key {
	case "description":
		f.Size = 30
	case "unit":
		f.Size = 5
	case "vatPercent":
		f.Size, f.List = 4, "vat-percents"
	case "taxIndicator":
		f.Size, f.List = 8, "tax-indicators"
	}
	return f
}

// original loads an e-invoice to correct with its document; ok false when
// it was answered (an error page).
func (d *Dashboard) original(q *req) (einvoicing.EInvoice, ujpdoc.Document, bool) {
	inv, err := d.d.Service.EInvoice(q.r.Context(), q.principal(), q.r.PathValue("company"), q.r.PathValue("id"))
	if err != nil {
		d.failErr(q, err)
		return inv, ujpdoc.Document{}, false
	}
	var req ujpdoc.Request
	if err := json.Unmarshal(inv.Document, &req); err != nil || !correctable(inv) {
		d.failUser(q, http.StatusConflict, "corr.notnow")
		return inv, ujpdoc.Document{}, false
	}
	if !fitsForm(&req.Document) {
		d.failUser(q, http.StatusConflict, "corr.toolong")
		return inv, ujpdoc.Document{}, false
	}
	return inv, req.Document, true
}

// correctable reports whether an e-invoice may be corrected now, as far as
// its own state tells (the use case checks the rest: a pending storno or
// correction, a closed period).
func correctable(inv einvoicing.EInvoice) bool {
	switch inv.Status {
	case "delivered", "accepted", "auto_accepted":
		return inv.Kind != "storno" && inv.EUID != nil
	}
	return false
}

func (d *Dashboard) correctionData(q *req, inv einvoicing.EInvoice, doc ujpdoc.Document) correctionData {
	data := correctionData{base: d.baseFor(q, "einvoices", "corr.title"), Inv: inv, Doc: doc, Keys: lineKeys}
	data.Title = data.T("corr.title") + " " + inv.Number
	cb := d.d.Service.CodeLists(q.s.Environment)
	data.Reasons = cb.CorrectionReasons
	for _, g := range cb.TaxGroups {
		if p := strconv.Itoa(g.Percent); !slices.Contains(data.VatPercents, p) {
			data.VatPercents = append(data.VatPercents, p)
		}
	}
	for _, ti := range cb.TaxIndicators {
		if !slices.Contains(data.Indicators, ti.Code) {
			data.Indicators = append(data.Indicators, ti.Code)
		}
	}
	return data
}

// correctionForm shows the form filled from the original: its lines, a new
// number (the original's followed by /K) and today's date.
func (d *Dashboard) correctionForm(q *req) {
	inv, doc, ok := d.original(q)
	if !ok {
		return
	}
	data := d.correctionData(q, inv, doc)
	orig := einvoice.RequestOf(&doc)
	data.Number = inv.Number + "/K"
	data.IssueDate = d.d.Service.Now().In(skopje).Format("2006-01-02")
	if orig.SupplyDate != nil {
		data.SupplyDate = *orig.SupplyDate
	} else {
		data.SupplyDate = orig.IssueDate
	}
	for i, l := range orig.Lines {
		data.Lines = append(data.Lines, corrLine{Row: i, Values: map[string]string{"description": l.Description, "unit": deref(l.Unit),
			"quantity": l.Quantity, "unitPrice": l.UnitPrice, "unitDiscount": l.UnitDiscount, "vatPercent": l.VatPercent,
			"taxIndicator": l.TaxIndicator}})
	}
	for i := range blankLines {
		data.Lines = append(data.Lines, corrLine{Row: len(orig.Lines) + i, Values: map[string]string{}})
	}
	d.render(q.w, http.StatusOK, "correction", data)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// correct submits the correction. A row whose fields are all empty is no
// line (an unused new row, or a line taken out). Field errors are shown
// next to their fields, with the form as it was sent.
func (d *Dashboard) correct(q *req) {
	inv, doc, ok := d.original(q)
	if !ok {
		return
	}
	if !d.confirmed(q) {
		return
	}
	f := q.r.PostForm
	req := einvoice.RequestOf(&doc)
	origLines := req.Lines
	req.Number, req.IssueDate = strings.TrimSpace(f.Get("number")), f.Get("issueDate")
	req.SupplyDate = optionalText(f.Get("supplyDate"))
	data := d.correctionData(q, inv, doc)
	data.Number, data.IssueDate, data.SupplyDate = f.Get("number"), f.Get("issueDate"), f.Get("supplyDate")
	data.Reason, data.Comment = f.Get("reason"), f.Get("comment")
	req.Lines = nil
	tooLong := map[string]string{}
	var rowOf []int // request line index → form row
	for row := range len(origLines) + blankLines {
		l := corrLine{Row: row, Values: map[string]string{}}
		empty := true
		for _, k := range lineKeys {
			name := fmt.Sprintf("lines[%d].%s", row, k)
			v := strings.TrimSpace(f.Get(name))
			if r := []rune(v); len(r) > maxRunes(k) {
				// Refused here, and clipped so the page stays bounded.
				v = string(r[:maxRunes(k)])
				tooLong[name] = fmt.Sprintf(data.T("corr.long"), maxRunes(k))
			}
			l.Values[k] = v
			empty = empty && v == ""
		}
		data.Lines = append(data.Lines, l)
		if empty {
			continue
		}
		line := einvoice.Line{Description: l.Values["description"], Unit: optionalText(l.Values["unit"]), Quantity: l.Values["quantity"],
			UnitPrice: l.Values["unitPrice"], UnitDiscount: l.Values["unitDiscount"], VatPercent: l.Values["vatPercent"],
			TaxIndicator: l.Values["taxIndicator"]}
		if row < len(origLines) {
			line.Sku, line.DomesticProduct = origLines[row].Sku, origLines[row].DomesticProduct
		}
		req.Lines = append(req.Lines, line)
		rowOf = append(rowOf, row)
	}
	if len(tooLong) > 0 {
		data.Errs = tooLong
		data.Error = data.T("corr.invalid")
		d.render(q.w, http.StatusUnprocessableEntity, "correction", data)
		return
	}
	cr := einvoice.CorrectionRequest{Request: req, DocStorno: int(ujpdoc.StornoCorrection), Reason: data.Reason,
		Comment: optionalText(data.Comment)}
	company, id := q.r.PathValue("company"), q.r.PathValue("id")
	out, err := d.d.Service.CorrectEInvoice(q.r.Context(), q.caller("einvoice.correction", id, data.Reason),
		einvoicing.Correction{CompanyID: company, ID: id, Request: &cr})
	if errs := fieldErrs(err); errs != nil {
		data.Errs = map[string]string{}
		for path, msg := range errs {
			path = formPath(path, rowOf)
			if formField(path) {
				data.Errs[path] = msg
			} else {
				data.OtherErrs = append(data.OtherErrs, path+": "+msg)
			}
		}
		slices.Sort(data.OtherErrs)
		data.Error = data.T("corr.invalid")
		d.render(q.w, http.StatusUnprocessableEntity, "correction", data)
		return
	}
	if err != nil {
		d.failErr(q, err)
		return
	}
	http.Redirect(q.w, q.r, "/dashboard/einvoices/"+url.PathEscape(company)+"/"+url.PathEscape(out.ID)+"?done=1", http.StatusSeeOther)
}

// formPath turns a request path lines[k]… into the form's row of that line.
func formPath(path string, rowOf []int) string {
	rest, ok := strings.CutPrefix(path, "lines[")
	if !ok {
		return path
	}
	num, tail, ok := strings.Cut(rest, "]")
	k, err := strconv.Atoi(num)
	if !ok || err != nil || k < 0 || k >= len(rowOf) {
		return path
	}
	return fmt.Sprintf("lines[%d]%s", rowOf[k], tail)
}

// formField reports whether the form has an input named path.
func formField(path string) bool {
	switch path {
	case "number", "issueDate", "supplyDate", "reason", "comment":
		return true
	}
	rest, ok := strings.CutPrefix(path, "lines[")
	if !ok {
		return false
	}
	_, key, ok := strings.Cut(rest, "].")
	return ok && slices.Contains(lineKeys, key)
}
