package filing

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"

	"github.com/denar-mk/denar/money"
)

// The fifteen amounts of levels 1 and 2, in the order of the 2026 layout.
var amountNames = [15]string{
	"BrutoIznos", "ZadPIOIznos", "DopPIOIznos", "ZadFZOIznos", "DopFZOIznos",
	"ZadPovredaRabIznos", "DopPovredaRabIznos", "ZadVrabotuvanjeIznos", "DopVrabotuvanjeIznos",
	"ZadBenefStazIznos", "DopBenefStazIznos", "PersonalenDanokIznos", "NetoIznos",
	"EfektivnoNetoIznos", "DanocnoOslobIznos",
}

// doc is one МПИН filing after formatting decisions are made and before it
// is serialised; XML and TXT both render it, so they cannot disagree.
type doc struct {
	// parallelFrom is the batch size from which the encoders spread
	// their work (splitChunks).
	parallelFrom int
	EDB          string
	VidObvrznik  string
	VidObvrska   string
	Month, Year  int
	PayerName    string
	Totals       [15]int64
	Emps         []emp
}

type emp struct {
	No           int
	contract     int // of the record (the details' Contract), to merge batches
	EMBG         string
	Municipality string
	Account      string
	Days         int
	Amounts      [15]int64
	Hours        int64
	LastName     string
	FirstName    string
	Details      []detail
}

type detail struct {
	Staz      string // 3.17 вид на стаж
	Contract  int    // 3.30
	From, To  int    // days of the month, 0 = empty
	Days      int
	HourType  string // SifraTipRabotenCas
	Movement  string // SifraDvizenje
	Fzom      string // 3.4б
	Exemption string // 3.17б
	Body      string // 3.26 competent body's tax number
	Hours     int64
	Amount    int64
}

// whole rounds half away from zero to whole denars (or hours), the only
// precision the form accepts (research §3.1); corrections are negative.
// buildDoc takes only records whose figures are within the bounds of a
// request (rangeRecord: money within ±10^9, hours within 10^9), so every
// figure whole sees, a record's sums included, fits an int64 by nine
// orders of magnitude. One that did not would be a bug: it panics rather
// than write a number other than the one computed (money.Amount.Whole
// would saturate to the int64 range).
func whole(d money.Amount) int64 {
	v, ok := d.RoundInt64()
	if !ok {
		panic("filing: " + d.String() + " reached a file past rangeRecord")
	}
	return v
}

// parallelMin is the batch size from which work is spread over the CPUs;
// below it one goroutine is faster. The unexported entry points take the
// size as a parameter, so that tests compare the two paths.
const parallelMin = 512

// sequential is a parallelMin no batch reaches: everything on one
// goroutine.
const sequential = math.MaxInt

// splitChunks splits [0, n) into one contiguous chunk per CPU (at most 8),
// or a single chunk for small n.
// from is the batch size from which it splits (parallelMin when 0).
func splitChunks(n, from int) [][2]int {
	if from <= 0 {
		from = parallelMin
	}
	workers := runtime.GOMAXPROCS(0)
	if n < from || workers < 2 {
		return [][2]int{{0, n}}
	}
	workers = min(workers, 8)
	ch := make([][2]int, workers)
	for w := range ch {
		ch[w] = [2]int{n * w / workers, n * (w + 1) / workers}
	}
	return ch
}

// forChunks runs fn on every chunk, concurrently when there are several,
// and returns when all are done. c is the chunk's index.
func forChunks(ch [][2]int, fn func(c, lo, hi int)) {
	if len(ch) == 1 {
		fn(0, ch[0][0], ch[0][1])
		return
	}
	var wg sync.WaitGroup
	for c, r := range ch {
		wg.Go(func() { fn(c, r[0], r[1]) })
	}
	wg.Wait()
}

// inParallel runs fn on the chunks of [0, n) and returns the results in
// chunk order, so callers that concatenate them get what one loop from 0
// to n would have produced.
func inParallel[T any](n, from int, fn func(lo, hi int) T) []T {
	ch := splitChunks(n, from)
	out := make([]T, len(ch))
	forChunks(ch, func(c, lo, hi int) { out[c] = fn(lo, hi) })
	return out
}

func defaulted(p *string, def string) string {
	if s := str(p); s != "" {
		return s
	}
	return def
}

