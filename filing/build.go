package filing

import (
	"sort"
	"strconv"
	"strings"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/money"
)

// mpinBuild works an МПИН request out record by record: each record is
// shaped and checked and, for a file, turned into the employee the file is
// written from as soon as it arrives, and then dropped. A request of tens
// of thousands of records is thus never held as records (2.2 kB each), only
// as its issues and employees (a few hundred bytes each). The records come
// in runs (add), in order, batch after batch for a combined request; each
// run is checked and built on every core in contiguous chunks joined in
// order, so the result is exactly what one pass over all records gives.
type mpinBuild struct {
	co   *Company
	b    *Batch
	st   Statutory
	from int // the run size from which work is spread (splitChunks)

	// file builds the employees of a file and keeps only the blocking
	// issues; otherwise every issue is kept (validate).
	file bool
	// ranges checks each record's figures against the bounds a file is
	// written within (rangeRecord), as the generators do.
	ranges bool
	// combined: the records come in batches, each checked on its own
	// (a correction repeats employees of the regular run).
	combined bool

	// Worked out from the company and the batch.
	head      []Issue // the company's and the batch's issues
	rateIssue []Issue // statutory figures missing or carried forward
	haveRates bool
	rates     Rates
	allowance money.Amount
	variant   string
	fzom      string
	days      int

	// The batch being read.
	batchNo int
	prefix  string // the path of its records
	n       int    // its records so far
	seen    map[string]int
	ended   map[string]bool
	checks  checker
	dupOf   []int

	rangeFE denar.FieldErrors
	started bool // a batch has begun
	batches int  // batches begun
	issues  []Issue
	emps    []emp
}

// buildOptions say what an mpinBuild does (see its fields).
type buildOptions struct {
	file, ranges, combined bool
	from                   int
}

// newMpinBuild starts the work on a request of company co and batch b,
// both complete. A combined request's batches are begun with beginBatch;
// an МПИН request's one run of records is begun here.
func newMpinBuild(co *Company, b *Batch, st Statutory, o buildOptions) *mpinBuild {
	m := &mpinBuild{co: co, b: b, st: st, from: o.from, file: o.file, ranges: o.ranges, combined: o.combined, prefix: "records"}
	hc := checker{errorsOnly: m.file}
	hc.checkHeader(co, b)
	m.head = hc.issues
	rc := checker{errorsOnly: m.file}
	m.rates, m.haveRates = rc.ratesFor(b, st)
	m.rateIssue = rc.issues
	m.allowance = allowanceFor(b, st)
	m.variant = defaulted(b.FilingVariant, VariantRegular)
	m.fzom = str(co.FzomBranch)
	if m.fzom == "" {
		m.fzom = DeriveFzomBranch(str(co.City))
	}
	m.days = 31
	if b.PeriodMonth >= 1 && b.PeriodMonth <= 12 {
		m.days = daysIn(b.PeriodYear, b.PeriodMonth)
	}
	if !m.combined {
		m.beginBatch(0)
	}
	return m
}

// beginBatch starts the next batch of a combined request (its records'
// path batches[i].records).
func (m *mpinBuild) beginBatch(i int) {
	if m.started {
		m.endBatch()
	}
	m.started = true
	m.batches++
	m.batchNo, m.n = i, 0
	if m.combined {
		m.prefix = "batches[" + strconv.Itoa(i) + "].records"
	}
	if m.ranges {
		// The batch's fund is bounded like the records' figures, and
		// reported with each batch's records.
		numRange(&m.rangeFE, "batch.workingHours", m.b.WorkingHours)
	}
	m.seen, m.ended = map[string]int{}, map[string]bool{}
	m.checks = checker{errorsOnly: m.file}
}

// endBatch finishes the current batch: its re-hire checks, and its
// issues after those that come before its records.
func (m *mpinBuild) endBatch() {
	if !m.started {
		return
	}
	m.started = false
	if m.failed() {
		return
	}
	issues := resolveContracts(m.checks.issues, m.checks.pending, m.ended)
	if m.batchNo == 0 {
		m.issues = append(m.issues, m.head...)
	}
	if m.n == 0 {
		m.issues = append(m.issues, noRecords(m.prefix))
	}
	if m.batchNo == 0 {
		m.issues = append(m.issues, m.rateIssue...)
	}
	m.issues = append(m.issues, issues...)
	m.checks = checker{}
}

func noRecords(path string) Issue {
	return Issue{Severity: SeverityError, Code: CodeNoRecords, Field: "1.5", Path: path, Message: "an МПИН filing needs at least one record"}
}

// failed reports a record whose figures are beyond the bounds: the request
// is answered with those errors, so nothing more is worked out.
func (m *mpinBuild) failed() bool { return len(m.rangeFE) > 0 }

