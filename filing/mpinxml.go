package filing

import (
	"bytes"
	"encoding/xml"
	"strconv"
	"strings"
	"sync"
)

// MpinXML runs the checks and renders req in the layout UJP accepted in 2026
// (research §4.2): root MpinCalculation without a namespace, three levels in
// a fixed element order, whole-denar amounts, dates as j.m.Y and empty
// elements written as <Tag></Tag>. Blocking issues return a *BlockingError
// unless req.Force.
func MpinXML(req *MpinRequest, st Statutory) ([]byte, error) {
	if err := gate(req, st); err != nil {
		return nil, err
	}
	return renderXML(buildDoc(req, allowanceFor(req, st))), nil
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

// partPool keeps the buffers employees are rendered into: they are copied
// into the file, so a large batch need not allocate (and clear) them anew
// each time.
var partPool = sync.Pool{New: func() any { return &xw{} }}

// date writes an element holding xmlDate(day, month, year) without
// building the string.
func (w *xw) date(indent, name string, day, month, year int) {
	w.WriteString(indent)
	w.WriteByte('<')
	w.WriteString(name)
	w.WriteByte('>')
	if day != 0 {
		w.Write(strconv.AppendInt(w.num[:0], int64(day), 10))
		w.WriteByte('.')
		if month >= 0 && month < 10 {
			w.WriteByte('0')
		}
		w.Write(strconv.AppendInt(w.num[:0], int64(month), 10))
		w.WriteByte('.')
		w.Write(strconv.AppendInt(w.num[:0], int64(year), 10))
	}
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

func renderXML(d *doc) []byte {
	w := &xw{}
	w.Grow(4096) // the header; employees are rendered apart and joined below
	w.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n")
	w.WriteString(`<MpinCalculation xsi:noNamespaceSchemaLocation="schema.xsd" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">` + "\n")
	const i1, i2, i3 = "  ", "    ", "      "
	w.el(i1, "EdbIsplatitel", d.EDB)
	w.el(i1, "SifraVidObvrznik", d.VidObvrznik)
	w.el(i1, "VoImeNaObvrznikEdb", d.EDB)
	w.el(i1, "SifraVidObvrska", d.VidObvrska)
	w.el(i1, "MesecPridonesi", pad2(d.Month))
	w.el(i1, "GodinaPridonesi", strconv.Itoa(d.Year))
	w.int(i1, "BrojVraboteni", int64(len(d.Emps)))
	for k, n := range amountNames {
		w.int(i1, n+"Vk", d.Totals[k])
	}
	w.el(i1, "Zabeleska", "")
	// Employees are independent: render them on every core into their own
	// buffers and join them in order.
	parts := inParallel(len(d.Emps), func(lo, hi int) *xw {
		pw := partPool.Get().(*xw)
		pw.Reset()
		size := 0
		for i := lo; i < hi; i++ {
			size += 1300 + 800*len(d.Emps[i].Details)
		}
		pw.Grow(size)
		for i := lo; i < hi; i++ {
			pw.employee(d, &d.Emps[i])
		}
		return pw
	})
	const footer = "</MpinCalculation>\n"
	total := w.Len() + len(footer)
	for _, pw := range parts {
		total += pw.Len()
	}
	out := make([]byte, 0, total)
	out = append(out, w.Bytes()...)
	for _, pw := range parts {
		out = append(out, pw.Bytes()...)
		partPool.Put(pw)
	}
	return append(out, footer...)
}

// employee writes one <MpinCalculationSt> element.
func (w *xw) employee(d *doc, e *emp) {
	const i1, i2, i3 = "  ", "    ", "      "
	w.WriteString(i1 + "<MpinCalculationSt>\n")
	w.int(i2, "RedenBroj", int64(e.No))
	w.el(i2, "VrabotenEmbg", e.EMBG)
	w.el(i2, "SifraOpstina", e.Municipality)
	w.el(i2, "TransakciskaSmetka", e.Account)
	w.int(i2, "DenoviStazVkVrab", int64(e.Days))
	for k, n := range amountNames {
		w.int(i2, n+"VkVrab", e.Amounts[k])
	}
	w.int(i2, "RabotniCasoviVkVrab", e.Hours)
	for j, dt := range e.Details {
		w.WriteString(i2 + "<MpinCalculationStDetail>\n")
		w.int(i3, "RedenBroj", int64(j+1))
		w.el(i3, "SifraRabotenOdnos", dt.Staz)
		w.int(i3, "BrojDogovor", int64(dt.Contract))
		w.date(i3, "DatumPocetok", dt.From, d.Month, d.Year)
		w.date(i3, "DatumZavrsuvanje", dt.To, d.Month, d.Year)
		w.int(i3, "DenoviStaz", int64(dt.Days))
		w.el(i3, "SifraTipRabotenCas", dt.HourType)
		w.el(i3, "SifraDvizenje", dt.Movement)
		w.el(i3, "SifraPodracnoZdravstvo", dt.Fzom)
		w.el(i3, "SifraOsloboduvanje", dt.Exemption)
		w.el(i3, "NadlezenOrganEdb", dt.Body)
		w.int(i3, "BrojCasovi", dt.Hours)
		w.int(i3, "BrutoIznos", dt.Amount)
		w.WriteString(i2 + "</MpinCalculationStDetail>\n")
	}
	w.WriteString(i1 + "</MpinCalculationSt>\n")
}
