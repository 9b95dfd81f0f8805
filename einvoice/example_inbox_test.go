package einvoice_test

import (
	"fmt"
	"time"

	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
)

// The buyer's deadline for an invoice whose transaction was on the last day
// of the year, and the days left on 5 January in Skopje.
func ExampleDecideBy() {
	tx := time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC)
	by := einvoice.DecideBy(tx)
	now := time.Date(2027, 1, 5, 9, 0, 0, 0, ujpdoc.Skopje)
	fmt.Println(by.Format(time.DateOnly), einvoice.DaysLeft(now, by), einvoice.DeadlineEnd(by).Format(time.RFC3339))
	if days, ok := einvoice.ReminderDue(einvoice.DaysLeft(now, by)); ok {
		fmt.Println("reminder of", days, "days")
	}
	// Output:
	// 2027-01-10 5 2027-01-11T00:00:00+01:00
	// reminder of 5 days
}