// buildEmp is the employee of the document from r, record i of batch b,
// alone.
func buildEmp(b *Batch, r *Record, i int, h hoursOf, allowance money.Amount, variant, companyFzom string, days int) emp {
	self := selfEmployed(b)
	e := emp{
		No:           i + 1,
		EMBG:         str(r.Employee.EMBG),
		Municipality: str(r.Employee.MunicipalityCode),
		Account:      str(r.Employee.BankAccount),
	}
	e.LastName, _ = cyrName(r.Employee.LastNameCyr, r.Employee.LastName)
	e.FirstName, _ = cyrName(r.Employee.FirstNameCyr, r.Employee.FirstName)

	// The allowance used (DanocnoOslob): the record's, else the statutory
	// one prorated by paid hours (none for a self-employed payer), never
	// more than gross less contributions.
	contrib := dec(r.Pension).Add(dec(r.Health)).Add(dec(r.AdditionalHealth)).Add(dec(r.EmploymentContrib))
	allow := money.Amount{}
	switch {
	case r.PersonalAllowance.Set:
		allow = r.PersonalAllowance.D
	case !self:
		allow = share(allowance, h)
	}
	if left := dec(r.SalaryGross).Sub(contrib); left.LessThan(allow) {
		allow = money.Max(left, money.Amount{})
	}
	netPaid := dec(r.SalaryNet)
	switch {
	case r.NetPaid.Set:
		netPaid = r.NetPaid.D
	case self:
		netPaid = money.Amount{}
	}
	if variant == VariantNoPaymentDeclared {
		netPaid = money.Amount{}
	}
	vals := [15]money.Amount{
		dec(r.SalaryGross), dec(r.Pension), dec(r.PensionTopUp), dec(r.Health), dec(r.HealthTopUp),
		dec(r.AdditionalHealth), dec(r.DisabilityTopUp), dec(r.EmploymentContrib), dec(r.EmploymentTopUp),
		money.Amount{}, money.Amount{}, dec(r.PIT), dec(r.SalaryNet), netPaid, allow,
	}
	for k, v := range vals {
		e.Amounts[k] = whole(v)
	}

	from, to := 1, days
	movement := "1"
	if r.HireDay != nil {
		from, movement = *r.HireDay, "4"
	}
	if r.LeaveDay != nil {
		to = *r.LeaveDay
		if movement == "4" {
			movement = "6"
		} else {
			movement = "2"
		}
	}
	e.Days = to - from + 1
	if r.ServiceDays.Set {
		e.Days = int(whole(r.ServiceDays.D))
	}
	if e.Days < 0 {
		e.Days = 0
	}
	contract := 1
	if r.ContractNo != nil {
		contract = *r.ContractNo
	}
	e.contract = contract
	fz := str(r.Employee.FzomBranch)
	if fz == "" {
		fz = companyFzom
	}
	base := detail{
		Staz: defaulted(r.InsuranceCode, "0050"), Contract: contract, From: from, To: to, Days: e.Days,
		Movement: movement, Fzom: fz, Exemption: str(r.ExemptionCode),
	}
	// Level 3: one row per kind with hours or an amount. The regular row
	// (001) holds the fund's hours that no other kind takes and the gross
	// that no other pay takes. The rows' whole numbers add up exactly: the
	// hours inside the fund with the absent hours (outside the employment,
	// filed as none) to the fund, the amounts to the gross (apportion).
	if e.Details, e.Hours = wholeRows(r, h, base); e.Details == nil {
		e.Details, e.Hours = anyRows(r, h, base)
	}
	return e
}

