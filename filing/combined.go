package filing

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"

	"github.com/denar-mk/denar"
)

// SortKeys returns, for each record, its Macedonian collation key: Cyrillic
// surname, then first name, then ЕМБГ and contract so the order is total.
// Byte order would put Ѓ (U+0403) before А and Ј after Я; the Macedonian
// collation puts them where the alphabet does.
func sortRecords(recs []Record) []Record {
	col := collate.New(language.Macedonian)
	var buf collate.Buffer
	keys := make([][]byte, len(recs))
	for i := range recs {
		e := &recs[i].Employee
		last, _ := cyrName(e.LastNameCyr, e.LastName)
		first, _ := cyrName(e.FirstNameCyr, e.FirstName)
		k := col.KeyFromString(&buf, last+"\x00"+first)
		keys[i] = append(append([]byte(nil), k...), str(e.EMBG)...)
		buf.Reset()
	}
	idx := make([]int, len(recs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return string(keys[idx[a]]) < string(keys[idx[b]]) })
	out := make([]Record, len(recs))
	for i, j := range idx {
		out[i] = recs[j]
	}
	return out
}

// ValidateCombined runs the МПИН checks on each batch of a combined request
// (a correction repeats employees of the regular run, so duplicates are
// looked for within a batch) and reports paths as "batches[1].records[0]…".
func ValidateCombined(req *CombinedRequest, st Statutory) Result {
	res := Result{OK: true, Issues: []Issue{}}
	for i, b := range req.Batches {
		one := &MpinRequest{Company: req.Company, Batch: req.Batch, Records: b.Records}
		r := Validate(one, st)
		for _, is := range r.Issues {
			if strings.HasPrefix(is.Path, "records") {
				is.Path = fmt.Sprintf("batches[%d].%s", i, is.Path)
			} else if i > 0 {
				continue // company and batch issues are the same for every batch
			}
			if is.Severity == SeverityError {
				res.OK = false
			}
			res.Issues = append(res.Issues, is)
		}
	}
	if len(req.Batches) == 0 {
		r := Validate(&MpinRequest{Company: req.Company, Batch: req.Batch}, st)
		res = r
	}
	return res
}

// CombinedTXT merges the batches of one payer and period into a single TXT
// filing: records ordered by Cyrillic surname under Macedonian collation,
// renumbered, totals summed from the records. A correction replaces the
// month's data of the employees it contains (research §4.1, "Corrections
// (103) contain only the affected employees and replace that month's data
// for them"), so a record of a later batch replaces the record of an
// earlier batch with the same ЕМБГ and contract number: one employment is
// filed once.
func CombinedTXT(req *CombinedRequest, st Statutory) ([]byte, error) {
	var fe denar.FieldErrors
	for i, b := range req.Batches {
		checkRanges(&fe, &req.Batch, fmt.Sprintf("batches[%d].records", i), b.Records)
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	res := ValidateCombined(req, st)
	if !res.OK && !req.Force {
		var b []Issue
		for _, is := range res.Issues {
			if is.Severity == SeverityError {
				b = append(b, is)
			}
		}
		return nil, &BlockingError{Issues: b}
	}
	m := req.Merged()
	m.Records = sortRecords(m.Records)
	d, err := buildDoc(m, allowanceFor(m, st), nil, parallelMin)
	if err != nil {
		return nil, err
	}
	return txtOf(d, "batches", false)
}

// recordKey identifies an employment in a filing: ЕМБГ and contract number.
func recordKey(r *Record) string {
	contract := 1
	if r.ContractNo != nil {
		contract = *r.ContractNo
	}
	return str(r.Employee.EMBG) + "/" + strconv.Itoa(contract)
}
