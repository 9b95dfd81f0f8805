package filing

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestGrossFromNet(t *testing.T) {
	tests := []struct {
		net, sub          string
		gross, pit, check string
	}{
		{"10000", "", "11111", "1111", "10000"}, // UJP's example (E16)
		{"10000", "7.3", "11111", "1111", "10000"},
		{"10000", "13.2", "10695", "695", "10000"}, // E17: 35 % normative costs
		{"9000", "7.1", "10000", "1000", "9000"},
		{"1", "", "1", "0", "1"},
		// The net is kept as given, never rounded (issue 16, defect 8):
		// 11,110.99 × 10 % = 1,111.099 → 1,111; 11,110.99 − 1,111 = 9,999.99.
		{"9999.99", "", "11110.99", "1111", "9999.99"},
		{"5000.5", "13.2", "5348.5", "348", "5000.5"},
	}
	for _, tt := range tests {
		req := &GrossFromNetRequest{Net: M(tt.net)}
		if tt.sub != "" {
			req.SubtypeIncome = sp(tt.sub)
		}
		got, err := GrossFromNet(req)
		if err != nil {
			t.Fatalf("%s/%s: %v", tt.net, tt.sub, err)
		}
		if got.Gross.D.String() != tt.gross || got.PIT.D.String() != tt.pit || got.Net.D.String() != tt.check {
			t.Errorf("%s/%s: gross %s pit %s net %s, want %s %s %s", tt.net, tt.sub, got.Gross.D, got.PIT.D, got.Net.D, tt.gross, tt.pit, tt.check)
		}
	}
	js, _ := json.Marshal(must(GrossFromNet(&GrossFromNetRequest{Net: M("10000")})))
	if string(js) != `{"net":"10000","gross":"11111","pit":"1111"}` {
		t.Errorf("JSON %s", js)
	}
	js, _ = json.Marshal(must(GrossFromNet(&GrossFromNetRequest{Net: M("9999.99")})))
	if string(js) != `{"net":"9999.99","gross":"11110.99","pit":"1111"}` {
		t.Errorf("JSON %s", js)
	}
	for _, bad := range []*GrossFromNetRequest{{}, {Net: M("-1")}, {Net: M("10"), SubtypeIncome: sp("9.9")}, {Net: M("10.005")}} {
		if _, err := GrossFromNet(bad); err == nil || !strings.HasPrefix(err.Error(), "validation_failed") {
			t.Errorf("%+v: err %v", bad, err)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func fixturePddgi() *PddgiRequest {
	return &PddgiRequest{
		Company: PddgiCompany{Name: "Дизајнија ДООЕЛ", TaxID: sp("4030990123455"), MunicipalityCode: sp("179"), ContactPerson: sp("Марко Петровски")},
		Month:   5, Year: 2026,
		Records: []PddgiRecord{
			{SalaryGross: M("11111.00"), Employee: PddgiEmployee{EMBG: sp(testEMBG("150598541234")), FirstName: "Џемаил", LastName: "Шабани", BankAccount: sp(testAccount("3000000002118"))}},
			{SalaryGross: M("5000.50"), Employee: PddgiEmployee{EMBG: sp(testEMBG("020399045001")), FirstName: "Ana", LastName: "Gjorgjievska & Co"}},
		},
	}
}

func fixtureEppd() *EppdRequest {
	return &EppdRequest{
		Issuer:     EppdIssuer{EDB: "4030990123455", Name: "Дизајнија ДООЕЛ", BankAccount: sp(testAccount("3000000002118"))},
		PeriodFrom: "2026-05-01", PeriodTo: "2026-05-31", Comment: sp("Договор за дело бр. 12/2026"),
		Rows: []EppdRow{
			{EMBG: testEMBG("150598541234"), FirstName: "Марко", LastName: "Петровски", GrossIncome: M("11111"), MunicipalityCode: sp("179")},
			{EMBG: testEMBG("020399045001"), FirstName: "Ѕвонко", LastName: "Ќосевски", GrossIncome: M("10695"), SubtypeIncome: sp("13.2")},
		},
	}
}

func TestPddgiGolden(t *testing.T) {
	x, err := Pddgi(fixturePddgi())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "pddgi.xml", x)
	xmllint(t, "pddgi.xml", "pddgi.xsd")
	bad := fixturePddgi()
	bad.Records[1].Employee.EMBG = sp("1")
	if _, err := Pddgi(bad); err == nil || !strings.Contains(err.Error(), "records[1].employee.embg") {
		t.Errorf("bad ЕМБГ: %v", err)
	}
	bad = fixturePddgi()
	bad.Company.TaxID = sp("4030990123456") // wrong check digit
	if _, err := Pddgi(bad); err == nil || !strings.Contains(err.Error(), "company.taxId") {
		t.Errorf("bad ЕДБ: %v", err)
	}
	// embg may be null (spec, ПДД-ГИ request).
	// It is written empty, and the file still passes its schema.
	ok := fixturePddgi()
	ok.Records[1].Employee.EMBG = nil
	if x, err := Pddgi(ok); err != nil {
		t.Errorf("null ЕМБГ: %v", err)
	} else {
		golden(t, "pddgi-no-embg.xml", x)
		xmllint(t, "pddgi-no-embg.xml", "pddgi.xsd")
	}
	ok.Records[1].SalaryGross = M("1.005")
	if _, err := Pddgi(ok); err == nil || !strings.Contains(err.Error(), "records[1].salaryGross") {
		t.Errorf("three decimals: %v", err)
	}
}

func TestEppdGolden(t *testing.T) {
	x, err := Eppd(fixtureEppd())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "eppd.xml", x)
	xmllint(t, "eppd.xml", "eppd.xsd")
	bad := fixtureEppd()
	bad.Rows[0].SubtypeIncome, bad.PeriodTo = sp("99"), "2026-04-01"
	if _, err := Eppd(bad); err == nil || !strings.Contains(err.Error(), "rows[0].subtypeIncome") || !strings.Contains(err.Error(), "periodTo") {
		t.Errorf("bad request: %v", err)
	}
	bad = fixtureEppd()
	bad.Issuer.EDB = "4030990123456" // wrong check digit
	if _, err := Eppd(bad); err == nil || !strings.Contains(err.Error(), "issuer.edb") {
		t.Errorf("bad ЕДБ: %v", err)
	}
}

func FuzzPIT(f *testing.F) {
	f.Add([]byte(`{"company":{"name":"X","taxId":"4030990123455"},"month":5,"year":2026,"records":[{"salaryGross":"1","employee":{"embg":"1505985412349","firstName":"a","lastName":"b"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var p PddgiRequest
		if json.Unmarshal(data, &p) == nil {
			_, _ = Pddgi(&p)
		}
		var e EppdRequest
		if json.Unmarshal(data, &e) == nil {
			_, _ = Eppd(&e)
		}
		var g GrossFromNetRequest
		if json.Unmarshal(data, &g) == nil {
			_, _ = GrossFromNet(&g)
		}
	})
}