// anyRows builds the level-3 rows from figures with fractions: the kinds'
// hours and pays are apportioned so that their whole numbers add up.
func anyRows(r *Record, h hoursOf, base detail) ([]detail, int64) {
	type row struct {
		code    string
		hours   money.Amount
		amount  money.Amount
		inside  bool
		inGross bool
	}
	var rowBuf [numKinds + 1]row // on the stack: a record has at most one row per kind
	rows := rowBuf[:1]
	rows[0] = row{code: "001", inside: true, inGross: true}
	regH := h.fund.Sub(h.absent)
	regA := dec(r.SalaryGross)
	hourFields, payFields := kindFields(r)
	for k := range kinds {
		kd := &kinds[k]
		hv, pv := hoursOfKind(hourFields[k]), payOfKind(payFields[k])
		if hv.IsZero() && pv.IsZero() {
			continue
		}
		if kd.inside {
			regH = regH.Sub(hv)
		}
		if kd.inGross {
			regA = regA.Sub(pv)
		}
		rows = append(rows, row{code: kindCode(r, k), hours: hv, amount: pv, inside: kd.inside, inGross: kd.inGross})
	}
	// Pays rounded to whole denars one by one can add up to a denar or two
	// more than the rounded gross when no regular pay is left: that excess
	// is rounding, and comes off the largest pay.
	if regA.IsNegative() && regA.Neg().Cmp(roundingSlack(len(rows))) <= 0 {
		big := -1
		for i := 1; i < len(rows); i++ {
			if rows[i].inGross && (big < 0 || rows[i].amount.GreaterThan(rows[big].amount)) {
				big = i
			}
		}
		if big > 0 {
			rows[big].amount = rows[big].amount.Add(regA)
			regA = money.Amount{}
		}
	}
	rows[0].hours, rows[0].amount = regH, regA
	var insideIdx, grossIdx [numKinds + 1]int
	var insideV, grossV [numKinds + 1]money.Amount
	ni, ng := 0, 0
	for i, rw := range rows {
		if rw.inside {
			insideIdx[ni], insideV[ni] = i, rw.hours
			ni++
		}
		if rw.inGross {
			grossIdx[ng], grossV[ng] = i, rw.amount
			ng++
		}
	}
	var hours, amounts, out [numKinds + 1]int64
	for i, rw := range rows {
		hours[i], amounts[i] = whole(rw.hours), whole(rw.amount)
	}
	apportion(insideV[:ni], whole(h.fund)-whole(h.absent), out[:ni])
	for j := range ni {
		hours[insideIdx[j]] = out[j]
	}
	apportion(grossV[:ng], whole(dec(r.SalaryGross)), out[:ng])
	for j := range ng {
		amounts[grossIdx[j]] = out[j]
	}
	details := make([]detail, 0, len(rows))
	var total int64
	for i, rw := range rows {
		if i == 0 && hours[0] == 0 && amounts[0] == 0 && len(rows) > 1 {
			continue
		}
		dt := base
		dt.HourType, dt.Hours, dt.Amount = rw.code, hours[i], amounts[i]
		details = append(details, dt)
		total += dt.Hours
	}
	return details, total
}

// wholeRows builds the level-3 rows in integers when every figure they
// come from is a whole number, as calculation results are: then no
// apportioning is needed and the rows are exactly those the general path
// writes. It returns nil when some figure has a fraction.
func wholeRows(r *Record, h hoursOf, base detail) ([]detail, int64) {
	fund, ok1 := h.fund.Int64()
	absent, ok2 := h.absent.Int64()
	gross, ok3 := dec(r.SalaryGross).Int64()
	if !ok1 || !ok2 || !ok3 {
		return nil, 0
	}
	hourFields, payFields := kindFields(r)
	var hs, ps [numKinds]int64
	var used [numKinds]bool
	n := 1
	regH, regA := fund-absent, gross
	for k := range kinds {
		hv, pv := hoursOfKind(hourFields[k]), payOfKind(payFields[k])
		if hv.IsZero() && pv.IsZero() {
			continue
		}
		hi, okh := hv.Int64()
		pi, okp := pv.Int64()
		if !okh || !okp {
			return nil, 0
		}
		hs[k], ps[k], used[k] = hi, pi, true
		n++
		if kinds[k].inside {
			regH -= hi
		}
		if kinds[k].inGross {
			regA -= pi
		}
	}
	if regA < 0 && 2*(-regA) <= int64(n) { // the rounding of whole pays: off the largest
		big := -1
		for k := range kinds {
			if used[k] && kinds[k].inGross && (big < 0 || ps[k] > ps[big]) {
				big = k
			}
		}
		if big >= 0 {
			ps[big] += regA
			regA = 0
		}
	}
	rows := make([]detail, 0, n)
	var total int64
	if regH != 0 || regA != 0 || n == 1 {
		dt := base
		dt.HourType, dt.Hours, dt.Amount = "001", regH, regA
		rows = append(rows, dt)
		total += regH
	}
	for k := range kinds {
		if !used[k] {
			continue
		}
		dt := base
		dt.HourType, dt.Hours, dt.Amount = kindCode(r, k), hs[k], ps[k]
		rows = append(rows, dt)
		total += hs[k]
	}
	return rows, total
}

