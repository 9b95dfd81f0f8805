package filing

import "strconv"

// sortRecords orders records as a combined file orders its employees
// (sortEmps): by Cyrillic surname, first name and ЕМБГ under Macedonian
// collation.
func sortRecords(recs []Record) []Record {
	emps := make([]emp, len(recs))
	for i := range recs {
		e := &recs[i].Employee
		emps[i].No = i
		emps[i].LastName, _ = cyrName(e.LastNameCyr, e.LastName)
		emps[i].FirstName, _ = cyrName(e.FirstNameCyr, e.FirstName)
		emps[i].EMBG = str(e.EMBG)
	}
	out := make([]Record, len(recs))
	for i, e := range sortEmps(emps) {
		out[i] = recs[e.No]
	}
	return out
}

// ValidateCombined runs the МПИН checks on each batch of a combined request
// (a correction repeats employees of the regular run, so duplicates are
// looked for within a batch) and reports paths as "batches[1].records[0]…".
// The company's and the batch's issues are reported once.
func ValidateCombined(req *CombinedRequest, st Statutory) Result {
	m := newMpinBuild(&req.Company, &req.Batch, st, buildOptions{combined: true, from: parallelMin})
	for i, b := range req.Batches {
		m.beginBatch(i)
		m.add(b.Records)
	}
	return m.result()
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
	m := newMpinBuild(&req.Company, &req.Batch, st, buildOptions{file: true, ranges: true, combined: true, from: parallelMin})
	for i, b := range req.Batches {
		m.beginBatch(i)
		m.add(b.Records)
	}
	d, err := m.doc(req.Force)
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
