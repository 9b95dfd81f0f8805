package filing

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestChecks is one row per check: a mutation of the valid May 2026 fixture
// and the issue it must produce.
func TestChecks(t *testing.T) {
	tests := []struct {
		name     string
		mutate   func(r *MpinRequest)
		severity string
		code     string
		field    string
		path     string
	}{
		{"payer ЕДБ length", func(r *MpinRequest) { r.Company.TaxID = sp("403099012345") }, SeverityError, CodeEDB, "2.1", "company.taxId"},
		{"payer ЕДБ missing", func(r *MpinRequest) { r.Company.TaxID = nil }, SeverityError, CodeEDB, "2.1", "company.taxId"},
		{"payer ЕДБ check digit", func(r *MpinRequest) { r.Company.TaxID = sp("4030990123456") }, SeverityError, CodeEDB, "2.1", "company.taxId"},
		{"client ЕДБ check digit", func(r *MpinRequest) { r.Records[0].ClientTaxID = sp("4030000000002") }, SeverityError, CodeEDB, "", "records[0].clientTaxId"},
		{"ЕМБГ check digit", func(r *MpinRequest) { r.Records[0].Employee.EMBG = sp("1505985412340") }, SeverityError, CodeEMBG, "3.1", "records[0].employee.embg"},
		{"ЕМБГ missing", func(r *MpinRequest) { r.Records[0].Employee.EMBG = nil }, SeverityError, CodeEMBG, "3.1", "records[0].employee.embg"},
		{"ЕМБГ date", func(r *MpinRequest) { r.Records[0].Employee.EMBG = sp("3102985412340") }, SeverityError, CodeEMBG, "3.1", "records[0].employee.embg"},
		{"duplicate ЕМБГ", func(r *MpinRequest) { r.Records[1].Employee.EMBG = r.Records[0].Employee.EMBG }, SeverityError, CodeEMBGDuplicate, "3.1", "records[1].employee.embg"},
		{"bank account", func(r *MpinRequest) { r.Records[0].Employee.BankAccount = sp("300000000211885") }, SeverityError, CodeBankAccount, "3.32", "records[0].employee.bankAccount"},
		{"employee municipality", func(r *MpinRequest) { r.Records[0].Employee.MunicipalityCode = sp("186") }, SeverityError, CodeMunicipality, "3.4ц", "records[0].employee.municipalityCode"},
		{"company municipality", func(r *MpinRequest) { r.Company.MunicipalityCode = sp("100") }, SeverityError, CodeMunicipality, "2.10", "company.municipalityCode"},
		{"employee ФЗОМ branch", func(r *MpinRequest) { r.Records[0].Employee.FzomBranch = sp("4090") }, SeverityError, CodeFzomBranch, "3.4б", "records[0].employee.fzomBranch"},
		{"ФЗОМ not derivable", func(r *MpinRequest) { r.Company.City = sp("Атлантида") }, SeverityWarning, CodeFzomUnknown, "3.4б", "company.fzomBranch"},
		{"area code not derivable", func(r *MpinRequest) { r.Company.City = sp("Атлантида") }, SeverityWarning, CodeAreaCodeUnknown, "2.3", "company.areaCode"},
		{"вид на обврска", func(r *MpinRequest) { r.Batch.VidObvrska = sp("104") }, SeverityError, CodeVidObvrska, "1.3", "batch.vidObvrska"},
		{"вид на обврзник unknown", func(r *MpinRequest) { r.Batch.VidObvrznik = sp("199") }, SeverityWarning, CodeVidObvrznik, "1.4", "batch.vidObvrznik"},
		{"вид на стаж", func(r *MpinRequest) { r.Records[0].InsuranceCode = sp("0051") }, SeverityError, CodeInsuranceCode, "3.17", "records[0].insuranceCode"},
		{"pension", func(r *MpinRequest) { r.Records[0].Pension = M("6700.00") }, SeverityError, CodePensionWrong, "3.15", "records[0].pension"},
		{"health", func(r *MpinRequest) { r.Records[0].Health = M("2600.00") }, SeverityError, CodeHealthWrong, "3.40", "records[0].health"},
		{"injury", func(r *MpinRequest) { r.Records[0].AdditionalHealth = M("100.00") }, SeverityError, CodeInjuryWrong, "3.42", "records[0].additionalHealth"},
		{"employment at July rates", func(r *MpinRequest) { r.Batch.PeriodMonth = 7 }, SeverityError, CodeEmploymentWrong, "3.44", "records[0].employmentContrib"},
		{"PIT", func(r *MpinRequest) { r.Records[0].PIT, r.Records[0].SalaryNet = M("1600.00"), M("24346.63") }, SeverityWarning, CodePITWrong, "3.46", "records[0].pit"},
		{"net", func(r *MpinRequest) { r.Records[0].SalaryNet = M("24500.00") }, SeverityError, CodeNetWrong, "3.13", "records[0].salaryNet"},
		{"record fund over the month's", func(r *MpinRequest) { r.Records[0].WorkingHours = N("169") }, SeverityError, CodeHoursWrong, "3.6", "records[0].workingHours"},
		{"kinds over the record's fund", func(r *MpinRequest) { r.Records[0].NightHours, r.Records[0].UnpaidHours = N("100"), N("80") }, SeverityError, CodeHoursWrong, "3.6", "records[0].workingHours"},
		{"full time far below the fund", func(r *MpinRequest) { r.Records[0].WorkingHours = N("100") }, SeverityWarning, CodeHoursWrong, "3.6", "records[0].workingHours"},
		// The fund is the batch's figure: 176 in May 2026 (168 by the
		// calendar) is a warning, never a block (issue 16, defect 1).
		{"batch fund off the calendar", func(r *MpinRequest) { r.Batch.WorkingHours = N("176") }, SeverityWarning, CodeHoursWrong, "3.6", "batch.workingHours"},
		{"batch fund defaulted off the calendar", func(r *MpinRequest) { r.Batch.WorkingHours = Num{} }, SeverityWarning, CodeHoursWrong, "3.6", "batch.workingHours"},
		{"net paid above net", func(r *MpinRequest) { r.Records[0].NetPaid = M("30000") }, SeverityError, CodeNetPaidAboveNet, "3.31", "records[0].netPaid"},
		{"no records", func(r *MpinRequest) { r.Records = nil }, SeverityError, CodeNoRecords, "1.5", "records"},
		{"unknown sick-fund code", func(r *MpinRequest) { r.Records[0].SickFundCode = sp("150") }, SeverityError, CodeSickFundCode, "3.23", "records[0].sickFundCode"},
		{"unknown exemption code", func(r *MpinRequest) { r.Records[0].ExemptionCode = sp("005") }, SeverityError, CodeExemptionCode, "3.17б", "records[0].exemptionCode"},
		{"exempt from employment contribution", func(r *MpinRequest) { r.Records[0].ExemptionCode = sp("001") }, SeverityError, CodeEmploymentWrong, "3.44", "records[0].employmentContrib"},
		{"pays above the gross", func(r *MpinRequest) { r.Records[0].NightHours, r.Records[0].NightPay = N("8"), M("50000") }, SeverityError, CodePaysAboveGross, "3.14", "records[0].salaryGross"},
		{"self-employed with PIT", func(r *MpinRequest) { r.Batch.VidObvrznik = sp("111") }, SeverityWarning, CodePITWrong, "3.46", "records[0].pit"},
		{"self-employed with net paid", func(r *MpinRequest) { r.Batch.VidObvrznik = sp("111"); r.Records[0].NetPaid = M("100") }, SeverityWarning, CodeSelfEmployed, "3.31", "records[0].netPaid"},
		{"hire day outside month", func(r *MpinRequest) { r.Records[0].HireDay = ip(32) }, SeverityError, CodeDayOutsideMonth, "3.27", "records[0].hireDay"},
		{"leave day outside month", func(r *MpinRequest) { r.Batch.PeriodMonth = 6; r.Records[0].LeaveDay = ip(31) }, SeverityError, CodeDayOutsideMonth, "3.28", "records[0].leaveDay"},
		{"leave before hire", func(r *MpinRequest) { r.Records[0].HireDay, r.Records[0].LeaveDay = ip(20), ip(10) }, SeverityError, CodeDaysWrong, "3.28", "records[0].leaveDay"},
		{"contract 2 without re-hire", func(r *MpinRequest) { r.Records[0].ContractNo = ip(2) }, SeverityError, CodeContractNo, "3.30", "records[0].contractNo"},
		{"re-hire without leave", func(r *MpinRequest) { r.Records[2].LeaveDay = nil }, SeverityError, CodeContractNo, "3.30", "records[3].contractNo"},
		{"name not transliterable", func(r *MpinRequest) { r.Records[0].Employee.LastNameCyr = nil; r.Records[0].Employee.LastName = "Wyx" }, SeverityError, CodeNameCyrillic, "3.2", "records[0].employee.lastNameCyr"},
		{"Cyrillic field in Latin", func(r *MpinRequest) { r.Records[0].Employee.FirstNameCyr = sp("Marko") }, SeverityError, CodeNameCyrillic, "3.3", "records[0].employee.firstNameCyr"},
		{"name transliterated", func(r *MpinRequest) {}, SeverityWarning, CodeNameTransliterated, "3.2", "records[1].employee.lastNameCyr"},
		{"no statutory figures", func(r *MpinRequest) { r.Batch.PeriodYear = 2030 }, SeverityError, CodeRatesUnavailable, "1.2", "batch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := fixtureRegular()
			tt.mutate(req)
			res := Validate(req, stat2026{})
			found := false
			for _, is := range res.Issues {
				if is.Code == tt.code && is.Path == tt.path {
					found = true
					if is.Severity != tt.severity || is.Field != tt.field || is.Message == "" {
						t.Errorf("issue %+v, want severity %s field %s", is, tt.severity, tt.field)
					}
				}
			}
			if !found {
				t.Fatalf("no %s issue at %s; got %+v", tt.code, tt.path, res.Issues)
			}
			if (tt.severity == SeverityError) == res.OK {
				t.Errorf("ok = %v with a %s", res.OK, tt.severity)
			}
		})
	}
}

