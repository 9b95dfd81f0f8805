package filing

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/denar-mk/denar"
)

// The legacy МПИН TXT has no public layout (research §4.3); this one is ours,
// documented byte by byte in docs/filing-formats.md and kept stable. It has the
// structure of the XML: one header record (H), then per employee one record
// (E) followed by one record per kind of hours (D). Every record has a fixed
// width in UTF-16 code units; the file is UTF-16LE with BOM FF FE and CRLF
// after every record.

type fkind byte

const (
	alpha   fkind = 'A' // left-aligned, space-padded text
	numeric fkind = 'N' // right-aligned, zero-padded integer; '-' first when negative
)

type field struct {
	name  string
	kind  fkind
	width int
}

func amountFields(suffix string) []field {
	f := make([]field, 0, 15)
	for _, n := range amountNames {
		f = append(f, field{n + suffix, numeric, 12})
	}
	return f
}

// Record layouts. The first field of each is the one-letter record type.
var (
	layoutH = append(append([]field{
		{"RecordType", alpha, 1}, {"EdbIsplatitel", alpha, 13}, {"SifraVidObvrznik", alpha, 3},
		{"SifraVidObvrska", alpha, 3}, {"MesecPridonesi", numeric, 2}, {"GodinaPridonesi", numeric, 4},
		{"BrojVraboteni", numeric, 5},
	}, amountFields("Vk")...), field{"NazivIsplatitel", alpha, 100})
	layoutE = append(append([]field{
		{"RecordType", alpha, 1}, {"RedenBroj", numeric, 5}, {"VrabotenEmbg", alpha, 13},
		{"SifraOpstina", alpha, 3}, {"TransakciskaSmetka", alpha, 15}, {"DenoviStazVkVrab", numeric, 2},
	}, amountFields("VkVrab")...),
		field{"RabotniCasoviVkVrab", numeric, 4}, field{"Prezime", alpha, 40}, field{"Ime", alpha, 30})
	layoutD = []field{
		{"RecordType", alpha, 1}, {"RedenBrojVraboten", numeric, 5}, {"RedenBroj", numeric, 2},
		{"SifraRabotenOdnos", alpha, 4}, {"BrojDogovor", numeric, 1}, {"DenPocetok", numeric, 2},
		{"DenZavrsuvanje", numeric, 2}, {"DenoviStaz", numeric, 2}, {"SifraTipRabotenCas", alpha, 3},
		{"SifraDvizenje", alpha, 1}, {"SifraPodracnoZdravstvo", alpha, 6}, {"SifraOsloboduvanje", alpha, 3},
		{"NadlezenOrganEdb", alpha, 13}, {"BrojCasovi", numeric, 4}, {"BrutoIznos", numeric, 12},
	}
)

func width(l []field) int {
	n := 0
	for _, f := range l {
		n += f.width
	}
	return n
}

// Record widths in UTF-16 code units, without the CRLF.
var (
	WidthH = width(layoutH)
	WidthE = width(layoutE)
	WidthD = width(layoutD)
)

// errOverflow marks a value that does not fit its field.
var errOverflow = errors.New("value does not fit its field")

// overflowError is a number too wide for its field; it is errOverflow.
type overflowError struct {
	name  string // the layout's field name
	v     int64
	width int
	emp   int // index of the employee record in the file, -1 in the header
}

func (e *overflowError) Error() string {
	return fmt.Sprintf("%s = %d: %v (%d characters)", e.name, e.v, errOverflow, e.width)
}

func (e *overflowError) Unwrap() error { return errOverflow }

// atEmployee marks an overflow in the records of employee i.
func atEmployee(err error, i int) error {
	var oe *overflowError
	if errors.As(err, &oe) {
		oe.emp = i
	}
	return err
}

// amountSources names, for each of the fifteen amounts, the record field
// it is filed from (docs/filing-formats.md §1), so that a total too wide
// for the TXT is explained in the request's terms.
var amountSources = [15]string{
	"salaryGross", "pension", "pensionTopUp", "health", "healthTopUp", "additionalHealth", "disabilityTopUp",
	"employmentContrib", "employmentTopUp", "", "", "pit", "salaryNet", "netPaid (else salaryNet)", "personalAllowance",
}

// explain words the overflow for the client: which figure, its value, and
// the field's limit.
func (e *overflowError) explain() string {
	fit := fmt.Sprintf("too large for the TXT field of %d characters (at most %s)", e.width, strings.Repeat("9", e.width))
	if e.v < 0 {
		fit = fmt.Sprintf("too small for the TXT field of %d characters (at least -%s)", e.width, strings.Repeat("9", e.width-1))
	}
	if e.emp >= 0 {
		return fmt.Sprintf("%s of employee %d of the file is %d, %s", e.name, e.emp+1, e.v, fit)
	}
	for k, n := range amountNames {
		if n+"Vk" == e.name && amountSources[k] != "" {
			return fmt.Sprintf("the total of %s over the records (%s) is %d, %s", amountSources[k], e.name, e.v, fit)
		}
	}
	return fmt.Sprintf("%s is %d, %s", e.name, e.v, fit)
}

