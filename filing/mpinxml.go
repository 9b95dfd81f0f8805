package filing

import (
	"bytes"
	"encoding/xml"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
)

// MpinXML runs the checks and renders req in the layout UJP accepted in 2026
// (research §4.2): root MpinCalculation without a namespace, three levels in
// a fixed element order, whole-denar amounts, dates as j.m.Y and empty
// elements written as <Tag></Tag>. Blocking issues return a *BlockingError
// unless req.Force.
func MpinXML(req *MpinRequest, st Statutory) ([]byte, error) { return mpinXML(req, st, parallelMin) }

func mpinXML(req *MpinRequest, st Statutory, from int) ([]byte, error) {
	d, err := fileDoc(req, st, from)
	if err != nil {
		return nil, err
	}
	return renderXML(d), nil
}

// fileDoc runs a generator's checks on req (the figures' bounds, then the
// МПИН checks, which block unless req.Force) and builds its document.
func fileDoc(req *MpinRequest, st Statutory, from int) (*doc, error) {
	m := newMpinBuild(&req.Company, &req.Batch, st, buildOptions{file: true, ranges: true, from: from})
	m.add(req.Records)
	return m.doc(req.Force)
}

type xw struct {
	bytes.Buffer
	num [20]byte // scratch for integers, so they cost no allocation
}

func (w *xw) el(indent, name, val string) {
	w.WriteString(indent)
	w.WriteByte('<')
	w.WriteString(name)
	w.WriteByte('>')
	if strings.ContainsAny(val, "<>&'\"\r\n\t") {
		_ = xml.EscapeText(w, []byte(val))
	} else {
		w.WriteString(val)
	}
	w.WriteString("</")
	w.WriteString(name)
	w.WriteString(">\n")
}

func (w *xw) int(indent, name string, v int64) {
	w.WriteString(indent)
	w.WriteByte('<')
	w.WriteString(name)
	w.WriteByte('>')
	w.Write(strconv.AppendInt(w.num[:0], v, 10))
	w.WriteString("</")
	w.WriteString(name)
	w.WriteString(">\n")
}