// roundingSlack is how far n figures, each rounded to whole denars on its
// own, can drift: half a denar each.
func roundingSlack(n int) money.Amount { return money.New(int64(n)*5, 1) }

// apportion rounds vals to integers that add up to total (largest
// remainder), written to out: each value is floored, and the units left go
// to the values with the largest fractions, earliest first on a tie. total
// is the sum of vals rounded, so every result is its value rounded down or
// up. vals has at most one entry per kind and the regular row.
func apportion(vals []money.Amount, total int64, out []int64) {
	var fracs [numKinds + 1]money.Amount
	left := total
	for i, v := range vals {
		f := v.Floor(0)
		out[i] = f.Whole()
		fracs[i] = v.Sub(f)
		left -= out[i]
	}
	if left < 0 || left > int64(len(vals)) {
		// Only when vals do not add up to about total (forced input whose
		// kinds exceed the fund): plain rounding, the first row takes the rest.
		var sum int64
		for i, v := range vals {
			out[i] = whole(v)
			sum += out[i]
		}
		if len(out) > 0 {
			out[0] += total - sum
		}
		return
	}
	var taken [numKinds + 1]bool
	for ; left > 0; left-- {
		best := -1
		for i := range vals {
			if !taken[i] && (best < 0 || fracs[i].GreaterThan(fracs[best])) {
				best = i
			}
		}
		taken[best] = true
		out[best]++
	}
}

// sickCompanyCode maps the employer-paid sick-pay rate to МПИН 3.9 codes
// 125–128 (70/80/90/100 %); 70 % is the statutory minimum and the default.
func sickCompanyCode(rate Num) string {
	if !rate.Set {
		return "125"
	}
	switch p := rate.D; {
	case p.Cmp(money.FromInt(100)) >= 0:
		return "128"
	case p.Cmp(money.FromInt(90)) >= 0:
		return "127"
	case p.Cmp(money.FromInt(80)) >= 0:
		return "126"
	default:
		return "125"
	}
}

// allowanceFor returns the monthly allowance in force at the period end, or
// zero when the statutory figures are unavailable (only reachable with force).
func allowanceFor(b *Batch, st Statutory) money.Amount {
	if st == nil || b.PeriodMonth < 1 || b.PeriodMonth > 12 {
		return money.Amount{}
	}
	r, err := st.On(periodEnd(b.PeriodYear, b.PeriodMonth))
	if err != nil {
		return money.Amount{}
	}
	return r.Allowance
}

// FileName returns UJP's file name for a filing: {PAYER NAME}_{YYYY}_{MM}_{вид на обврска}.{ext},
// e.g. "DESIGNIA DOOEL_2026_05_101.xml". Characters that file systems reject
// are replaced by "_" so the name survives a download.
func FileName(c *Company, b *Batch, ext string) string {
	name := strings.TrimSpace(c.Name)
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || strings.ContainsRune(`/\:*?"<>|`, r) {
			return '_'
		}
		return r
	}, name)
	vid := defaulted(b.VidObvrska, "101")
	if str(b.FilingVariant) == VariantVid700 {
		vid = "700"
	}
	return fmt.Sprintf("%s_%04d_%02d_%s.%s", name, b.PeriodYear, b.PeriodMonth, vid, ext)
}

// ContentDisposition returns an attachment header for name: an ASCII
// fallback plus the RFC 5987 UTF-8 form for Cyrillic names.
func ContentDisposition(name string) string {
	ascii := strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return '_'
		}
		return r
	}, name)
	var enc strings.Builder
	for _, b := range []byte(name) {
		if (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') || strings.IndexByte("!#$&+-.^_`|~", b) >= 0 {
			enc.WriteByte(b)
		} else {
			fmt.Fprintf(&enc, "%%%02X", b)
		}
	}
	return fmt.Sprintf(`attachment; filename="%s"; filename*=UTF-8''%s`, ascii, enc.String())
}