// txtw writes fixed-width fields as UTF-16LE straight into a buffer that
// already has the exact size of what is written: every record's width is
// fixed, so every record's offset is known before anything is written.
// With b nil it writes nothing and only checks that every number fits its
// field (checkTXT).
type txtw struct {
	b []byte
	p int // next byte to write
}

func (w *txtw) unit(u uint16) {
	if w.b != nil {
		w.b[w.p], w.b[w.p+1] = byte(u), byte(u>>8)
	}
	w.p += 2
}

// text writes s left-aligned in n units, truncated or padded with spaces.
func (w *txtw) text(s string, n int) {
	if w.b == nil {
		w.p += 2 * n
		return
	}
	c := 0
	for i := 0; i < len(s) && c < n; c++ {
		if b := s[i]; b < utf8.RuneSelf {
			// Keep every record one line of fixed width.
			if b == '\r' || b == '\n' {
				b = ' '
			}
			w.b[w.p], w.b[w.p+1] = b, 0
			w.p += 2
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		// Characters outside the BMP (two code units) become '?'.
		if r > 0xFFFF || utf16.IsSurrogate(r) {
			r = '?'
		}
		w.unit(uint16(r))
	}
	for ; c < n; c++ {
		w.b[w.p], w.b[w.p+1] = ' ', 0
		w.p += 2
	}
}

// num writes v right-aligned in n units, padded with '0', with '-' first
// when negative; a number wider than n is an error and writes nothing.
func (w *txtw) num(v int64, n int, name string) error {
	u := uint64(v)
	if v < 0 {
		u = -u
	}
	digits := 1
	for x := u; x >= 10; x /= 10 {
		digits++
	}
	pad := n - digits
	if v < 0 {
		pad--
	}
	if pad < 0 {
		return &overflowError{name: name, v: v, width: n, emp: -1}
	}
	if w.b == nil {
		w.p += 2 * n
		return nil
	}
	if v < 0 {
		w.unit('-')
	}
	for ; pad > 0; pad-- {
		w.unit('0')
	}
	end := w.p + 2*digits
	for q := end - 2; q >= w.p; q -= 2 {
		w.b[q], w.b[q+1] = byte('0'+u%10), 0
		u /= 10
	}
	w.p = end
	return nil
}

func (w *txtw) crlf() {
	if w.b != nil {
		w.b[w.p], w.b[w.p+1], w.b[w.p+2], w.b[w.p+3] = '\r', 0, '\n', 0
	}
	w.p += 4
}

// txtSegment is how many employees are encoded at a time when the TXT is
// written out.
const txtSegment = 2048

// txtEmpSize is the bytes of employee e in the TXT: its E record and its D
// records, each with CRLF.
func txtEmpSize(e *emp) int { return 2 * (WidthE + 2 + len(e.Details)*(WidthD+2)) }

// checkTXT finds what encoding d would refuse: a number too wide for its
// field, in the header first, then in the first employee that has one.
func checkTXT(d *doc) error {
	w := &txtw{}
	if err := w.header(d); err != nil {
		return fmt.Errorf("header: %w", err)
	}
	for i := range d.Emps {
		if err := w.employee(&d.Emps[i], i); err != nil {
			return err
		}
	}
	return nil
}

// encodeTXT renders d as UTF-16LE bytes with BOM, in one buffer of the
// file's exact size.
func encodeTXT(d *doc) ([]byte, error) {
	if err := checkTXT(d); err != nil {
		return nil, err
	}
	return encodeCheckedTXT(d)
}

// encodeCheckedTXT is encodeTXT for d that checkTXT passed.
func encodeCheckedTXT(d *doc) ([]byte, error) {
	n := 2 + 2*(WidthH+2)
	for i := range d.Emps {
		n += txtEmpSize(&d.Emps[i])
	}
	b := bytes.NewBuffer(make([]byte, 0, n))
	if err := writeTXT(b, d); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeTXT writes d, which checkTXT passed, to w as UTF-16LE with BOM, the
// employees txtSegment at a time, each segment written on every CPU into
// its region of one buffer.
func writeTXT(w io.Writer, d *doc) error {
	hw := &txtw{b: make([]byte, 2+2*(WidthH+2)), p: 2}
	hw.b[0], hw.b[1] = 0xFF, 0xFE
	if err := hw.header(d); err != nil {
		return fmt.Errorf("header: %w", err)
	}
	if _, err := w.Write(hw.b); err != nil {
		return err
	}
	var buf []byte
	for lo := 0; lo < len(d.Emps); lo += txtSegment {
		hi := min(lo+txtSegment, len(d.Emps))
		var err error
		if buf, err = encodeTXTEmps(buf[:0], d, lo, hi); err != nil {
			return err
		}
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

// encodeTXTEmps appends employees lo to hi of d to b.
func encodeTXTEmps(b []byte, d *doc, lo, hi int) ([]byte, error) {
	chunks := splitChunks(hi-lo, d.parallelFrom)
	starts := make([]int, len(chunks))
	off := len(b)
	for c, r := range chunks {
		starts[c] = off
		for i := lo + r[0]; i < lo+r[1]; i++ {
			off += txtEmpSize(&d.Emps[i])
		}
	}
	b = slices.Grow(b, off-len(b))[:off]
	errs := make([]error, len(chunks))
	forChunks(chunks, func(c, clo, chi int) {
		cw := &txtw{b: b, p: starts[c]}
		for i := lo + clo; i < lo+chi; i++ {
			if err := cw.employee(&d.Emps[i], i); err != nil {
				errs[c] = err
				return
			}
		}
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

func (w *txtw) header(d *doc) error {
	l := layoutH
	w.text("H", 1)
	w.text(d.EDB, l[1].width)
	w.text(d.VidObvrznik, l[2].width)
	w.text(d.VidObvrska, l[3].width)
	for k, v := range [3]int64{int64(d.Month), int64(d.Year), int64(len(d.Emps))} {
		if err := w.num(v, l[4+k].width, l[4+k].name); err != nil {
			return err
		}
	}
	for k := range d.Totals {
		if err := w.num(d.Totals[k], l[7+k].width, l[7+k].name); err != nil {
			return err
		}
	}
	w.text(d.PayerName, l[22].width)
	w.crlf()
	return nil
}

// employee writes record i's E record and its D records; an error names
// the record as encodeTXT reports it.
func (w *txtw) employee(e *emp, i int) error {
	l := layoutE
	w.text("E", 1)
	if err := w.num(int64(e.No), l[1].width, l[1].name); err != nil {
		return fmt.Errorf("record %d: %w", i, atEmployee(err, i))
	}
	w.text(e.EMBG, l[2].width)
	w.text(e.Municipality, l[3].width)
	w.text(e.Account, l[4].width)
	if err := w.num(int64(e.Days), l[5].width, l[5].name); err != nil {
		return fmt.Errorf("record %d: %w", i, atEmployee(err, i))
	}
	for k := range e.Amounts {
		if err := w.num(e.Amounts[k], l[6+k].width, l[6+k].name); err != nil {
			return fmt.Errorf("record %d: %w", i, atEmployee(err, i))
		}
	}
	if err := w.num(e.Hours, l[21].width, l[21].name); err != nil {
		return fmt.Errorf("record %d: %w", i, atEmployee(err, i))
	}
	w.text(e.LastName, l[22].width)
	w.text(e.FirstName, l[23].width)
	w.crlf()
	l = layoutD
	for j := range e.Details {
		dt := &e.Details[j]
		w.text("D", 1)
		for k, v := range [7]int64{int64(e.No), int64(j + 1), 0, int64(dt.Contract), int64(dt.From), int64(dt.To), int64(dt.Days)} {
			if k == 2 {
				w.text(dt.Staz, l[3].width)
				continue
			}
			if err := w.num(v, l[1+k].width, l[1+k].name); err != nil {
				return fmt.Errorf("record %d, hours %d: %w", i, j+1, atEmployee(err, i))
			}
		}
		w.text(dt.HourType, l[8].width)
		w.text(dt.Movement, l[9].width)
		w.text(dt.Fzom, l[10].width)
		w.text(dt.Exemption, l[11].width)
		w.text(dt.Body, l[12].width)
		if err := w.num(dt.Hours, l[13].width, l[13].name); err != nil {
			return fmt.Errorf("record %d, hours %d: %w", i, j+1, atEmployee(err, i))
		}
		if err := w.num(dt.Amount, l[14].width, l[14].name); err != nil {
			return fmt.Errorf("record %d, hours %d: %w", i, j+1, atEmployee(err, i))
		}
		w.crlf()
	}
	return nil
}

// MpinTXT runs the checks and renders req in the legacy fixed-width TXT.
// A value too wide for its field is a validation error (a total of many
// large records, or forced input), never a truncated number.
func MpinTXT(req *MpinRequest, st Statutory) ([]byte, error) { return mpinTXT(req, st, parallelMin) }

func mpinTXT(req *MpinRequest, st Statutory, from int) ([]byte, error) {
	d, err := fileDoc(req, st, from)
	if err != nil {
		return nil, err
	}
	return txtOf(d, "records", true)
}

// txtOf encodes d (see txtFits).
func txtOf(d *doc, path string, byRecord bool) ([]byte, error) {
	if err := txtFits(d, path, byRecord); err != nil {
		return nil, err
	}
	b, err := encodeCheckedTXT(d)
	if err != nil {
		return nil, fmt.Errorf("mpin txt: %w", err)
	}
	return b, nil
}

// txtFits reports a number of d too wide for its TXT field as a
// validation error at path (the request's records, or batches for a
// combined file), or at the record itself when the file's employees are
// the request's records in order (byRecord).
func txtFits(d *doc, path string, byRecord bool) error {
	err := checkTXT(d)
	var oe *overflowError
	switch {
	case errors.As(err, &oe):
		p := path
		if byRecord && oe.emp >= 0 {
			p = path + "[" + strconv.Itoa(oe.emp) + "]"
		}
		return denar.Invalid(denar.FieldError{Path: p, Message: oe.explain()})
	case err != nil:
		return fmt.Errorf("mpin txt: %w", err)
	}
	return nil
}

// decodeTXT parses what encodeTXT writes; it is the reference reader used by
// the tests and documents the layout in code.
func decodeTXT(b []byte) (*doc, error) {
	if len(b) < 2 || b[0] != 0xFF || b[1] != 0xFE {
		return nil, errors.New("txt: missing UTF-16LE BOM")
	}
	if len(b)%2 != 0 {
		return nil, errors.New("txt: odd byte count")
	}
	u := make([]uint16, (len(b)-2)/2)
	for i := range u {
		u[i] = uint16(b[2+2*i]) | uint16(b[3+2*i])<<8
	}
	var lines [][]uint16
	for start := 0; start < len(u); {
		end := -1
		for i := start; i+1 < len(u); i++ {
			if u[i] == '\r' && u[i+1] == '\n' {
				end = i
				break
			}
		}
		if end < 0 {
			return nil, fmt.Errorf("txt: record at unit %d not terminated by CRLF", start)
		}
		lines = append(lines, u[start:end])
		start = end + 2
	}
	d := &doc{}
	for n, ln := range lines {
		if len(ln) == 0 {
			return nil, fmt.Errorf("txt: line %d empty", n+1)
		}
		var l []field
		switch ln[0] {
		case 'H':
			l = layoutH
		case 'E':
			l = layoutE
		case 'D':
			l = layoutD
		default:
			return nil, fmt.Errorf("txt: line %d: unknown record type %q", n+1, rune(ln[0]))
		}
		if len(ln) != width(l) {
			return nil, fmt.Errorf("txt: line %d: width %d, want %d", n+1, len(ln), width(l))
		}
		vals := make([]string, len(l))
		var ints []int64
		pos := 0
		for i, f := range l {
			s := string(utf16.Decode(ln[pos : pos+f.width]))
			pos += f.width
			if f.kind == alpha {
				vals[i] = strings.TrimRight(s, " ")
				continue
			}
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("txt: line %d: %s: %w", n+1, f.name, err)
			}
			ints = append(ints, v)
		}
		switch ln[0] {
		case 'H':
			if n != 0 {
				return nil, fmt.Errorf("txt: line %d: header not first", n+1)
			}
			d.EDB, d.VidObvrznik, d.VidObvrska = vals[1], vals[2], vals[3]
			d.Month, d.Year = int(ints[0]), int(ints[1])
			copy(d.Totals[:], ints[3:18])
			d.PayerName = vals[len(vals)-1]
		case 'E':
			if n == 0 {
				return nil, errors.New("txt: first record is not a header")
			}
			e := emp{No: int(ints[0]), EMBG: vals[2], Municipality: vals[3], Account: vals[4], Days: int(ints[1])}
			copy(e.Amounts[:], ints[2:17])
			e.Hours = ints[17]
			e.LastName, e.FirstName = vals[len(vals)-2], vals[len(vals)-1]
			d.Emps = append(d.Emps, e)
		case 'D':
			if len(d.Emps) == 0 {
				return nil, fmt.Errorf("txt: line %d: hours record before any employee", n+1)
			}
			e := &d.Emps[len(d.Emps)-1]
			e.Details = append(e.Details, detail{
				Staz: vals[3], Contract: int(ints[2]), From: int(ints[3]), To: int(ints[4]), Days: int(ints[5]),
				HourType: vals[8], Movement: vals[9], Fzom: vals[10], Exemption: vals[11], Body: vals[12],
				Hours: ints[6], Amount: ints[7],
			})
		}
	}
	if len(lines) == 0 {
		return nil, errors.New("txt: no header")
	}
	return d, nil
}