// add works out recs, the next records of the current batch, in order.
func (m *mpinBuild) add(recs []Record) {
	base := m.n
	m.n += len(recs)
	if m.ranges {
		for i := range recs {
			rangeRecord(&m.rangeFE, m.prefix, base+i, &recs[i])
		}
	}
	if m.failed() || len(recs) == 0 {
		return
	}
	// Duplicates and ended contracts are the checks across records: noted
	// first, in order, so that the records can be checked on every core.
	if cap(m.dupOf) < len(recs) {
		m.dupOf = make([]int, len(recs))
	}
	dupOf := m.dupOf[:len(recs)]
	for i := range recs {
		dupOf[i] = -1
		r := &recs[i]
		embg := str(r.Employee.EMBG)
		if r.LeaveDay != nil {
			m.ended[recordKey(r)] = true
		}
		if embg == "" {
			continue
		}
		key := recordKey(r)
		if j, dup := m.seen[key]; dup {
			dupOf[i] = j
		} else {
			m.seen[key] = base + i
		}
	}
	first := len(m.emps)
	if m.file {
		m.emps = append(m.emps, make([]emp, len(recs))...)
	}
	type part struct {
		issues  []Issue
		pending []pendingContract
	}
	parts := inParallel(len(recs), m.from, func(lo, hi int) part {
		pc := &checker{errorsOnly: m.file}
		for i := lo; i < hi; i++ {
			r := &recs[i]
			h := pc.record(m.b, r, m.prefix+"["+strconv.Itoa(base+i)+"]", m.haveRates, m.rates, dupOf[i])
			if m.file {
				m.emps[first+i] = m.buildEmp(r, base+i, h)
			}
		}
		return part{pc.issues, pc.pending}
	})
	for _, p := range parts {
		for _, pc := range p.pending {
			pc.at += len(m.checks.issues)
			m.checks.pending = append(m.checks.pending, pc)
		}
		m.checks.issues = append(m.checks.issues, p.issues...)
	}
}

// buildEmp is the file's employee of record r, number i of its batch.
func (m *mpinBuild) buildEmp(r *Record, i int, h hoursOf) emp {
	return buildEmp(m.b, r, i, h, m.allowance, m.variant, m.fzom, m.days)
}

// fieldErrors are the figures beyond their bounds, which answer the
// request instead of its checks.
func (m *mpinBuild) fieldErrors() error {
	m.endBatch()
	return m.rangeFE.Err()
}

// result is the outcome of the checks, as Validate answers it.
func (m *mpinBuild) result() Result {
	m.endBatch()
	if m.combined && m.batches == 0 {
		// Checked as an МПИН request without records.
		m.issues = append(append(append(m.issues, m.head...), noRecords("records")), m.rateIssue...)
	}
	ok := true
	for _, is := range m.issues {
		if is.Severity == SeverityError {
			ok = false
			break
		}
	}
	if m.issues == nil {
		m.issues = []Issue{}
	}
	return Result{OK: ok, Issues: m.issues}
}

// doc is the file's document once every record is in: a *BlockingError
// when the checks found errors and force is false, else the employees in
// file order (for a combined request, merged and sorted; see CombinedTXT).
func (m *mpinBuild) doc(force bool) (*doc, error) {
	if err := m.fieldErrors(); err != nil {
		return nil, err
	}
	res := m.result()
	if !res.OK && !force {
		return nil, &BlockingError{Issues: res.Issues}
	}
	m.issues = nil
	emps := m.emps
	m.emps = nil
	if m.combined {
		emps = sortEmps(mergeEmps(emps))
		for i := range emps {
			emps[i].No = i + 1
		}
	}
	d := &doc{
		parallelFrom: m.from,
		EDB:          str(m.co.TaxID),
		VidObvrznik:  defaulted(m.b.VidObvrznik, "110"),
		VidObvrska:   defaulted(m.b.VidObvrska, "101"),
		Month:        m.b.PeriodMonth,
		Year:         m.b.PeriodYear,
		PayerName:    defaulted(m.co.NameCyr, strings.TrimSpace(m.co.Name)),
		Emps:         emps,
	}
	if m.variant == VariantVid700 {
		d.VidObvrska = "700"
	}
	// Each amount is within ±10^9: the sum of 9.2 billion records would be
	// needed to leave the int64 range; the TXT's narrower fields are
	// checked where it is written (checkTXT).
	for i := range d.Emps {
		for k := range d.Emps[i].Amounts {
			d.Totals[k] += d.Emps[i].Amounts[k]
		}
	}
	return d, nil
}

// mergeEmps is the employees of a combined request's batches, in order,
// an employee of a later batch replacing the one of an earlier batch with
// the same ЕМБГ and contract number (a correction replaces the month's
// data of the employees it names).
func mergeEmps(emps []emp) []emp {
	at := map[string]int{}
	out := emps[:0]
	for _, e := range emps {
		if e.EMBG == "" {
			out = append(out, e)
			continue
		}
		k := e.EMBG + "/" + strconv.Itoa(e.contract)
		if j, ok := at[k]; ok {
			out[j] = e
			continue
		}
		at[k] = len(out)
		out = append(out, e)
	}
	clear(emps[len(out):])
	return out
}

// sortEmps orders employees by their Cyrillic surname, then first name,
// under Macedonian collation, then ЕМБГ, so the order is total. Byte order
// would put Ѓ (U+0403) before А and Ј after Я; the Macedonian collation
// puts them where the alphabet does.
func sortEmps(emps []emp) []emp {
	col := collate.New(language.Macedonian)
	var buf collate.Buffer
	keys := make([][]byte, len(emps))
	for i := range emps {
		k := col.KeyFromString(&buf, emps[i].LastName+"\x00"+emps[i].FirstName)
		keys[i] = append(append([]byte(nil), k...), emps[i].EMBG...)
		buf.Reset()
	}
	idx := make([]int, len(emps))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return string(keys[idx[a]]) < string(keys[idx[b]]) })
	out := make([]emp, len(emps))
	for i, j := range idx {
		out[i] = emps[j]
	}
	return out
}
