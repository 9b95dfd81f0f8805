package payroll

import "strconv"

// MarshalJSON writes the result without reflection: a 500-input batch
// spends most of its time encoding results otherwise. The field order is
// that of the struct; TestResultJSON checks it against encoding/json.
func (r *Result) MarshalJSON() ([]byte, error) {
	return r.AppendJSON(make([]byte, 0, 2048)), nil
}

// AppendJSON appends the result's JSON object to b.
func (r *Result) AppendJSON(b []byte) []byte {
	b = append(b, `{"salaryGross":`...)
	b = strconv.AppendQuote(b, r.SalaryGross)
	b = append(b, `,"baseGross":`...)
	b = strconv.AppendQuote(b, r.BaseGross)
	b = append(b, `,"pension":`...)
	b = strconv.AppendQuote(b, r.Pension)
	b = append(b, `,"health":`...)
	b = strconv.AppendQuote(b, r.Health)
	b = append(b, `,"employmentContrib":`...)
	b = strconv.AppendQuote(b, r.EmploymentContrib)
	b = append(b, `,"additionalHealth":`...)
	b = strconv.AppendQuote(b, r.AdditionalHealth)
	b = append(b, `,"totalContributions":`...)
	b = strconv.AppendQuote(b, r.TotalContributions)
	b = append(b, `,"pensionTopUp":`...)
	b = strconv.AppendQuote(b, r.PensionTopUp)
	b = append(b, `,"healthTopUp":`...)
	b = strconv.AppendQuote(b, r.HealthTopUp)
	b = append(b, `,"disabilityTopUp":`...)
	b = strconv.AppendQuote(b, r.DisabilityTopUp)
	b = append(b, `,"employmentTopUp":`...)
	b = strconv.AppendQuote(b, r.EmploymentTopUp)
	b = append(b, `,"personalAllowance":`...)
	b = strconv.AppendQuote(b, r.PersonalAllowance)
	b = append(b, `,"taxableIncome":`...)
	b = strconv.AppendQuote(b, r.TaxableIncome)
	b = append(b, `,"pit":`...)
	b = strconv.AppendQuote(b, r.PIT)
	b = append(b, `,"salaryNet":`...)
	b = strconv.AppendQuote(b, r.SalaryNet)
	b = append(b, `,"deductionsTotal":`...)
	b = strconv.AppendQuote(b, r.DeductionsTotal)
	b = append(b, `,"netPaid":`...)
	b = strconv.AppendQuote(b, r.NetPaid)
	b = append(b, `,"seniority":`...)
	b = strconv.AppendQuote(b, r.Seniority)
	b = append(b, `,"bonusAmount":`...)
	b = strconv.AppendQuote(b, r.BonusAmount)
	b = append(b, `,"bonusBasis":`...)
	b = strconv.AppendQuote(b, r.BonusBasis)
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
	b = strconv.AppendQuote(b, r.OvertimePay)
	b = append(b, `,"nightHours":`...)
	b = r.NightHours.appendTo(b)
	b = append(b, `,"nightPay":`...)
	b = strconv.AppendQuote(b, r.NightPay)
	b = append(b, `,"holidayHours":`...)
	b = r.HolidayHours.appendTo(b)
	b = append(b, `,"holidayPay":`...)
	b = strconv.AppendQuote(b, r.HolidayPay)
	b = append(b, `,"sundayHours":`...)
	b = r.SundayHours.appendTo(b)
	b = append(b, `,"sundayPay":`...)
	b = strconv.AppendQuote(b, r.SundayPay)
	b = append(b, `,"sickHours":`...)
	b = r.SickHours.appendTo(b)
	b = append(b, `,"sickRate":`...)
	b = r.SickRate.appendTo(b)
	b = append(b, `,"sickPay":`...)
	b = strconv.AppendQuote(b, r.SickPay)
	b = append(b, `,"sickFundHours":`...)
	b = r.SickFundHours.appendTo(b)
	b = append(b, `,"sickFundRate":`...)
	b = r.SickFundRate.appendTo(b)
	b = append(b, `,"sickFundPay":`...)
	b = strconv.AppendQuote(b, r.SickFundPay)
	b = append(b, `,"sickCompanyHours":`...)
	b = r.SickCompanyHours.appendTo(b)
	b = append(b, `,"sickCompanyRate":`...)
	b = r.SickCompanyRate.appendTo(b)
	b = append(b, `,"sickCompanyPay":`...)
	b = strconv.AppendQuote(b, r.SickCompanyPay)
	b = append(b, `,"shift1Hours":`...)
	b = r.Shift1Hours.appendTo(b)
	b = append(b, `,"shift1Rate":`...)
	b = r.Shift1Rate.appendTo(b)
	b = append(b, `,"shift1Pay":`...)
	b = strconv.AppendQuote(b, r.Shift1Pay)
	b = append(b, `,"shift2Hours":`...)
	b = r.Shift2Hours.appendTo(b)
	b = append(b, `,"shift2Rate":`...)
	b = r.Shift2Rate.appendTo(b)
	b = append(b, `,"shift2Pay":`...)
	b = strconv.AppendQuote(b, r.Shift2Pay)
	b = append(b, `,"shift3Hours":`...)
	b = r.Shift3Hours.appendTo(b)
	b = append(b, `,"shift3Rate":`...)
	b = r.Shift3Rate.appendTo(b)
	b = append(b, `,"shift3Pay":`...)
	b = strconv.AppendQuote(b, r.Shift3Pay)
	b = append(b, `,"specialHours":`...)
	b = r.SpecialHours.appendTo(b)
	b = append(b, `,"specialRate":`...)
	b = r.SpecialRate.appendTo(b)
	b = append(b, `,"specialPay":`...)
	b = strconv.AppendQuote(b, r.SpecialPay)
	b = append(b, `,"holidayNightHours":`...)
	b = r.HolidayNightHours.appendTo(b)
	b = append(b, `,"holidayNightRate":`...)
	b = r.HolidayNightRate.appendTo(b)
	b = append(b, `,"holidayNightPay":`...)
	b = strconv.AppendQuote(b, r.HolidayNightPay)
	b = append(b, `,"sundayNightHours":`...)
	b = r.SundayNightHours.appendTo(b)
	b = append(b, `,"sundayNightRate":`...)
	b = r.SundayNightRate.appendTo(b)
	b = append(b, `,"sundayNightPay":`...)
	b = strconv.AppendQuote(b, r.SundayNightPay)
	b = append(b, `,"sundayHolidayHours":`...)
	b = r.SundayHolidayHours.appendTo(b)
	b = append(b, `,"sundayHolidayRate":`...)
	b = r.SundayHolidayRate.appendTo(b)
	b = append(b, `,"sundayHolidayPay":`...)
	b = strconv.AppendQuote(b, r.SundayHolidayPay)
	b = append(b, `,"fundHours":`...)
	b = r.FundHours.appendTo(b)
	b = append(b, `,"hireDay":`...)
	b = appendIntPtr(b, r.HireDay)
	b = append(b, `,"leaveDay":`...)
	b = appendIntPtr(b, r.LeaveDay)
	b = append(b, `,"serviceDays":`...)
	b = appendIntPtr(b, r.ServiceDays)
	b = append(b, `,"insuranceCode":`...)
	b = strconv.AppendQuote(b, r.InsuranceCode)
	b = append(b, `,"provisional":`...)
	b = strconv.AppendBool(b, r.Provisional)
	b = append(b, `,"provisionalFigures":[`...)
	for i, f := range r.ProvisionalFigures {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"key":`...)
		b = strconv.AppendQuote(b, f.Key)
		b = append(b, `,"value":`...)
		b = strconv.AppendQuote(b, f.Value)
		b = append(b, `,"carriedFrom":`...)
		b = strconv.AppendQuote(b, f.CarriedFrom)
		b = append(b, `,"source":`...)
		b = strconv.AppendQuote(b, f.Source)
		b = append(b, `,"reason":`...)
		b = strconv.AppendQuote(b, f.Reason)
		b = append(b, '}')
	}
	b = append(b, `],"warnings":[`...)
	for i, w := range r.Warnings {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"code":`...)
		b = strconv.AppendQuote(b, w.Code)
		b = append(b, `,"path":`...)
		b = strconv.AppendQuote(b, w.Path)
		b = append(b, `,"message":`...)
		b = strconv.AppendQuote(b, w.Message)
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	return b
}

func appendIntPtr(b []byte, p *int) []byte {
	if p == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, int64(*p), 10)
}

// appendTo writes the number as JSON without allocating.
func (n Number) appendTo(b []byte) []byte {
	v := n.v
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	b = strconv.AppendInt(b, v/numScale, 10)
	frac := v % numScale
	if frac == 0 {
		return b
	}
	var d [4]byte
	for i := 3; i >= 0; i-- {
		d[i] = byte('0' + frac%10)
		frac /= 10
	}
	end := 4
	for end > 0 && d[end-1] == '0' {
		end--
	}
	b = append(b, '.')
	return append(b, d[:end]...)
}
