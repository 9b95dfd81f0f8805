package filing

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"

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

type txtw struct {
	units []uint16
}

func (w *txtw) text(s string, n int) {
	c := 0
	for _, r := range s {
		if c == n {
			break
		}
		// Keep every record one line of fixed width: line breaks and
		// characters outside the BMP (two code units) become replacements.
		if r == '\r' || r == '\n' {
			r = ' '
		} else if r > 0xFFFF || utf16.IsSurrogate(r) {
			r = '?'
		}
		w.units = append(w.units, uint16(r))
		c++
	}
	for ; c < n; c++ {
		w.units = append(w.units, ' ')
	}
}

func (w *txtw) num(v int64, n int, name string) error {
	s := strconv.FormatInt(v, 10)
	neg := v < 0
	if neg {
		s = s[1:]
	}
	pad := n - len(s)
	if neg {
		pad--
	}
	if pad < 0 {
		return fmt.Errorf("%s = %d: %w (%d characters)", name, v, errOverflow, n)
	}
	if neg {
		w.units = append(w.units, '-')
	}
	for ; pad > 0; pad-- {
		w.units = append(w.units, '0')
	}
	for i := 0; i < len(s); i++ {
		w.units = append(w.units, uint16(s[i]))
	}
	return nil
}

func (w *txtw) record(l []field, vals []any) error {
	for i, f := range l {
		switch v := vals[i].(type) {
		case string:
			w.text(v, f.width)
		case int64:
			if err := w.num(v, f.width, f.name); err != nil {
				return err
			}
		case int:
			if err := w.num(int64(v), f.width, f.name); err != nil {
				return err
			}
		}
	}
	w.units = append(w.units, '\r', '\n')
	return nil
}

func amountVals(a *[15]int64) []any {
	v := make([]any, 15)
	for i := range a {
		v[i] = a[i]
	}
	return v
}

// encodeTXT renders d as UTF-16LE bytes with BOM.
func encodeTXT(d *doc) ([]byte, error) {
	w := &txtw{units: make([]uint16, 0, WidthH+2+len(d.Emps)*(WidthE+2+2*(WidthD+2)))}
	h := append(append([]any{"H", d.EDB, d.VidObvrznik, d.VidObvrska, d.Month, d.Year, len(d.Emps)},
		amountVals(&d.Totals)...), d.PayerName)
	if err := w.record(layoutH, h); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	for i := range d.Emps {
		e := &d.Emps[i]
		ev := append(append([]any{"E", e.No, e.EMBG, e.Municipality, e.Account, e.Days},
			amountVals(&e.Amounts)...), e.Hours, e.LastName, e.FirstName)
		if err := w.record(layoutE, ev); err != nil {
			return nil, fmt.Errorf("record %d: %w", i, err)
		}
		for j, dt := range e.Details {
			dv := []any{"D", e.No, j + 1, dt.Staz, dt.Contract, dt.From, dt.To, dt.Days, dt.HourType,
				dt.Movement, dt.Fzom, dt.Exemption, dt.Body, dt.Hours, dt.Amount}
			if err := w.record(layoutD, dv); err != nil {
				return nil, fmt.Errorf("record %d, hours %d: %w", i, j+1, err)
			}
		}
	}
	out := make([]byte, 2+2*len(w.units))
	out[0], out[1] = 0xFF, 0xFE
	for i, u := range w.units {
		out[2+2*i] = byte(u)
		out[3+2*i] = byte(u >> 8)
	}
	return out, nil
}

// MpinTXT runs the checks and renders req in the legacy fixed-width TXT.
// A value too wide for its field is a validation error (only reachable with
// force or absurd input), never a truncated number.
func MpinTXT(req *MpinRequest, st Statutory) ([]byte, error) {
	if err := gate(req, st); err != nil {
		return nil, err
	}
	return txtOf(buildDoc(req, allowanceFor(req, st)))
}

func txtOf(d *doc) ([]byte, error) {
	b, err := encodeTXT(d)
	if err != nil {
		if errors.Is(err, errOverflow) {
			return nil, denar.Invalid(denar.FieldError{Path: "records", Message: "mpin txt: " + err.Error()})
		}
		return nil, fmt.Errorf("mpin txt: %w", err)
	}
	return b, nil
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
