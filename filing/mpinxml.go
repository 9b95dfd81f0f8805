package filing

import (
	"bytes"
	"encoding/xml"
	"strconv"
	"strings"
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

func (w *xw) int(indent, name string, v int64) { w.el(indent, name, strconv.FormatInt(v, 10)) }

// xmlDate is j.m.Y: the day without a leading zero, the month with one.
func xmlDate(day, month, year int) string {
	if day == 0 {
		return ""
	}
	return strconv.Itoa(day) + "." + pad2(month) + "." + strconv.Itoa(year)
}

func pad2(n int) string {
	if n >= 0 && n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

func renderXML(d *doc) []byte {
	w := &xw{}
	n := 2048
	for i := range d.Emps {
		n += 1300 + 800*len(d.Emps[i].Details)
	}
	w.Grow(n)
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
	for _, e := range d.Emps {
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
			w.el(i3, "DatumPocetok", xmlDate(dt.From, d.Month, d.Year))
			w.el(i3, "DatumZavrsuvanje", xmlDate(dt.To, d.Month, d.Year))
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
	w.WriteString("</MpinCalculation>\n")
	return w.Bytes()
}
