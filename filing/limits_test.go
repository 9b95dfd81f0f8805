package filing

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/denar-mk/denar"
)

// fieldMessage is the message of err's field error at path, if any.
func fieldMessage(err error, path string) (string, bool) {
	var de *denar.Error
	if !errors.As(err, &de) || de.Code != denar.ECodeValidation {
		return "", false
	}
	for _, f := range de.Fields {
		if f.Path == path {
			return f.Message, true
		}
	}
	return "", false
}

const (
	overCap  = "exceeds 1,000,000,000 denars"
	underCap = "is below -1,000,000,000 denars"
)

// TestMoneyCapOnDecode: every money field of the file requests is refused
// above 1,000,000,000 denars (docs/payroll.md, "Limits"), at its own path
// and in the words of the calculations; the cap itself is accepted.
func TestMoneyCapOnDecode(t *testing.T) {
	t.Parallel()
	mpin := func(field, v string) string {
		return `{"company":{"name":"x"},"batch":{"periodMonth":10,"periodYear":2026},"records":[{"` + field + `":"` + v + `"}]}`
	}
	combined := func(field, v string) string {
		return `{"company":{"name":"x"},"batch":{"periodMonth":10,"periodYear":2026},"batches":[{"records":[]},{"records":[{"` + field + `":"` + v + `"}]}]}`
	}
	pddgi := func(v string) string {
		return `{"company":{"name":"Д","taxId":"4030990123455"},"month":10,"year":2026,"records":[{"salaryGross":"` + v +
			`","employee":{"embg":"1505985412349","firstName":"Ана","lastName":"Ангеловска"}}]}`
	}
	eppd := func(v string) string {
		return `{"issuer":{"edb":"4030990123455","name":"Д"},"periodFrom":"2026-10-01","periodTo":"2026-10-31","rows":[{"embg":"1505985412349","firstName":"Ана","lastName":"Ангеловска","grossIncome":"` + v + `"}]}`
	}
	decodeMpin := func(body string) error {
		_, err := DecodeMpin([]byte(body))
		_, errFrom := DecodeMpinFrom(strings.NewReader(body))
		if (err == nil) != (errFrom == nil) {
			return errors.New("DecodeMpin and DecodeMpinFrom disagree")
		}
		return errFrom
	}
	decodeCombined := func(body string) error {
		_, err := DecodeCombinedFrom(strings.NewReader(body))
		return err
	}
	genPddgi := func(body string) error {
		var r PddgiRequest
		if err := DecodeJSON([]byte(body), &r); err != nil {
			return err
		}
		_, err := Pddgi(&r)
		return err
	}
	genEppd := func(body string) error {
		var r EppdRequest
		if err := DecodeJSON([]byte(body), &r); err != nil {
			return err
		}
		_, err := Eppd(&r)
		return err
	}
	grossFromNet := func(body string) error {
		var r GrossFromNetRequest
		if err := DecodeJSON([]byte(body), &r); err != nil {
			return err
		}
		_, err := GrossFromNet(&r)
		return err
	}
	for _, tt := range []struct {
		name string
		run  func(string) error
		body string
		path string
		want string // "" when the field must be accepted
	}{
		{"mpin gross 10^25", decodeMpin, mpin("salaryGross", "9999999999999999999999999"), "records[0].salaryGross", overCap},
		{"mpin gross a cent over", decodeMpin, mpin("salaryGross", "1000000000.01"), "records[0].salaryGross", overCap},
		{"mpin gross at the cap", decodeMpin, mpin("salaryGross", "1000000000"), "records[0].salaryGross", ""},
		{"mpin correction at the cap", decodeMpin, mpin("salaryGross", "-1000000000"), "records[0].salaryGross", ""},
		{"mpin correction under the cap", decodeMpin, mpin("pension", "-1000000000.5"), "records[0].pension", underCap},
		{"mpin optional pay", decodeMpin, mpin("bonusAmount", "1000000001"), "records[0].bonusAmount", overCap},
		{"mpin net paid", decodeMpin, mpin("netPaid", "99999999999999999999"), "records[0].netPaid", overCap},
		{"mpin maternity base", decodeMpin, mpin("maternityBase", "1000000001"), "records[0].maternityBase", overCap},
		{"combined", decodeCombined, combined("salaryNet", "1000000001"), "batches[1].records[0].salaryNet", overCap},
		{"pddgi 10^20", genPddgi, pddgi("99999999999999999999"), "records[0].salaryGross", overCap},
		{"pddgi at the cap", genPddgi, pddgi("1000000000.00"), "records[0].salaryGross", ""},
		{"eppd 40 digits", genEppd, eppd(strings.Repeat("9", 40)), "rows[0].grossIncome", overCap},
		{"eppd a cent over", genEppd, eppd("1000000000.01"), "rows[0].grossIncome", overCap},
		{"eppd at the cap", genEppd, eppd("1000000000"), "rows[0].grossIncome", ""},
		{"gross-from-net", grossFromNet, `{"net":"1000000000.01"}`, "net", overCap},
		{"gross-from-net at the cap", grossFromNet, `{"net":"1000000000"}`, "net", ""},
	} {
		err := tt.run(tt.body)
		msg, ok := fieldMessage(err, tt.path)
		switch {
		case tt.want == "" && ok:
			t.Errorf("%s: refused at %s: %s", tt.name, tt.path, msg)
		case tt.want != "" && msg != tt.want:
			t.Errorf("%s: %v; want %q at %s", tt.name, err, tt.want, tt.path)
		}
	}
}

