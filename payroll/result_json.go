package payroll

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/denar-mk/denar/money"
)

// MarshalJSON writes the result without reflection: a 500-input batch
// spends most of its time encoding results otherwise. The field order is
// that of the struct; TestResultJSON checks it against encoding/json.
func (r *Result) MarshalJSON() ([]byte, error) {
	return r.AppendJSON(make([]byte, 0, 2560)), nil
}

// AppendJSON appends the result's JSON object to b.
func (r *Result) AppendJSON(b []byte) []byte {
	b = append(b, `{"salaryGross":`...)
	b = appendMoney(b, r.SalaryGross)
	b = append(b, `,"baseGross":`...)
	b = appendMoney(b, r.BaseGross)
	b = append(b, `,"pension":`...)
	b = appendMoney(b, r.Pension)
	b = append(b, `,"health":`...)
	b = appendMoney(b, r.Health)
	b = append(b, `,"employmentContrib":`...)
	b = appendMoney(b, r.EmploymentContrib)
	b = append(b, `,"additionalHealth":`...)
	b = appendMoney(b, r.AdditionalHealth)
	b = append(b, `,"totalContributions":`...)
	b = appendMoney(b, r.TotalContributions)
	b = append(b, `,"pensionTopUp":`...)
	b = appendMoney(b, r.PensionTopUp)
	b = append(b, `,"healthTopUp":`...)
	b = appendMoney(b, r.HealthTopUp)
	b = append(b, `,"disabilityTopUp":`...)
	b = appendMoney(b, r.DisabilityTopUp)
	b = append(b, `,"employmentTopUp":`...)
	b = appendMoney(b, r.EmploymentTopUp)
	b = append(b, `,"personalAllowance":`...)
	b = appendMoney(b, r.PersonalAllowance)
	b = append(b, `,"taxableIncome":`...)
	b = appendMoney(b, r.TaxableIncome)
	b = append(b, `,"pit":`...)
	b = appendMoney(b, r.PIT)
	b = append(b, `,"salaryNet":`...)
	b = appendMoney(b, r.SalaryNet)
	b = append(b, `,"deductionsTotal":`...)
	b = appendMoney(b, r.DeductionsTotal)
	b = append(b, `,"netPaid":`...)
	b = appendMoney(b, r.NetPaid)
	b = append(b, `,"seniority":`...)
	b = appendMoney(b, r.Seniority)
	b = append(b, `,"bonusAmount":`...)
	b = appendMoney(b, r.BonusAmount)
	b = append(b, `,"bonusBasis":`...)
	b = appendString(b, r.BonusBasis)
	b = append(b, `,"workingHours":`...)
	b = r.WorkingHours.appendTo(b)
	b = append(b, `,"seniorityPercentage":`...)
	b = r.SeniorityPercentage.appendTo(b)
	b = append(b, `,"unpaidHours":`...)
	b = r.UnpaidHours.appendTo(b)
	b = append(b, `,"absentHours":`...)
	b = r.AbsentHours.appendTo(b)
	b = append(b, `,"maternityHours":`...)
	b = r.MaternityHours.appendTo(b)
	b = append(b, `,"overtimeHours":`...)
	b = r.OvertimeHours.appendTo(b)
	b = append(b, `,"overtimePay":`...)
	b = appendMoney(b, r.OvertimePay)
	b = append(b, `,"nightHours":`...)
	b = r.NightHours.appendTo(b)
	b = append(b, `,"nightPay":`...)
	b = appendMoney(b, r.NightPay)
	b = append(b, `,"holidayHours":`...)
	b = r.HolidayHours.appendTo(b)
	b = append(b, `,"holidayPay":`...)
	b = appendMoney(b, r.HolidayPay)
	b = append(b, `,"sundayHours":`...)
	b = r.SundayHours.appendTo(b)
	b = append(b, `,"sundayPay":`...)
	b = appendMoney(b, r.SundayPay)
	b = append(b, `,"sickHours":`...)
	b = r.SickHours.appendTo(b)
	b = append(b, `,"sickRate":`...)
	b = r.SickRate.appendTo(b)
	b = append(b, `,"sickPay":`...)
	b = appendMoney(b, r.SickPay)
	b = append(b, `,"sickFundHours":`...)
	b = r.SickFundHours.appendTo(b)
	b = append(b, `,"sickFundRate":`...)
	b = r.SickFundRate.appendTo(b)
	b = append(b, `,"sickFundPay":`...)
	b = appendMoney(b, r.SickFundPay)
	b = append(b, `,"sickCompanyHours":`...)
	b = r.SickCompanyHours.appendTo(b)
	b = append(b, `,"sickCompanyRate":`...)
	b = r.SickCompanyRate.appendTo(b)
	b = append(b, `,"sickCompanyPay":`...)
	b = appendMoney(b, r.SickCompanyPay)
	b = append(b, `,"shift1Hours":`...)
	b = r.Shift1Hours.appendTo(b)
	b = append(b, `,"shift1Rate":`...)
	b = r.Shift1Rate.appendTo(b)
	b = append(b, `,"shift1Pay":`...)
	b = appendMoney(b, r.Shift1Pay)
	b = append(b, `,"shift2Hours":`...)
	b = r.Shift2Hours.appendTo(b)
	b = append(b, `,"shift2Rate":`...)
	b = r.Shift2Rate.appendTo(b)
	b = append(b, `,"shift2Pay":`...)
	b = appendMoney(b, r.Shift2Pay)
	b = append(b, `,"shift3Hours":`...)
	b = r.Shift3Hours.appendTo(b)
	b = append(b, `,"shift3Rate":`...)
	b = r.Shift3Rate.appendTo(b)
	b = append(b, `,"shift3Pay":`...)
	b = appendMoney(b, r.Shift3Pay)
	b = append(b, `,"specialHours":`...)
	b = r.SpecialHours.appendTo(b)
	b = append(b, `,"specialRate":`...)
	b = r.SpecialRate.appendTo(b)
	b = append(b, `,"specialPay":`...)
	b = appendMoney(b, r.SpecialPay)
	b = append(b, `,"holidayNightHours":`...)
	b = r.HolidayNightHours.appendTo(b)
	b = append(b, `,"holidayNightRate":`...)
	b = r.HolidayNightRate.appendTo(b)
	b = append(b, `,"holidayNightPay":`...)
	b = appendMoney(b, r.HolidayNightPay)
	b = append(b, `,"sundayNightHours":`...)
	b = r.SundayNightHours.appendTo(b)
	b = append(b, `,"sundayNightRate":`...)
	b = r.SundayNightRate.appendTo(b)
	b = append(b, `,"sundayNightPay":`...)
	b = appendMoney(b, r.SundayNightPay)
	b = append(b, `,"sundayHolidayHours":`...)
	b = r.SundayHolidayHours.appendTo(b)
	b = append(b, `,"sundayHolidayRate":`...)
	b = r.SundayHolidayRate.appendTo(b)
	b = append(b, `,"sundayHolidayPay":`...)
	b = appendMoney(b, r.SundayHolidayPay)
	b = append(b, `,"fundHours":`...)
	b = r.FundHours.appendTo(b)
	b = append(b, `,"hireDay":`...)
	b = appendIntPtr(b, r.HireDay)
	b = append(b, `,"leaveDay":`...)
	b = appendIntPtr(b, r.LeaveDay)
	b = append(b, `,"serviceDays":`...)
	b = appendIntPtr(b, r.ServiceDays)
	b = append(b, `,"insuranceCode":`...)
	b = appendString(b, r.InsuranceCode)
	b = append(b, `,"provisional":`...)
	b = strconv.AppendBool(b, r.Provisional)
	b = append(b, `,"provisionalFigures":`...)
	b = append(b, '[')
	for i, f := range r.ProvisionalFigures {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"key":`...)
		b = appendString(b, f.Key)
		b = append(b, `,"value":`...)
		b = appendString(b, f.Value)
		b = append(b, `,"carriedFrom":`...)
		b = appendString(b, f.CarriedFrom)
		b = append(b, `,"source":`...)
		b = appendString(b, f.Source)
		b = append(b, `,"reason":`...)
		b = appendString(b, f.Reason)
		b = append(b, '}')
	}
	b = append(b, ']')
	b = append(b, `,"warnings":`...)
	b = append(b, '[')
	for i, w := range r.Warnings {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"code":`...)
		b = appendString(b, w.Code)
		b = append(b, `,"path":`...)
		b = appendString(b, w.Path)
		b = append(b, `,"message":`...)
		b = appendString(b, w.Message)
		b = append(b, '}')
	}
	b = append(b, ']')
	if r.Explain != nil {
		b = append(b, `,"explain":`...)
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(r.Explain) // plain strings and slices: cannot fail
		b = append(b, bytes.TrimRight(buf.Bytes(), "\n")...)
	}
	return append(b, '}')
}

// appendMoney writes an amount as a JSON string in the money format.
func appendMoney(b []byte, a money.Amount) []byte {
	b = append(b, '"')
	b = a.AppendText(b)
	return append(b, '"')
}

// appendString writes s as a JSON string, escaped as encoding/json does
// (without HTML escaping, which a JSON API needs no more than a problem
// detail does).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			b = append(b, c)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

const hex = "0123456789abcdef"

func appendIntPtr(b []byte, p *int) []byte {
	if p == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, int64(*p), 10)
}