func TestDecodeMpin(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		paths []string
	}{
		{"valid", `{"company":{"name":"X"},"batch":{"periodMonth":5,"periodYear":2026,"workingHours":167.5},"records":[{"salaryGross":"1.00","salaryNet":"1","pension":"0","health":"0","additionalHealth":"0","employmentContrib":"0","pit":"0","employee":{"firstName":"А","lastName":"Б"},"overtimeHours":7.1}]}`, nil},
		{"money as number", `{"company":{"name":"X"},"batch":{"periodMonth":5,"periodYear":2026},"records":[{},{"salaryGross":36037,"salaryNet":"1","pension":"0","health":"0","additionalHealth":"0","employmentContrib":"0","pit":"0","employee":{"firstName":"А","lastName":"Б"}}]}`,
			[]string{"records[0].salaryGross", "records[0].employee.firstName", "records[1].salaryGross"}},
		{"hours as string", `{"company":{"name":""},"batch":{"periodMonth":13,"periodYear":2026,"workingHours":"176"},"records":[]}`,
			[]string{"company.name", "batch.periodMonth", "batch.workingHours"}},
		{"bad variant", `{"company":{"name":"X"},"batch":{"periodMonth":1,"periodYear":2026,"filingVariant":"x"},"records":[]}`, []string{"batch.filingVariant"}},
		{"syntax", `{"company":`, []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := DecodeMpin([]byte(tt.body))
			if tt.paths == nil {
				if err != nil {
					t.Fatal(err)
				}
				if got := req.Records[0].OvertimeHours.D.String(); got != "7.1" {
					t.Errorf("hours parsed as %s, want exactly 7.1", got)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "validation_failed") {
				t.Errorf("error %q is not validation_failed", msg)
			}
			for _, p := range tt.paths {
				if !strings.Contains(msg, p) {
					t.Errorf("error %q does not name %s", msg, p)
				}
			}
		})
	}
}

