package filing

import (
	"strings"
	"time"

	"github.com/denar-mk/denar/money"
)

// Rates are the statutory figures the checks compare records against, as
// fractions (0.188 for 18.8 %) and the monthly personal allowance in denars.
type Rates struct {
	Pension    money.Amount // ПИО, МПИН 3.15
	Health     money.Amount // ЗО, 3.40
	Injury     money.Amount // additional health / work injury, 3.42
	Employment money.Amount // unemployment, 3.44
	Allowance  money.Amount // лично ослободување per month
	// MaxBase is the maximum contribution base of a full month (16 times
	// the average salary); zero means "not applied". The checks prorate it
	// by paid hours, as the engine does. Contributions are taken on the
	// actual gross below the minimum base (the shortfall is a separate
	// top-up), so the minimum base is not needed.
	MaxBase money.Amount
	// Provisional are the keys of the figures in force that are carried
	// forward because the period's are not published yet (payroll's rate
	// keys: personalAllowance, maxBase, …); the checks say so in a warning.
	Provisional []string
}

// Statutory supplies the figures in force. The HTTP layer adapts the payroll
// engine's tables to it; filing does not import payroll so the two packages
// can change independently.
type Statutory interface {
	// On returns the rates and allowance in force on date.
	On(date time.Time) (Rates, error)
}

// periodEnd is the last day of the filing period: the date whose rates the
// checks use (R6).
func periodEnd(year, month int) time.Time {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC)
}

func daysIn(year, month int) int { return periodEnd(year, month).Day() }

func parseDate(s string) (time.Time, error) {
	return time.Parse("2006-01-02", strings.TrimSpace(s))
}
