//go:build ignore

// gen rebuilds the embedded codebook snapshot from the text mirrors of UJP's
// e-Faktura wiki. Run from this directory:
//
//	go run gen.go -ref /work/shared/reference/ujp
//
// Lists that the wiki does not publish in full are written from the
// literals below, each with the source it was taken from (see SOURCES.md).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"regexp"
	"strconv"
	"strings"
)

type code struct {
	Code        string `json:"code"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Source      string `json:"source"`
}

type docType struct {
	Code                 string `json:"code"`
	Name                 string `json:"name"`
	HasItems             bool   `json:"hasItems"`
	HasReference         bool   `json:"hasReference"`
	IsReferenceMandatory bool   `json:"isReferenceMandatory"`
	Source               string `json:"source"`
}

type taxGroup struct {
	Code    string `json:"code"`
	Name    string `json:"name"`
	Percent int    `json:"percent"`
	Source  string `json:"source"`
}

type taxIndicator struct {
	Code         string   `json:"code"`
	CategoryName string   `json:"categoryName"`
	Note         string   `json:"note"`
	VatImpact    string   `json:"vatImpact"`
	TaxGroups    []string `json:"taxGroupCodes"`
	Source       string   `json:"source"`
}

func main() {
	ref := flag.String("ref", "/work/shared/reference/ujp", "directory of the UJP wiki text mirrors")
	flag.Parse()
	read := func(name string) string {
		b, err := os.ReadFile(*ref + "/" + name)
		if err != nil {
			log.Fatal(err)
		}
		return string(b)
	}
	cb := read("sifrarnici-field-codebook.txt")
	ti := read("tax-indicators.txt")
	st := read("statuses.txt")

	write("document-types.json", []docType{
		{"100", "Фактура", true, false, false, "api-specification.txt (GET /document-types example)"},
		{"110", "Книжно одобрение", true, true, false, "research §1.10 [MK-INV]"},
		{"120", "Книжно задолжение", true, true, false, "research §1.10 [MK-INV]"},
		{"130", "Авансна фактура", true, false, false, "research §1.10 [HYR] (practitioner)"},
		{"150", "Времена ситуација", true, false, false, "research §1.10 [HYR] (practitioner)"},
		{"160", "Фактура/Испратница", true, false, false, "research §1.10 [HYR] (practitioner)"},
		{"170", "Фактура кон физичко лице", true, false, false, "research §1.10 [HYR] (practitioner)"},
	})

	refTypes := []code{
		{Code: "SYS", Name: "Од систем", Description: "Единствен идентификациски број на поврзана фактура (E-Invoice Unique ID код)", Source: "api-specification.txt (GET /ref-document-types example)"},
		{Code: "JN", Name: "Документ за јавна набавка", Source: "api-specification.txt (GET /ref-document-types example)"},
		{Code: "NAR", Name: "Нарачка", Source: "api-specification.txt (codebook validation example)"},
	}
	for _, p := range pairs(section(cb, "Назив на референтен документ |\nDOG", "¶ UJP03-01"), "DOG") {
		refTypes = append(refTypes, code{Code: p[0], Name: p[1], Source: "sifrarnici-field-codebook.txt (UJP02-01)"})
	}
	write("ref-document-types.json", refTypes)

	// The PDF numbers payment types 1000…1090; the API serves P10, P11, P12
	// with the same first three names in the same order, so the PDF's list is
	// mapped in order onto P10…P19 (research §1.10).
	var pay []code
	for i, p := range pairs(section(cb, "Опис на код за начин на плаќање |\n1000", "¶ ШИФРАРНИК ЗА ПОЛИЊАТА UJP10-08"), "1000") {
		pay = append(pay, code{Code: "P1" + strconv.Itoa(i), Name: p[1], Source: "sifrarnici-field-codebook.txt (UJP10-01, PDF code " + p[0] + ") mapped onto the API's P1x codes"})
	}
	write("payment-types.json", pay)

	var cur []code
	for _, p := range pairs(section(cb, "Валута на плаќање |\nMKD", ""), "MKD") {
		cur = append(cur, code{Code: p[0], Name: p[0], Description: p[1], Source: "sifrarnici-field-codebook.txt (UJP10-08/09)"})
	}
	write("currencies.json", cur)

	var countries []code
	for _, p := range pairs(section(cb, "Држава |\nAD", "¶ ШИФРАРНИК ЗА ПОЛИЊАТА UJP04-03"), "AD") {
		countries = append(countries, code{Code: p[0], Name: p[1], Source: "sifrarnici-field-codebook.txt (UJP05-01, ISO 3166-1 alpha-2)"})
	}
	write("countries.json", countries)

	write("void-reasons.json", []code{
		{Code: "S-1", Name: "Погрешен купувач", Source: "api-specification.txt (GET /void-reasons)"},
		{Code: "S-2", Name: "Поништување на договор", Source: "api-specification.txt (GET /void-reasons)"},
		{Code: "S-3", Name: "Стоката е вратена во целост", Source: "api-specification.txt (GET /void-reasons)"},
	})
	write("correction-reasons.json", []code{
		{Code: "C01", Name: "Грешка во цена", Source: "api-specification.txt (GET /correction-reason)"},
		{Code: "C02", Name: "Грешка во количина", Source: "research §1.10 [MK-SEED] (practitioner)"},
		{Code: "C03", Name: "Грешка во опис", Source: "research §1.10 [MK-SEED] (practitioner)"},
	})
	// О-6 and О-7 start with a Cyrillic О (U+041E) in UJP's captured list;
	// they are kept as captured (research §0.4, §1.9).
	write("reject-reasons.json", []code{
		{Code: "O-1", Name: "Погрешно пресметан ДДВ (несоодветна даночна основа, ДДВ стапка, неправилен даночен индикатор и сл.)", Source: "api-specification.txt (GET /reject-reason)"},
		{Code: "O-2", Name: "Грешка во нарачка (количина, цена, опис на промет и друго)", Source: "api-specification.txt (GET /reject-reason)"},
		{Code: "O-3", Name: "Погрешни податоци за купувач (едб, назив, адреса и друго)", Source: "api-specification.txt (GET /reject-reason)"},
		{Code: "O-4", Name: "Прометот не е извршен", Source: "research §1.9 [TAMI-REJ] (practitioner; wording paraphrased)"},
		{Code: "O-5", Name: "Дупликат фактура", Source: "research §1.9 [TAMI-REJ] (practitioner; wording paraphrased)"},
		{Code: "\u041e-6", Name: "Погрешен датум (на издавање или на промет)", Source: "research §1.9 [TAMI-REJ] (practitioner; Cyrillic О; wording paraphrased)"},
		{Code: "\u041e-7", Name: "Друго (задолжителен коментар)", Source: "research §1.9 [TAMI-REJ] (practitioner; Cyrillic О; wording paraphrased)"},
	})
	write("tax-groups.json", []taxGroup{
		{"DDV-A", "ДДВ 18%", 18, "api-specification.txt (GET /tax-groups), tax-indicators.txt"},
		{"DDV-B", "ДДВ 5%", 5, "tax-indicators.txt (DDV-B, Даночна стапка: 5%)"},
		{"DDV-V", "ДДВ 10%", 10, "tax-indicators.txt (DDV-V, Даночна стапка: 10%)"},
		{"DDV-G", "ДДВ 0%", 0, "tax-indicators.txt (DDV-G, Даночна стапка: 0)"},
	})

	write("tax-indicators.json", taxIndicators(ti))

	var statuses []code
	lines := strings.Split(st, "\n")
	for i := 0; i+2 < len(lines); i++ {
		c := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(lines[i]), "|"))
		if regexp.MustCompile(`^\d\d$`).MatchString(c) {
			statuses = append(statuses, code{Code: c, Name: cell(lines[i+1]), Description: cell(lines[i+2]), Source: "statuses.txt"})
		}
	}
	write("document-statuses.json", statuses)
}

func cell(s string) string { return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "|")) }

// section returns the text from the line that starts a code table (first is
// the header cell followed by the first code) up to end.
func section(s, first, end string) string {
	i := strings.Index(s, first)
	if i < 0 {
		log.Fatalf("section %q not found", first)
	}
	s = s[i+strings.Index(first, "\n")+1:]
	if end != "" {
		j := strings.Index(s, end)
		if j < 0 {
			log.Fatalf("end %q not found", end)
		}
		s = s[:j]
	}
	return s
}

// pairs reads "code |\nname |" cell pairs, stopping at the first line that is
// not a cell or at a blank cell.
func pairs(s, firstCode string) [][2]string {
	var out [][2]string
	var cells []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasSuffix(l, "|") {
			break
		}
		c := cell(l)
		if c == "" {
			break
		}
		cells = append(cells, c)
	}
	for i := 0; i+1 < len(cells); i += 2 {
		out = append(out, [2]string{cells[i], cells[i+1]})
	}
	if len(out) == 0 || out[0][0] != firstCode {
		log.Fatalf("table starting %s not parsed", firstCode)
	}
	return out
}

var groupRe = regexp.MustCompile(`DDV-[ABVG]`)

func taxIndicators(t string) []taxIndicator {
	head := "Код за даночна стапка |"
	start := strings.Index(t, head) + len(head)
	end := strings.Index(t, "¶ Влезни Даночни Индикатори")
	cells := regexp.MustCompile(`\|\s*\n`).Split(t[start:end], -1)
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	cells = cells[:len(cells)-1]
	if len(cells)%5 != 0 {
		log.Fatalf("tax indicator table: %d cells", len(cells))
	}
	var out []taxIndicator
	seen := map[string]bool{}
	add := func(code, name, note, groups, src string) {
		if seen[code] {
			return // the table lists DDV-10-14-4-6 twice
		}
		seen[code] = true
		g := groupRe.FindAllString(groups, -1)
		out = append(out, taxIndicator{Code: code, CategoryName: name, Note: note, TaxGroups: g, VatImpact: impact(code, name, note, g), Source: src})
	}
	for i := 0; i < len(cells); i += 5 {
		add(cells[i], cells[i+1], cells[i+2], cells[i+4], "tax-indicators.txt (table)")
	}
	// The "common" indicators are described after the table without a rate
	// column; their groups follow from their names.
	common := map[string]string{"DDV-8": "DDV-G", "DDV-9": "DDV-G", "DDV-10-13": "DDV-G", "DDV-10-14": "DDV-G", "DDV-11-A": "DDV-A", "DDV-11-V": "DDV-V", "DDV-11-B": "DDV-B"}
	for _, sec := range strings.Split(t[end:], "¶ Код на даночен индикатор: ")[1:] {
		ls := strings.Split(sec, "\n")
		c := strings.TrimSpace(ls[0])
		g, ok := common[c]
		if !ok {
			continue
		}
		var name, note string
		for _, l := range ls {
			if v, ok := strings.CutPrefix(l, "Назив на даночен индикатор: "); ok {
				name = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(l, "Напомена: "); ok {
				note = strings.TrimSpace(v)
			}
		}
		add(c, name, note, g, "tax-indicators.txt (common indicator section)")
	}
	return out
}

// impact derives vatImpact, which the wiki page does not print: the API
// examples give DDV-A STANDARD and DDV-G NULA; the rule text says PRENESEN is
// the reverse charge of article 32 and OSLOBODEN exempt supplies.
func impact(code, name, note string, groups []string) string {
	low := strings.ToLower(name + " " + note)
	switch {
	case strings.Contains(low, "пренесување на даночна обврска"), strings.Contains(low, "член 32"), strings.Contains(low, "примателот на прометот"):
		return "PRENESEN"
	case strings.HasPrefix(code, "DDV-7"), strings.HasPrefix(code, "DDV-8"), strings.HasPrefix(code, "DDV-9"), strings.Contains(low, "ослободен"):
		return "OSLOBODEN"
	case len(groups) > 0 && groups[0] == "DDV-G":
		return "NULA"
	case len(groups) > 0:
		return "STANDARD"
	}
	log.Fatalf("no vatImpact for %s", code)
	return ""
}

func write(name string, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(name, append(b, '\n'), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Println("wrote", name)
}