func pad2(n int) string {
	if n >= 0 && n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// xmlSegment is how many employees are rendered at a time when the XML is
// written out: a few megabytes, whatever the size of the file.
const xmlSegment = 2048

const xmlFooter = "</MpinCalculation>\n"

// xmlHead is the file up to the first employee.
func xmlHead(d *doc) []byte {
	w := &xw{}
	w.Grow(4096)
	w.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n")
	w.WriteString(`<MpinCalculation xsi:noNamespaceSchemaLocation="schema.xsd" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">` + "\n")
	const i1 = "  "
	w.el(i1, "EdbIsplatitel", d.EDB)
	w.el(i1, "SifraVidObvrznik", d.VidObvrznik)
	w.el(i1, "VoImeNaObvrznikEdb", d.EDB)
	w.el(i1, "SifraVidObvrska", d.VidObvrska)
	w.el(i1, "MesecPridonesi", pad2(d.Month))
	w.el(i1, "GodinaPridonesi", strconv.Itoa(d.Year))
	w.int(i1, "BrojVraboteni", int64(len(d.Emps)))
	for k := range amountNames {
		w.int(i1, amountTagsVk[k], d.Totals[k])
	}
	w.el(i1, "Zabeleska", "")
	return w.Bytes()
}

// renderXML is d as МПИН XML, in one buffer of the file's exact size.
func renderXML(d *doc) []byte {
	head := xmlHead(d)
	n := len(head) + len(xmlFooter)
	for _, c := range inParallel(len(d.Emps), d.parallelFrom, func(lo, hi int) int {
		s := 0
		for i := lo; i < hi; i++ {
			s += xmlEmpSize(d, &d.Emps[i])
		}
		return s
	}) {
		n += c
	}
	b := bytes.NewBuffer(make([]byte, 0, n))
	_ = writeXML(b, d, head)
	return b.Bytes()
}

// writeXML writes d as МПИН XML to w after head (xmlHead), the employees
// xmlSegment at a time.
func writeXML(w io.Writer, d *doc, head []byte) error {
	if _, err := w.Write(head); err != nil {
		return err
	}
	var buf []byte
	for lo := 0; lo < len(d.Emps); lo += xmlSegment {
		buf = appendXMLEmps(buf[:0], d, d.Emps[lo:min(lo+xmlSegment, len(d.Emps))])
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, xmlFooter)
	return err
}

// appendXMLEmps appends the employees emps. They are written straight
// into b grown to their exact size: their sizes are computed first
// (xmlEmpSize), then every CPU renders a contiguous run of them into its
// own region.
func appendXMLEmps(b []byte, d *doc, emps []emp) []byte {
	chunks := splitChunks(len(emps), d.parallelFrom)
	ends := make([]int, len(chunks)) // end offset of each chunk in b
	forChunks(chunks, func(c, lo, hi int) {
		n := 0
		for i := lo; i < hi; i++ {
			n += xmlEmpSize(d, &emps[i])
		}
		ends[c] = n
	})
	start := len(b)
	total := start
	for c := range ends {
		total += ends[c]
		ends[c] = total
	}
	out := slices.Grow(b, total-start)[:total]
	var bad atomic.Bool
	forChunks(chunks, func(c, lo, hi int) {
		from := start
		if c > 0 {
			from = ends[c-1]
		}
		p := out[from:from:ends[c]]
		for i := lo; i < hi; i++ {
			p = appendXMLEmp(p, d, &emps[i])
		}
		// The sizes are exact by construction (TestXMLEmpSize); should one
		// ever be wrong, append would have moved p elsewhere.
		if len(p) != ends[c]-from || (len(p) > 0 && &p[0] != &out[from]) {
			bad.Store(true)
		}
	})
	if bad.Load() {
		out = out[:start]
		for i := range emps {
			out = appendXMLEmp(out, d, &emps[i])
		}
	}
	return out
}

// The tags of the fifteen amounts at level 1 and level 2.
var amountTagsVk, amountTagsVkVrab [15]string

// Fragments of an employee's XML: the markup between consecutive values,
// joined so that each value costs one append of markup. empFrags has one
// more entry than empTags; the first opens <MpinCalculationSt> and the
// first element, the last closes the last element.
var (
	empTags    []string
	detailTags = []string{"RedenBroj", "SifraRabotenOdnos", "BrojDogovor", "DatumPocetok", "DatumZavrsuvanje",
		"DenoviStaz", "SifraTipRabotenCas", "SifraDvizenje", "SifraPodracnoZdravstvo", "SifraOsloboduvanje",
		"NadlezenOrganEdb", "BrojCasovi", "BrutoIznos"}
	empFrags, detailFrags []string
	empFixed, detailFixed int // bytes of markup in an employee without details, in one detail
)

const empClose = "  </MpinCalculationSt>\n"

func init() {
	for k, n := range amountNames {
		amountTagsVk[k], amountTagsVkVrab[k] = n+"Vk", n+"VkVrab"
	}
	empTags = append(append([]string{"RedenBroj", "VrabotenEmbg", "SifraOpstina", "TransakciskaSmetka", "DenoviStazVkVrab"},
		amountTagsVkVrab[:]...), "RabotniCasoviVkVrab")
	empFrags = fragments("  <MpinCalculationSt>\n", "    ", empTags, "")
	detailFrags = fragments("    <MpinCalculationStDetail>\n", "      ", detailTags, "    </MpinCalculationStDetail>\n")
	empFixed = len(empClose)
	for _, f := range empFrags {
		empFixed += len(f)
	}
	for _, f := range detailFrags {
		detailFixed += len(f)
	}
}

// fragments returns the markup around a run of elements, one per line at
// indent: prefix and the first open tag, then each close tag with the next
// open tag, then the last close tag and suffix.
func fragments(prefix, indent string, tags []string, suffix string) []string {
	f := make([]string, len(tags)+1)
	f[0] = prefix + indent + "<" + tags[0] + ">"
	for i := 1; i < len(tags); i++ {
		f[i] = "</" + tags[i-1] + ">\n" + indent + "<" + tags[i] + ">"
	}
	f[len(tags)] = "</" + tags[len(tags)-1] + ">\n" + suffix
	return f
}

// xmlSpecial marks the bytes after which xw.el escapes a value.
var xmlSpecial = [256]bool{'<': true, '>': true, '&': true, '\'': true, '"': true, '\r': true, '\n': true, '\t': true}

func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if xmlSpecial[s[i]] {
			return true
		}
	}
	return false
}

// appendText appends s as xw.el writes an element's content: as it is,
// unless it holds a character XML escapes, then through xml.EscapeText.
func appendText(b []byte, s string) []byte {
	if !needsEscape(s) {
		return append(b, s...)
	}
	var e bytes.Buffer
	_ = xml.EscapeText(&e, []byte(s))
	return append(b, e.Bytes()...)
}

