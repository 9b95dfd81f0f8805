package filing

// The encoders as they were before the performance work (commit 8ca884e
// and, for the XML, the one-goroutine renderer of 9bfd000), kept verbatim
// in spirit as oracles: the fast encoders must write exactly their bytes,
// and the benchmarks measure against them in the same run.

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
)

type refXW struct {
	bytes.Buffer
}

func (w *refXW) el(indent, name, val string) {
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

func (w *refXW) int(indent, name string, v int64) { w.el(indent, name, strconv.FormatInt(v, 10)) }

func refXMLDate(day, month, year int) string {
	if day == 0 {
		return ""
	}
	return strconv.Itoa(day) + "." + pad2(month) + "." + strconv.Itoa(year)
}

func refRenderXML(d *doc) []byte {
	w := &refXW{}
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
			w.el(i3, "DatumPocetok", refXMLDate(dt.From, d.Month, d.Year))
			w.el(i3, "DatumZavrsuvanje", refXMLDate(dt.To, d.Month, d.Year))
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

type refTxtw struct {
	units []uint16
}

func (w *refTxtw) text(s string, n int) {
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

func (w *refTxtw) num(v int64, n int, name string) error {
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

func (w *refTxtw) record(l []field, vals []any) error {
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

func refAmountVals(a *[15]int64) []any {
	v := make([]any, 15)
	for i := range a {
		v[i] = a[i]
	}
	return v
}

// refEncodeTXT renders d as UTF-16LE bytes with BOM.
func refEncodeTXT(d *doc) ([]byte, error) {
	w := &refTxtw{units: make([]uint16, 0, WidthH+2+len(d.Emps)*(WidthE+2+2*(WidthD+2)))}
	h := append(append([]any{"H", d.EDB, d.VidObvrznik, d.VidObvrska, d.Month, d.Year, len(d.Emps)},
		refAmountVals(&d.Totals)...), d.PayerName)
	if err := w.record(layoutH, h); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	for i := range d.Emps {
		e := &d.Emps[i]
		ev := append(append([]any{"E", e.No, e.EMBG, e.Municipality, e.Account, e.Days},
			refAmountVals(&e.Amounts)...), e.Hours, e.LastName, e.FirstName)
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

func refToCyrillic(s string) (string, bool) {
	if !hasLatin(s) {
		for _, r := range s {
			if _, ok := latinOne[r]; !ok && (r < 0x0400 || r > 0x04FF) {
				return "", false
			}
		}
		return s, true
	}
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); {
		matched := false
		for _, m := range latinMulti {
			mr := m.runes
			if i+len(mr) <= len(rs) && strings.EqualFold(string(rs[i:i+len(mr)]), m.lat) {
				out := m.cyr
				if rs[i] != []rune(strings.ToLower(string(rs[i])))[0] {
					out = strings.ToUpper(out)
				}
				b.WriteString(out)
				i += len(mr)
				matched = true
				break
			}
		}
		if matched {
			continue
		}
		r := rs[i]
		lower := []rune(strings.ToLower(string(r)))[0]
		if c, ok := latinOne[lower]; ok {
			if lower != r {
				c = strings.ToUpper(c)
			}
			b.WriteString(c)
		} else if r >= 0x0400 && r <= 0x04FF {
			b.WriteRune(r)
		} else {
			return "", false
		}
		i++
	}
	return b.String(), true
}

// docs returns the documents the comparisons run on: the golden fixtures,
// the benchmark batch and generated batches with every branch taken.
func testDocs(t testing.TB) []*doc {
	var out []*doc
	reqs := []*MpinRequest{fixtureRegular(), fixtureCorrection()}
	for seed := int64(1); seed <= 6; seed++ {
		reqs = append(reqs, randomRequest(seed, 50+int(seed)*400))
	}
	big := fixtureRegular()
	big.Records = manyRecords(2000)
	reqs = append(reqs, big)
	for _, req := range reqs {
		out = append(out, testDoc(req))
	}
	return out
}

// TestEncodersMatchReference: the fast encoders write byte for byte what the
// reference encoders write, on one goroutine and on several, and the XML
// size computed ahead is the size written.
func TestEncodersMatchReference(t *testing.T) {
	for _, seq := range []bool{false, true} {
		for n, d := range testDocs(t) {
			if seq {
				d.parallelFrom = sequential
			}
			sameEncodings(t, fmt.Sprintf("doc %d (sequential %v)", n, seq), d)
		}
	}
}

func sameEncodings(t *testing.T, name string, d *doc) {
	t.Helper()
	if got, want := renderXML(d), refRenderXML(d); !bytes.Equal(got, want) {
		t.Fatalf("%s: XML differs from the reference at byte %d", name, firstDiff(got, want))
	}
	for i := range d.Emps {
		if got, want := xmlEmpSize(d, &d.Emps[i]), len(appendXMLEmp(nil, d, &d.Emps[i])); got != want {
			t.Fatalf("%s: employee %d: size %d computed, %d written", name, i, got, want)
		}
	}
	got, gerr := encodeTXT(d)
	want, werr := refEncodeTXT(d)
	if fmt.Sprint(gerr) != fmt.Sprint(werr) {
		t.Fatalf("%s: TXT error %v, reference %v", name, gerr, werr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: TXT differs from the reference at byte %d", name, firstDiff(got, want))
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// FuzzEncodersMatchReference builds a document from arbitrary text and
// numbers (invalid UTF-8, XML metacharacters, characters outside the BMP,
// numbers of any width) and compares the fast encoders with the reference.
func FuzzEncodersMatchReference(f *testing.F) {
	f.Add("4030990123455", "Дизајнија <&> \"ДООЕЛ\"", "1505985412345", "179", "Петровски\r\n😀", "Ана\xff", "0050", "4061", int64(36037), int64(-5), int64(12345678901234), 5, 2026, 3, 17)
	f.Add("", "", "", "", "", "", "", "", int64(0), int64(0), int64(0), 0, 0, 0, 0)
	f.Add("\t'", "\x00\x01", "&amp;", "<", ">", "\"", "'", "\r", int64(-9223372036854775808), int64(9223372036854775807), int64(-1), -1, 99999, 10, 0)
	f.Fuzz(func(t *testing.T, edb, payer, embg, mun, last, first, staz, fzom string, a, b, c int64, month, year, day, no int) {
		d := &doc{EDB: edb, VidObvrznik: staz, VidObvrska: mun, Month: month, Year: year, PayerName: payer}
		for k := range d.Totals {
			d.Totals[k] = []int64{a, b, c}[k%3]
		}
		for i := range 3 {
			e := emp{No: no + i, EMBG: embg, Municipality: mun, Account: fzom, Days: day, LastName: last, FirstName: first, Hours: b}
			for k := range e.Amounts {
				e.Amounts[k] = []int64{a, b, c, int64(k)}[(k+i)%4]
			}
			for j := range i + 1 {
				e.Details = append(e.Details, detail{Staz: staz, Contract: j, From: day * j, To: day, Days: j, HourType: first,
					Movement: last, Fzom: fzom, Exemption: payer, Body: embg, Hours: c, Amount: a})
			}
			d.Emps = append(d.Emps, e)
		}
		sameEncodings(t, "fuzz", d)
	})
}

// FuzzToCyrillic: the ASCII fast path transliterates as the general loop.
func FuzzToCyrillic(f *testing.F) {
	for _, s := range []string{"Gjorgjievska", "DZHEMAL", "dZh", "Kjiro", "O'Neil-Nj", "Xavier", "Ana Marija", "Šefki", "Игор", "q", "", "Ljubica1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, gok := toCyrillic(s)
		want, wok := refToCyrillic(s)
		if got != want || gok != wok {
			t.Fatalf("toCyrillic(%q) = %q, %v; reference %q, %v", s, got, gok, want, wok)
		}
	})
}

// xmlDoc is the МПИН document as encoding/xml would marshal it: the
// obvious implementation, used as the baseline of the benchmarks below.
type xmlDoc struct {
	XMLName          xml.Name `xml:"MpinCalculation"`
	Schema           string   `xml:"xsi:noNamespaceSchemaLocation,attr"`
	Xsi              string   `xml:"xmlns:xsi,attr"`
	EdbIsplatitel    string
	SifraVidObvrznik string
	VoImeNaObvrznik  string `xml:"VoImeNaObvrznikEdb"`
	SifraVidObvrska  string
	MesecPridonesi   string
	GodinaPridonesi  int
	BrojVraboteni    int
	Totals           xmlAmounts
	Zabeleska        string
	Emps             []xmlEmp `xml:"MpinCalculationSt"`
}

// xmlAmounts marshals the fifteen amounts under their tags with a suffix.
type xmlAmounts struct {
	suffix string
	v      [15]int64
}

func (a xmlAmounts) MarshalXML(e *xml.Encoder, _ xml.StartElement) error {
	for k, n := range amountNames {
		if err := e.EncodeElement(a.v[k], xml.StartElement{Name: xml.Name{Local: n + a.suffix}}); err != nil {
			return err
		}
	}
	return nil
}

type xmlEmp struct {
	RedenBroj           int
	VrabotenEmbg        string
	SifraOpstina        string
	TransakciskaSmetka  string
	DenoviStazVkVrab    int
	Amounts             xmlAmounts
	RabotniCasoviVkVrab int64
	Details             []xmlDetail `xml:"MpinCalculationStDetail"`
}

type xmlDetail struct {
	RedenBroj              int
	SifraRabotenOdnos      string
	BrojDogovor            int
	DatumPocetok           string
	DatumZavrsuvanje       string
	DenoviStaz             int
	SifraTipRabotenCas     string
	SifraDvizenje          string
	SifraPodracnoZdravstvo string
	SifraOsloboduvanje     string
	NadlezenOrganEdb       string
	BrojCasovi             int64
	BrutoIznos             int64
}

func encodingXML(d *doc) ([]byte, error) {
	x := xmlDoc{Schema: "schema.xsd", Xsi: "http://www.w3.org/2001/XMLSchema-instance", EdbIsplatitel: d.EDB,
		SifraVidObvrznik: d.VidObvrznik, VoImeNaObvrznik: d.EDB, SifraVidObvrska: d.VidObvrska,
		MesecPridonesi: pad2(d.Month), GodinaPridonesi: d.Year, BrojVraboteni: len(d.Emps),
		Totals: xmlAmounts{"Vk", d.Totals}}
	for _, e := range d.Emps {
		xe := xmlEmp{RedenBroj: e.No, VrabotenEmbg: e.EMBG, SifraOpstina: e.Municipality, TransakciskaSmetka: e.Account,
			DenoviStazVkVrab: e.Days, Amounts: xmlAmounts{"VkVrab", e.Amounts}, RabotniCasoviVkVrab: e.Hours}
		for j, dt := range e.Details {
			xe.Details = append(xe.Details, xmlDetail{RedenBroj: j + 1, SifraRabotenOdnos: dt.Staz, BrojDogovor: dt.Contract,
				DatumPocetok: refXMLDate(dt.From, d.Month, d.Year), DatumZavrsuvanje: refXMLDate(dt.To, d.Month, d.Year),
				DenoviStaz: dt.Days, SifraTipRabotenCas: dt.HourType, SifraDvizenje: dt.Movement, SifraPodracnoZdravstvo: dt.Fzom,
				SifraOsloboduvanje: dt.Exemption, NadlezenOrganEdb: dt.Body, BrojCasovi: dt.Hours, BrutoIznos: dt.Amount})
		}
		x.Emps = append(x.Emps, xe)
	}
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n")
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	if err := enc.Encode(x); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// TestEncodingXMLBaselineIsTheSameDocument: the baseline writes the same
// bytes for the benchmark batch, so the ratio compares like with like.
func TestEncodingXMLBaselineIsTheSameDocument(t *testing.T) {
	req := benchRequest()
	got, err := encodingXML(testDoc(req))
	if err != nil {
		t.Fatal(err)
	}
	want, err := MpinXML(req, stat2026{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("encoding/xml baseline differs at byte %d", firstDiff(got, want))
	}
}

func benchRequest() *MpinRequest {
	req := fixtureRegular()
	req.Records, req.Force = manyRecords(10000), true
	return req
}

// BenchmarkMpin10kVsBaseline measures, in the same loop, validate alone,
// validate + XML and validate + TXT for 10,000 records against two
// baselines: encoding/xml marshalling the same (already built) document,
// and the reference encoders. It reports milliseconds per file and the
// ratios; ns/op is the sum of everything and means nothing on its own.
func BenchmarkMpin10kVsBaseline(b *testing.B) {
	req := benchRequest()
	var tv, tx, tt, tenc, trefx, treft time.Duration
	lap := func(acc *time.Duration, fn func()) {
		t0 := time.Now()
		fn()
		*acc += time.Since(t0)
	}
	must := func(_ []byte, err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	d := testDoc(req)
	for b.Loop() {
		lap(&tv, func() { Validate(req, stat2026{}) })
		lap(&tx, func() { must(MpinXML(req, stat2026{})) })
		lap(&tt, func() { must(MpinTXT(req, stat2026{})) })
		lap(&tenc, func() { must(encodingXML(d)) })
		lap(&trefx, func() { refRenderXML(d) })
		lap(&treft, func() { must(refEncodeTXT(d)) })
	}
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return d.Seconds() * 1000 / n }
	b.ReportMetric(ms(tv), "validate-ms")
	b.ReportMetric(ms(tx), "xml-ms")
	b.ReportMetric(ms(tt), "txt-ms")
	b.ReportMetric(ms(tenc), "encoding/xml-ms")
	b.ReportMetric(float64(tx)/float64(tenc), "xml/encoding-xml")
	b.ReportMetric(float64(tt)/float64(tenc), "txt/encoding-xml")
	b.ReportMetric(ms(trefx), "ref-xml-encoder-ms")
	b.ReportMetric(ms(treft), "ref-txt-encoder-ms")
}
