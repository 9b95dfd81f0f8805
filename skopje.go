package denar

import (
	"time"
	_ "time/tzdata" // Europe/Skopje must resolve, with its summer time, on hosts without a tz database
)

// Skopje is North Macedonia's time zone: the one location of every
// package that works in Skopje's time (a payroll's "today", UJP's
// timestamps and dates, deadlines, pages shown to people). The tz database
// is embedded, so loading it cannot fail at run time.
var Skopje = mustLoad("Europe/Skopje")

func mustLoad(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic("denar: the embedded tz database has no " + name + ": " + err.Error())
	}
	return loc
}