// TestGeneratorsRefuseOverCap: a request built in Go, not decoded, is held
// to the same cap by every generator, force or not: a file never holds a
// figure other than the one given (no clamp to the int64 range).
func TestGeneratorsRefuseOverCap(t *testing.T) {
	t.Parallel()
	huge := M("9999999999999999999999999")
	mpin := func() *MpinRequest {
		req := fixtureRegular()
		req.Force = true
		req.Records[1].SalaryGross = huge
		return req
	}
	for _, tt := range []struct {
		name string
		run  func() ([]byte, error)
		path string
	}{
		{"xml", func() ([]byte, error) { return MpinXML(mpin(), stat2026{}) }, "records[1].salaryGross"},
		{"txt", func() ([]byte, error) { return MpinTXT(mpin(), stat2026{}) }, "records[1].salaryGross"},
		{"xml hours", func() ([]byte, error) {
			req := mpin()
			req.Records[1].SalaryGross = M("1")
			req.Records[0].OvertimeHours = N("99999999999999999999999")
			return MpinXML(req, stat2026{})
		}, "records[0].overtimeHours"},
		{"combined", func() ([]byte, error) {
			reg := fixtureRegular()
			cor := fixtureCorrection()
			cor.Records[0].PIT = huge
			return CombinedTXT(&CombinedRequest{Company: reg.Company, Batch: reg.Batch, Force: true,
				Batches: []BatchRecords{{reg.Records}, {cor.Records}}}, stat2026{})
		}, "batches[1].records[0].pit"},
		{"pddgi", func() ([]byte, error) {
			return Pddgi(&PddgiRequest{Company: PddgiCompany{Name: "Д", TaxID: sp("4030990123455")}, Month: 10, Year: 2026,
				Records: []PddgiRecord{{SalaryGross: huge, Employee: PddgiEmployee{FirstName: "Ана", LastName: "Ангеловска"}}}})
		}, "records[0].salaryGross"},
		{"eppd", func() ([]byte, error) {
			return Eppd(&EppdRequest{Issuer: EppdIssuer{EDB: "4030990123455", Name: "Д"}, PeriodFrom: "2026-10-01", PeriodTo: "2026-10-31",
				Rows: []EppdRow{{EMBG: "1505985412349", FirstName: "Ана", LastName: "Ангеловска", GrossIncome: huge}}})
		}, "rows[0].grossIncome"},
	} {
		b, err := tt.run()
		if _, ok := fieldMessage(err, tt.path); !ok || b != nil {
			t.Errorf("%s: %v (%d bytes); want a validation error at %s", tt.name, err, len(b), tt.path)
		}
		if bytes.Contains(b, []byte("9223372036854775807")) {
			t.Errorf("%s: the file holds a clamped figure", tt.name)
		}
	}
}

// TestTXTTotalTooWide: records each within the cap whose total does not fit
// the TXT's 12-character field are a 422 at the request's records naming
// the total, not a clamp or an internal error; the XML (xs:long) holds it.
func TestTXTTotalTooWide(t *testing.T) {
	t.Parallel()
	req := &MpinRequest{Company: fixtureCompany(), Batch: Batch{PeriodMonth: 10, PeriodYear: 2026}, Force: true}
	for range 1000 {
		req.Records = append(req.Records, Record{SalaryGross: M("1000000000"), Employee: Employee{FirstName: "Ана", LastName: "Ангеловска"}})
	}
	const want = "the total of salaryGross over the records (BrutoIznosVk) is 1000000000000, too large for the TXT field of 12 characters (at most 999999999999)"
	_, err := MpinTXT(req, stat2026{})
	if msg, _ := fieldMessage(err, "records"); msg != want {
		t.Errorf("txt: %v; want %q at records", err, want)
	}
	_, err = CombinedTXT(&CombinedRequest{Company: req.Company, Batch: req.Batch, Force: true,
		Batches: []BatchRecords{{req.Records[:500]}, {req.Records[500:]}}}, stat2026{})
	if msg, _ := fieldMessage(err, "batches"); msg != want {
		t.Errorf("combined: %v; want %q at batches", err, want)
	}
	x, err := MpinXML(req, stat2026{})
	if err != nil || !bytes.Contains(x, []byte("<BrutoIznosVk>1000000000000</BrutoIznosVk>")) {
		t.Errorf("xml: %v", err)
	}
}

// TestTXTRecordTooWide: a record's figure too wide for its TXT field is a
// 422 at that record (at batches for a combined file, whose records are
// reordered), naming the field and the employee of the file.
func TestTXTRecordTooWide(t *testing.T) {
	t.Parallel()
	req := fixtureRegular()
	req.Force = true
	req.Records[2].WorkingHours = N("20000")
	const want = "RabotniCasoviVkVrab of employee 3 of the file is 19888, too large for the TXT field of 4 characters (at most 9999)"
	_, err := MpinTXT(req, stat2026{})
	if msg, _ := fieldMessage(err, "records[2]"); msg != want {
		t.Errorf("txt: %v; want %q at records[2]", err, want)
	}
	_, err = CombinedTXT(&CombinedRequest{Company: req.Company, Batch: req.Batch, Force: true,
		Batches: []BatchRecords{{req.Records}}}, stat2026{})
	if msg, _ := fieldMessage(err, "batches"); !strings.HasPrefix(msg, "RabotniCasoviVkVrab of employee ") {
		t.Errorf("combined: %v; want the record's field at batches", err)
	}
}