func textSize(s string) int {
	if !needsEscape(s) {
		return len(s)
	}
	return len(appendText(nil, s))
}

// intSize is len(strconv.AppendInt(nil, v, 10)).
func intSize(v int64) int {
	n := 1
	u := uint64(v)
	if v < 0 {
		n, u = 2, -u
	}
	for u >= 10 {
		u /= 10
		n++
	}
	return n
}

// appendDate appends day.MM.year as xw.date writes it; day 0 is empty.
func appendDate(b []byte, day, month, year int) []byte {
	if day == 0 {
		return b
	}
	b = strconv.AppendInt(b, int64(day), 10)
	b = append(b, '.')
	if month >= 0 && month < 10 {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, int64(month), 10)
	b = append(b, '.')
	return strconv.AppendInt(b, int64(year), 10)
}

func dateSize(day, month, year int) int {
	if day == 0 {
		return 0
	}
	n := intSize(int64(day)) + 2 + intSize(int64(month)) + intSize(int64(year))
	if month >= 0 && month < 10 {
		n++
	}
	return n
}

// appendXMLEmp appends one <MpinCalculationSt> element.
func appendXMLEmp(b []byte, d *doc, e *emp) []byte {
	f := empFrags
	b = append(b, f[0]...)
	b = strconv.AppendInt(b, int64(e.No), 10)
	b = append(b, f[1]...)
	b = appendText(b, e.EMBG)
	b = append(b, f[2]...)
	b = appendText(b, e.Municipality)
	b = append(b, f[3]...)
	b = appendText(b, e.Account)
	b = append(b, f[4]...)
	b = strconv.AppendInt(b, int64(e.Days), 10)
	for k := range e.Amounts {
		b = append(b, f[5+k]...)
		b = strconv.AppendInt(b, e.Amounts[k], 10)
	}
	b = append(b, f[20]...)
	b = strconv.AppendInt(b, e.Hours, 10)
	b = append(b, f[21]...)
	g := detailFrags
	for j := range e.Details {
		dt := &e.Details[j]
		b = append(b, g[0]...)
		b = strconv.AppendInt(b, int64(j+1), 10)
		b = append(b, g[1]...)
		b = appendText(b, dt.Staz)
		b = append(b, g[2]...)
		b = strconv.AppendInt(b, int64(dt.Contract), 10)
		b = append(b, g[3]...)
		b = appendDate(b, dt.From, d.Month, d.Year)
		b = append(b, g[4]...)
		b = appendDate(b, dt.To, d.Month, d.Year)
		b = append(b, g[5]...)
		b = strconv.AppendInt(b, int64(dt.Days), 10)
		b = append(b, g[6]...)
		b = appendText(b, dt.HourType)
		b = append(b, g[7]...)
		b = appendText(b, dt.Movement)
		b = append(b, g[8]...)
		b = appendText(b, dt.Fzom)
		b = append(b, g[9]...)
		b = appendText(b, dt.Exemption)
		b = append(b, g[10]...)
		b = appendText(b, dt.Body)
		b = append(b, g[11]...)
		b = strconv.AppendInt(b, dt.Hours, 10)
		b = append(b, g[12]...)
		b = strconv.AppendInt(b, dt.Amount, 10)
		b = append(b, g[13]...)
	}
	return append(b, empClose...)
}

// xmlEmpSize is len(appendXMLEmp(nil, d, e)).
func xmlEmpSize(d *doc, e *emp) int {
	n := empFixed + intSize(int64(e.No)) + textSize(e.EMBG) + textSize(e.Municipality) + textSize(e.Account) +
		intSize(int64(e.Days)) + intSize(e.Hours)
	for _, a := range e.Amounts {
		n += intSize(a)
	}
	for j := range e.Details {
		dt := &e.Details[j]
		n += detailFixed + intSize(int64(j+1)) + textSize(dt.Staz) + intSize(int64(dt.Contract)) +
			dateSize(dt.From, d.Month, d.Year) + dateSize(dt.To, d.Month, d.Year) + intSize(int64(dt.Days)) +
			textSize(dt.HourType) + textSize(dt.Movement) + textSize(dt.Fzom) + textSize(dt.Exemption) +
			textSize(dt.Body) + intSize(dt.Hours) + intSize(dt.Amount)
	}
	return n
}
