package filing

import "github.com/shopspring/decimal"

// The amount checks in exact integer arithmetic. A batch of thousands of
// records spends most of its validation time allocating big.Int values in
// decimal arithmetic, and almost every record passes. amountsPass decides
// "no issue" with int64 cents and rates scaled by 10⁶ when every figure is
// exactly representable that way; whenever it cannot decide, or finds a
// difference, the decimal checks run and write the issue as before, so the
// messages and the outcome are the decimal path's.

const rateScale = 1_000_000

// scaled returns d × 10^places as an int64 when that is exact and small
// enough to multiply safely.
func scaled(d decimal.Decimal, places int32) (int64, bool) {
	exp := d.Exponent()
	if exp < -places || d.NumDigits() > 15 {
		return 0, false
	}
	c := d.CoefficientInt64()
	shift := exp + places // ≥ 0
	for range shift {
		c *= 10
		if c > 1e15 || c < -1e15 {
			return 0, false
		}
	}
	return c, true
}

// divRound divides by a positive divisor, rounding half away from zero as
// decimal.Round does.
func divRound(n, div int64) int64 {
	q, r := n/div, n%div
	if r < 0 {
		r = -r
	}
	if 2*r >= div {
		if n < 0 {
			q--
		} else {
			q++
		}
	}
	return q
}

func moneyCents(m Money) (int64, bool) {
	if !m.Set {
		return 0, true
	}
	return scaled(m.D, 2)
}

func absInt(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// amountsPass reports true only when the decimal checks of amounts would
// report nothing for r.
func amountsPass(r *Record, rates Rates) bool {
	gross, ok := scaled(r.SalaryGross.D, 2)
	if !ok {
		return false
	}
	minBase, ok1 := scaled(rates.MinBase, 2)
	maxBase, ok2 := scaled(rates.MaxBase, 2)
	allowance, ok3 := scaled(rates.Allowance, 2)
	if !ok1 || !ok2 || !ok3 {
		return false
	}
	base := gross
	if minBase > 0 && base < minBase && base > 0 {
		base = minBase
	}
	if maxBase > 0 && base > maxBase {
		base = maxBase
	}
	const tol = 100 // one denar in cents
	var contrib int64
	for _, k := range []struct {
		m    Money
		rate decimal.Decimal
	}{{r.Pension, rates.Pension}, {r.Health, rates.Health}, {r.AdditionalHealth, rates.Injury}, {r.EmploymentContrib, rates.Employment}} {
		rate, ok := scaled(k.rate, 6)
		if !ok {
			return false
		}
		got, ok := moneyCents(k.m)
		if !ok {
			return false
		}
		if k.m.Set && absInt(got-divRound(base*rate, rateScale)) > tol {
			return false
		}
		contrib += got
	}
	if r.PersonalAllowance.Set {
		if allowance, ok = scaled(r.PersonalAllowance.D, 2); !ok {
			return false
		}
	}
	taxBase := max(gross-contrib-allowance, 0)
	pit := divRound(taxBase*10, 100)
	gotPIT, ok := moneyCents(r.PIT)
	if !ok {
		return false
	}
	if r.PIT.Set && absInt(gotPIT-pit) > tol {
		return false
	}
	net, ok := moneyCents(r.SalaryNet)
	if !ok {
		return false
	}
	return !r.SalaryNet.Set || absInt(net-(gross-contrib-gotPIT)) <= tol
}

// amountsCents is the fifteen amounts of an employee (МПИН 3.12–3.26, in
// whole denars) computed in int64 cents; ok is false when a figure is not
// exact in cents, and the caller computes them in decimals instead.
func amountsCents(r *Record, allowance decimal.Decimal, variant string) (out [15]int64, ok bool) {
	var c [15]int64
	all := true
	get := func(m Money) int64 {
		v, good := moneyCents(m)
		all = all && good
		return v
	}
	gross, pension, health, addHealth, employment := get(r.SalaryGross), get(r.Pension), get(r.Health), get(r.AdditionalHealth), get(r.EmploymentContrib)
	allow, good := scaled(allowance, 2)
	all = all && good
	if r.PersonalAllowance.Set {
		allow = get(r.PersonalAllowance)
	}
	if left := gross - pension - health - addHealth - employment; left < allow {
		allow = max(left, 0)
	}
	netPaid := get(r.SalaryNet)
	if r.NetPaid.Set {
		netPaid = get(r.NetPaid)
	}
	if variant == VariantNoPaymentDeclared {
		netPaid = 0
	}
	c = [15]int64{gross, pension, get(r.PensionTopUp), health, get(r.HealthTopUp), addHealth, get(r.DisabilityTopUp),
		employment, get(r.EmploymentTopUp), 0, 0, get(r.PIT), get(r.SalaryNet), netPaid, allow}
	if !all {
		return out, false
	}
	for k, v := range c {
		out[k] = divRound(v, 100)
	}
	return out, true
}

// regularAmount is the pay of regular hours: gross less every special pay,
// in whole denars.
func regularAmount(r *Record) int64 {
	ms := []Money{r.SalaryGross, r.OvertimePay, r.NightPay, r.HolidayPay, r.SundayPay, r.SickFundPay, r.SickCompanyPay}
	var sum int64
	for k, m := range ms {
		v, ok := moneyCents(m)
		if !ok {
			regular := dec(r.SalaryGross).Sub(dec(r.OvertimePay)).Sub(dec(r.NightPay)).Sub(dec(r.HolidayPay)).
				Sub(dec(r.SundayPay)).Sub(dec(r.SickFundPay)).Sub(dec(r.SickCompanyPay))
			return whole(regular)
		}
		if k == 0 {
			sum = v
		} else {
			sum -= v
		}
	}
	return divRound(sum, 100)
}