// FuzzGenerators feeds arbitrary JSON through decode, validate and every МПИН
// generator (forced, so the generators run on records that fail the checks,
// and on figures decoding refused): nothing may panic, a generator may only
// fail with a validation error, and no figure is clamped to the int64 range.
func FuzzGenerators(f *testing.F) {
	js, _ := json.Marshal(fixtureRegular())
	f.Add(js)
	cj, _ := json.Marshal(CombinedRequest{Batches: []BatchRecords{{fixtureRegular().Records}}})
	f.Add(cj)
	f.Add([]byte(`{"batch":{"periodMonth":2,"periodYear":2026},"records":[{"hireDay":-5,"leaveDay":99,"contractNo":-1,"workingHours":1e30,"salaryGross":"-99999999999999999"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := DecodeMpin(data)
		if req == nil {
			return
		}
		_ = err
		Validate(req, stat2026{})
		req.Force = true
		if x, err := MpinXML(req, stat2026{}); err != nil && !strings.HasPrefix(err.Error(), "validation_failed") {
			t.Fatalf("xml: %v", err)
		} else if bytes.Contains(x, []byte("922337203685477580")) {
			t.Fatalf("xml holds a figure clamped to the int64 range")
		}
		if b, err := MpinTXT(req, stat2026{}); err == nil {
			if _, derr := decodeTXT(b); derr != nil {
				t.Fatalf("txt does not decode: %v", derr)
			}
		} else if !strings.HasPrefix(err.Error(), "validation_failed") {
			t.Fatalf("txt: %v", err)
		}
		c := &CombinedRequest{Company: req.Company, Batch: req.Batch, Batches: []BatchRecords{{req.Records}, {req.Records}}, Force: true}
		if _, err := CombinedTXT(c, stat2026{}); err != nil && !strings.HasPrefix(err.Error(), "validation_failed") {
			t.Fatalf("combined: %v", err)
		}
	})
}

// FuzzTXTDecoder: the decoder never panics, and whatever it accepts encodes
// back to the same bytes.
func FuzzTXTDecoder(f *testing.F) {
	b, _ := MpinTXT(fixtureRegular(), stat2026{})
	f.Add(b)
	f.Add([]byte{0xFF, 0xFE})
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := decodeTXT(data)
		if err != nil {
			return
		}
		again, err := encodeTXT(d)
		if err != nil {
			return // a decoded number can be wider than the encoder allows (e.g. "+1")
		}
		d2, err := decodeTXT(again)
		if err != nil {
			t.Fatalf("re-encoded file does not decode: %v", err)
		}
		if again2, _ := encodeTXT(d2); string(again2) != string(again) {
			t.Fatal("encode/decode is not stable")
		}
	})
}

// TestZeroMeansAbsent: a calculation result always carries every hour
// field; zero hours (maternityHours: 0 in a result) are no hours, never an
// error, and file no row (issue 16, defect 3).
func TestZeroMeansAbsent(t *testing.T) {
	req := fixtureRegular()
	for i := range req.Records {
		r := &req.Records[i]
		for _, n := range []*Num{&r.MaternityHours, &r.MaternityPartialHours, &r.SickFundHours, &r.NightHours, &r.UnpaidHours, &r.AbsentHours} {
			if !n.Set {
				*n = N("0")
			}
		}
		for _, m := range []*Money{&r.NightPay, &r.SickFundPay, &r.Seniority, &r.BonusAmount} {
			if !m.Set {
				*m = M("0")
			}
		}
	}
	res := Validate(req, stat2026{})
	if !res.OK {
		t.Fatalf("zero hours block: %+v", res.Issues)
	}
	a, err := MpinXML(req, stat2026{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := MpinXML(fixtureRegular(), stat2026{})
	if !bytes.Equal(a, b) {
		t.Error("zero hours and pays change the file")
	}
}

// TestPartialMonthCap: the engine prorates the 16× maximum base by paid
// hours (research §2.1) and the checks do the same (issue 16, defect 4).
// May 2026, fund 168, 84 hours absent, gross 700,000: the cap is
// 1,106,256 × 84/168 = 553,128, so pension 103,988.06, health 41,484.60,
// injury 2,765.64, employment 6,637.54 (total 154,875.84); the allowance
// 10,932 × ½ = 5,466; PIT 10 % × (700,000 − 154,875.84 − 5,466) =
// 53,965.82; net 491,158.34. On the full cap these figures were blocked
// with 16/90/91/94.
func TestPartialMonthCap(t *testing.T) {
	req := fixtureRegular()
	r := &req.Records[0]
	*r = Record{Employee: r.Employee, SalaryGross: M("700000"), Pension: M("103988"), Health: M("41485"),
		AdditionalHealth: M("2766"), EmploymentContrib: M("6638"), PIT: M("53966"), SalaryNet: M("491158"),
		PersonalAllowance: M("5466"), AbsentHours: N("84"), LeaveDay: ip(14)}
	res := Validate(req, stat2026{})
	for _, is := range res.Issues {
		if strings.HasPrefix(is.Path, "records[0]") {
			t.Errorf("the engine's partial-month figures are refused: %+v", is)
		}
	}
	// Without the absent hours the full cap applies and the same
	// contributions are wrong.
	r.AbsentHours, r.LeaveDay = Num{}, nil
	res = Validate(req, stat2026{})
	codes := map[string]bool{}
	for _, is := range res.Issues {
		if strings.HasPrefix(is.Path, "records[0]") {
			codes[is.Code] = true
		}
	}
	if !codes[CodePensionWrong] || !codes[CodeHealthWrong] {
		t.Errorf("full-month record with partial-month contributions passes: %v", res.Issues)
	}
}

// carried is stat2026 with its figures marked carried forward, as the
// service's tables mark a year not published yet.
type carried struct{ stat2026 }

func (c carried) On(d time.Time) (Rates, error) {
	r, err := c.stat2026.On(d)
	r.Provisional = []string{"maxBase", "personalAllowance"}
	return r, err
}

// TestChecksSayProvisional: checks run on carried-forward figures say so
// in a warning, and the filing is not blocked by it.
func TestChecksSayProvisional(t *testing.T) {
	t.Parallel()
	res := Validate(fixtureRegular(), carried{})
	var warned []Issue
	for _, is := range res.Issues {
		if is.Code == CodeProvisional {
			warned = append(warned, is)
		}
	}
	if len(warned) != 1 || warned[0].Severity != SeverityWarning || warned[0].Path != "batch" ||
		!strings.Contains(warned[0].Message, "maxBase, personalAllowance") || !res.OK {
		t.Errorf("issues %+v (ok %v), want one provisional_figure warning naming the figures", res.Issues, res.OK)
	}
	for _, is := range Validate(fixtureRegular(), stat2026{}).Issues {
		if is.Code == CodeProvisional {
			t.Errorf("published figures: %+v", is)
		}
	}
}

// TestMissingEMBG: a record without an ЕМБГ is told it is required, not
// that it has the wrong length.
func TestMissingEMBG(t *testing.T) {
	t.Parallel()
	req := fixtureRegular()
	req.Records[0].Employee.EMBG = nil
	for _, is := range Validate(req, stat2026{}).Issues {
		if is.Path == "records[0].employee.embg" {
			if !strings.HasPrefix(is.Message, "is required") {
				t.Errorf("message %q", is.Message)
			}
			return
		}
	}
	t.Error("no issue at records[0].employee.embg")
}
