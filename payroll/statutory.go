package payroll

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/denar-mk/denar/money"
)

// Rate keys. One set serves rateOverrides, GET /v1/rates and
// GET /v1/rates/history. Percent keys hold percentages ("18.8"); money keys
// hold denars.
const (
	KeyPension           = "pension"           // ПИО, % of the contribution base
	KeyHealth            = "health"            // здравствено, %
	KeyAdditionalHealth  = "additionalHealth"  // повреда на работа и професионална болест, %
	KeyEmployment        = "employment"        // вработување, %
	KeyPIT               = "pit"               // personal income tax, % of the tax base
	KeyPersonalAllowance = "personalAllowance" // monthly личното ослободување, denars
	KeyAverageSalary     = "averageSalary"     // published average monthly salary, denars
	KeyMinBase           = "minBase"           // published minimum contribution base, denars
	KeyMaxBase           = "maxBase"           // published maximum contribution base, denars
	KeyMaxBaseMultiplier = "maxBaseMultiplier" // maximum base as a multiple of the average salary
)

// keyIsPercent tells percentage keys from money and plain-number keys.
var keyKinds = map[string]string{
	KeyPension: "percent", KeyHealth: "percent", KeyAdditionalHealth: "percent", KeyEmployment: "percent", KeyPIT: "percent",
	KeyPersonalAllowance: "money", KeyAverageSalary: "money", KeyMinBase: "money", KeyMaxBase: "money",
	KeyMaxBaseMultiplier: "number",
}

// Keys lists every rate key in a stable order.
func Keys() []string {
	return []string{KeyPension, KeyHealth, KeyAdditionalHealth, KeyEmployment, KeyPIT,
		KeyPersonalAllowance, KeyAverageSalary, KeyMinBase, KeyMaxBase, KeyMaxBaseMultiplier}
}

// version is one value of a key in force from a date (inclusive) until the
// next version of the same key.
type version struct {
	key    string
	value  string // decimal text: percent, denars or a plain number
	from   string // YYYY-MM-DD
	source string
}

// dated is a version in the date-ordered table. carry marks a yearly
// figure that is not published yet: the last published value stays in
// force, provisionally, and every calculation that uses it says so.
type dated struct {
	version
	carry bool
}

// Sources, named once. Full references: shared research/payroll.md.
const (
	srcUJPGuide  = "UJP guide ujp.gov.mk/mk/vodic/category/641 and /en/vodic/category/700"
	srcUJPMPIN   = "UJP brochure 'Месечна пресметка за интегрирана наплата' (ISBN 978-608-4592-70-9, 2016) p.7"
	srcLaw2018   = "Закон за изменување на ЗПЗСО, Сл. весник 247/2018 (rates for 2019)"
	srcOrbitax20 = "Orbitax 2020 'North Macedonia Social Security' (rates apply from the January 2020 salary)"
	srcJuly2026  = "Draft law amending ЗПЗСО (2026): pension 19.9%, employment 0.1% from the July 2026 salary; no Official Gazette number found"
	srcPIT       = "Закон за данокот на личен доход: flat 10% (UJP-MPIN-2016 p.7; flat again from January 2020, Mondaq 894326)"
	srcMaxMult   = "ЗПЗСО art. 16: 16× the average salary for employees since 2018 (ohridnews 2018; PwC 2024)"
	srcAllowance = "Monthly personal allowance published by the Minister of Finance"
	srcAverage   = "State Statistical Office average salary used by UJP for the contribution bases"
	src2027      = "the 2027 figure was not published when these tables were written (November 2026): the 2026 figure is carried forward provisionally; pass averageSalary or personalAllowance to use the published one, and add it here"
)

// table is every statutory value, oldest first per key. Where a figure was
// not found (the 2023 and 2024 average salary and bases), the key simply has
// no value for that period: a calculation that needs it asks the caller.
var table = []version{
	// R1: contribution rates (research/payroll.md §1).
	{KeyPension, "19", "2009-01-01", srcUJPGuide},
	{KeyHealth, "7.5", "2009-01-01", srcUJPGuide},
	{KeyAdditionalHealth, "0.5", "2009-01-01", srcUJPGuide},
	{KeyEmployment, "1.4", "2009-01-01", srcUJPGuide},
	{KeyPension, "18", "2010-01-01", srcUJPGuide + "; akademik.mk 2010–2015"},
	{KeyHealth, "7.3", "2010-01-01", srcUJPGuide},
	{KeyEmployment, "1.2", "2010-01-01", srcUJPGuide},
	{KeyPension, "18.4", "2019-01-01", srcLaw2018},
	{KeyHealth, "7.4", "2019-01-01", srcLaw2018},
	{KeyPension, "18.8", "2020-01-01", srcOrbitax20},
	{KeyHealth, "7.5", "2020-01-01", srcOrbitax20},
	{KeyPension, "19.9", "2026-07-01", srcJuly2026},
	{KeyEmployment, "0.1", "2026-07-01", srcJuly2026},
	{KeyPIT, "10", "2009-01-01", srcPIT},

	// R2: the maximum base as a multiple of the average salary (ЗПЗСО art.
	// 16). Known only for some years; an empty value ends the previous one
	// without inventing the next. The published maximum bases below are what
	// the engine uses; the multiplier matters only when the caller passes
	// averageSalary.
	{KeyMaxBaseMultiplier, "6", "2012-01-01", "eurokonsaltplus 2012: 183,546 = 6 × 30,591"},
	{KeyMaxBaseMultiplier, "", "2014-01-01", "2014 and 2015 multiplier not found: pass rateOverrides.maxBaseMultiplier"},
	{KeyMaxBaseMultiplier, "12", "2016-01-01", "UJP-MPIN-2016 p.12 (12× for employees)"},
	{KeyMaxBaseMultiplier, "", "2017-01-01", "2017 multiplier not found: pass rateOverrides.maxBaseMultiplier"},
	{KeyMaxBaseMultiplier, "16", "2018-01-01", srcMaxMult},

	// Average salary and the published bases (research/payroll.md §2.2).
	// Years whose bases were not found have the average only: a
	// calculation then asks for averageSalary (or minBase and maxBase).
	{KeyAverageSalary, "27507", "2009-01-01", srcAverage + " (UJP EN guide page 700)"},
	{KeyMinBase, "", "2009-01-01", "2009–2011 bases not found: pass averageSalary and rateOverrides.maxBaseMultiplier"},
	{KeyMaxBase, "", "2009-01-01", "2009–2011 bases not found: pass averageSalary and rateOverrides.maxBaseMultiplier"},
	{KeyMaxBaseMultiplier, "", "2009-01-01", "2009–2011 multiplier not found (UJP-MPIN-2016 p.39 error 18 still names 4×)"},
	{KeyAverageSalary, "29829", "2010-01-01", srcAverage + " (UJP EN guide page 700)"},
	{KeyAverageSalary, "30349", "2011-01-01", srcAverage + " (UJP EN guide page 700)"},
	{KeyAverageSalary, "30591", "2012-01-01", srcAverage + " (eurokonsaltplus 2012)"},
	{KeyMinBase, "15295.50", "2012-01-01", "eurokonsaltplus 2012, published with decimals (UJP's own example uses 15,296)"},
	{KeyMaxBase, "183546", "2012-01-01", "eurokonsaltplus 2012 (6×)"},
	{KeyAverageSalary, "30595", "2013-01-01", srcAverage + " (UJP EN guide page 700)"},
	{KeyMinBase, "", "2013-01-01", "2013 minimum base not found: pass averageSalary"},
	{KeyMaxBase, "183570", "2013-01-01", "euraxess.mk social security (6×)"},
	{KeyAverageSalary, "30902", "2014-01-01", srcAverage + " (UJP EN guide page 700)"},
	{KeyMaxBase, "", "2014-01-01", "2014 maximum base not found: pass averageSalary and rateOverrides.maxBaseMultiplier"},
	{KeyAverageSalary, "31644", "2015-01-01", srcAverage + " (UJP EN guide page 700)"},
	{KeyAverageSalary, "32268", "2016-01-01", srcAverage + " (rafajlovski 2016)"},
	{KeyMinBase, "16134", "2016-01-01", "rafajlovski 2016, published minimum base"},
	{KeyMaxBase, "387216", "2016-01-01", "UJP-MPIN-2016 p.12 (12×); rafajlovski 2016"},
	{KeyAverageSalary, "32877", "2017-01-01", srcAverage + " (UJP EN guide page 700)"},
	{KeyMinBase, "", "2017-01-01", "2017 bases not found: pass averageSalary and rateOverrides.maxBaseMultiplier"},
	{KeyMaxBase, "", "2017-01-01", "2017 bases not found: pass averageSalary and rateOverrides.maxBaseMultiplier"},
	{KeyAverageSalary, "34079", "2018-01-01", srcAverage + " (ohridnews 2018)"},
	{KeyMinBase, "17040", "2018-01-01", "ohridnews 2018, published minimum base"},
	{KeyMaxBase, "545264", "2018-01-01", "ohridnews 2018, published maximum base"},
	{KeyAverageSalary, "36017", "2019-01-01", srcAverage + " (Orbitax 2019)"},
	{KeyMinBase, "18008", "2019-01-01", "Orbitax 2019 (published 18,008, not 18,008.5 rounded up)"},
	{KeyMaxBase, "576272", "2019-01-01", "16 × the 2019 average salary 36,017 (ЗПЗСО art. 16)"},
	{KeyAverageSalary, "38319", "2020-01-01", srcAverage + " (Orbitax 2020; RSM)"},
	{KeyMinBase, "19160", "2020-01-01", "Orbitax 2020; RSM"},
	{KeyMaxBase, "613104", "2020-01-01", "Orbitax 2020; RSM"},
	{KeyAverageSalary, "41141", "2021-01-01", srcAverage + " (Eurofast 2021)"},
	{KeyMinBase, "20571", "2021-01-01", "Eurofast; biznisinfo"},
	{KeyMaxBase, "658256", "2021-01-01", "Eurofast; biznisinfo"},
	{KeyAverageSalary, "43509", "2022-01-01", srcAverage + " (Orbitax 2022)"},
	{KeyMinBase, "21755", "2022-01-01", "Orbitax 2022 (prints the typo 20,755; 43,509/2 = 21,754.5)"},
	{KeyMaxBase, "696144", "2022-01-01", "Orbitax 2022"},
	// 2023 and 2024: average salary and bases not found. These rows end the
	// 2022 values without inventing new ones.
	{KeyAverageSalary, "", "2023-01-01", "not found for 2023 and 2024: pass averageSalary"},
	{KeyMinBase, "", "2023-01-01", "not found for 2023 and 2024: pass averageSalary"},
	{KeyMaxBase, "", "2023-01-01", "not found for 2023 and 2024: pass averageSalary"},
	{KeyAverageSalary, "63154", "2025-01-01", srcAverage + " (openaccountants citing UJP via Bloomberg Tax, 22 Jan 2025)"},
	{KeyMinBase, "31577", "2025-01-01", "openaccountants 2025"},
	{KeyMaxBase, "1010464", "2025-01-01", "openaccountants 2025"},
	{KeyAverageSalary, "69141", "2026-01-01", srcAverage + " (UJP soopstenie 1187; TAMI parameters)"},
	{KeyMinBase, "34571", "2026-01-01", "TAMI parameters and a UJP-accepted May 2026 МПИН file"},
	{KeyMaxBase, "1106256", "2026-01-01", "16 × 69,141 (TAMI parameters)"},

	// R3: personal allowance per month.
	{KeyPersonalAllowance, "", "2009-01-01", "2009–2015 values not found: pass personalAllowance"},
	{KeyPersonalAllowance, "7357", "2016-01-01", srcAllowance + " (eurokonsaltplus 2016)"},
	{KeyPersonalAllowance, "", "2017-01-01", "2017 value not found: pass personalAllowance"},
	{KeyPersonalAllowance, "7531", "2018-01-01", srcAllowance + " (UJP licno_osloboduvanje; Mondaq)"},
	{KeyPersonalAllowance, "8000", "2019-01-01", srcAllowance + " (Mondaq)"},
	{KeyPersonalAllowance, "8228", "2020-01-01", srcAllowance + " (Mondaq; smetkovoditeli)"},
	{KeyPersonalAllowance, "8438", "2021-01-01", srcAllowance + " (Сл. весник 299/20)"},
	{KeyPersonalAllowance, "8788", "2022-01-01", srcAllowance + " (Сл. весник 303/21)"},
	{KeyPersonalAllowance, "9038", "2023-01-01", srcAllowance + " (Сл. весник 283/22)"},
	{KeyPersonalAllowance, "9540", "2024-01-01", srcAllowance + " (Сл. весник 263/2023)"},
	{KeyPersonalAllowance, "10270", "2025-01-01", srcAllowance + " (MoF 23-7532/1 of 26.12.2024)"},
	{KeyPersonalAllowance, "10932", "2026-01-01", srcAllowance + " (a UJP-accepted May 2026 МПИН file: DanocnoOslobIznosVk 10932)"},
}

// unpublished lists yearly figures that are due but not published yet. The
// 2027 average salary and bases are published in January 2027, the 2027
// allowance in December 2026; until they are added to table, 2026's stay
// in force provisionally (a payroll for January 2027 must still be
// computed), and every result that used a carried figure says so, with
// the carried figure's source.
var unpublished = []version{
	{KeyAverageSalary, "", "2027-01-01", src2027},
	{KeyMinBase, "", "2027-01-01", src2027},
	{KeyMaxBase, "", "2027-01-01", src2027},
	{KeyPersonalAllowance, "", "2027-01-01", src2027},
}

// tableByDate is table ordered by effective date (stable), the order in
// which versions replace each other.
var tableByDate = func() []dated {
	out := make([]dated, 0, len(table)+len(unpublished))
	for _, v := range table {
		out = append(out, dated{version: v})
	}
	for _, v := range unpublished {
		out = append(out, dated{version: v, carry: true})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].from < out[j].from })
	return out
}()

// History is one version of a rate key.
type History struct {
	Key           string  `json:"key" example:"pension" doc:"The rate key (also a key of rateOverrides)."`
	Value         *string `json:"value" doc:"Decimal text; null where the figure is not known for the period. For a provisional version, the earlier figure carried forward."`
	EffectiveFrom string  `json:"effectiveFrom" example:"2026-07-01" doc:"First day the version is in force, YYYY-MM-DD."`
	EffectiveTo   *string `json:"effectiveTo" doc:"Last day in force; null while current."`
	Source        string  `json:"source" example:"Закон за задолжително социјално осигурување" doc:"Where the figure is published (law, gazette, the fund's notice)."`
	Provisional   bool    `json:"provisional" doc:"True for a yearly figure not published yet: calculations carry the previous figure forward and mark their result provisional."`
}

// RateHistory returns every version of every key, by key then date.
func RateHistory() []History {
	byKey := map[string][]dated{}
	for _, v := range tableByDate {
		byKey[v.key] = append(byKey[v.key], v)
	}
	var out []History
	for _, k := range Keys() {
		vs := byKey[k]
		sort.SliceStable(vs, func(i, j int) bool { return vs[i].from < vs[j].from })
		for i, v := range vs {
			h := History{Key: k, EffectiveFrom: v.from, Source: v.source, Provisional: v.carry}
			val := v.value
			if prev := len(out) - 1; v.carry && i > 0 && out[prev].Value != nil {
				val = *out[prev].Value // the figure carried forward
			}
			if val != "" {
				h.Value = &val
			}
			if i+1 < len(vs) {
				next, _ := time.Parse(time.DateOnly, vs[i+1].from)
				to := next.AddDate(0, 0, -1).Format(time.DateOnly)
				h.EffectiveTo = &to
			}
			out = append(out, h)
		}
	}
	return out
}

// Provisional is a yearly figure used before its publication: the last
// published value of the key, carried forward.
type Provisional struct {
	Key         string `json:"key" doc:"The rate key (see GET /v1/rates)."`
	Value       string `json:"value" doc:"The value used: the last published figure."`
	CarriedFrom string `json:"carriedFrom" doc:"Effective date of the published figure that is carried forward."`
	Source      string `json:"source" doc:"Source of the carried figure."`
	Reason      string `json:"reason" doc:"Why the figure is provisional."`
}

// figure is the value of a key in force on a date.
type figure struct {
	value string
	prov  *Provisional
}

// figuresOn returns the value of every key in force on date; keys whose
// value is not known for that date are absent. A key whose figure is not
// published yet keeps its last published value, marked provisional.
func figuresOn(date time.Time) map[string]figure {
	d := date.Format(time.DateOnly)
	out := map[string]figure{}
	last := map[string]dated{}
	for _, v := range tableByDate {
		if v.from > d {
			break
		}
		switch {
		case v.carry:
			if prev, ok := last[v.key]; ok && prev.value != "" {
				out[v.key] = figure{value: prev.value, prov: &Provisional{Key: v.key, Value: prev.value,
					CarriedFrom: prev.from, Source: prev.source, Reason: v.source}}
			}
			continue // the carried version stays "last": a later carry row carries the same figure
		case v.value == "":
			delete(out, v.key)
		default:
			out[v.key] = figure{value: v.value}
		}
		last[v.key] = v
	}
	return out
}

// RatesOn returns the value of every key in force on date; keys whose value
// is not known for that date are absent. Figures not published yet carry
// the last published value (ProvisionalOn lists them).
func RatesOn(date time.Time) map[string]string {
	out := map[string]string{}
	for k, f := range figuresOn(date) {
		out[k] = f.value
	}
	return out
}

// ProvisionalOn lists the figures in force on date that are carried
// forward because the year's figure is not published yet, in key order.
func ProvisionalOn(date time.Time) []Provisional {
	fs := figuresOn(date)
	out := []Provisional{}
	for _, k := range Keys() {
		if f, ok := fs[k]; ok && f.prov != nil {
			out = append(out, *f.prov)
		}
	}
	return out
}

// statutory is the values a calculation needs.
type statutory struct {
	rates                        [4]money.Amount // pension, health, additional health, employment, percent
	pit                          money.Amount    // percent
	allowance, minBase, maxBase  money.Amount    // denars
	hasAllowance, hasMin, hasMax bool            // false: not known for the date
	averageSet                   bool            // the bases come from an averageSalary override
	// noMultiplier: averageSalary was given but the date has no known
	// maximum-base multiplier, so the maximum base is unknown.
	noMultiplier bool
	// prov holds, per key, the carried figure behind a value (nil when the
	// value is published or overridden).
	prov map[string]*Provisional
}

// snapshots holds the statutory values without overrides for every date on
// which some value changes, so the common calculation parses nothing.
var snapshots = func() []snapshot {
	var dates []string
	seen := map[string]bool{}
	for _, v := range tableByDate {
		if !seen[v.from] {
			seen[v.from] = true
			dates = append(dates, v.from)
		}
	}
	sort.Strings(dates)
	out := make([]snapshot, 0, len(dates))
	for _, d := range dates {
		t, _ := time.Parse(time.DateOnly, d)
		st, err := resolveSlow(t, nil)
		out = append(out, snapshot{from: t, st: st, err: err})
	}
	return out
}()

type snapshot struct {
	from time.Time
	st   statutory
	err  error
}

// resolve builds the statutory values for date with the caller's overrides
// applied. Overrides were validated already.
func resolve(date time.Time, over map[string]money.Amount) (statutory, error) {
	if len(over) == 0 {
		i := sort.Search(len(snapshots), func(i int) bool { return snapshots[i].from.After(date) })
		if i > 0 {
			return snapshots[i-1].st, snapshots[i-1].err
		}
	}
	return resolveSlow(date, over)
}

func resolveSlow(date time.Time, over map[string]money.Amount) (statutory, error) {
	vals := figuresOn(date)
	var s statutory
	get := func(key string) (money.Amount, bool, error) {
		if v, ok := over[key]; ok {
			return v, true, nil
		}
		f, ok := vals[key]
		if !ok {
			return money.Amount{}, false, nil
		}
		v, err := scaleOf(key, f.value)
		if err == nil && f.prov != nil {
			if s.prov == nil {
				s.prov = map[string]*Provisional{}
			}
			s.prov[key] = f.prov
		}
		return v, true, err
	}
	for i, k := range []string{KeyPension, KeyHealth, KeyAdditionalHealth, KeyEmployment} {
		v, ok, err := get(k)
		if err != nil || !ok {
			return s, fmt.Errorf("payroll: no %s rate on %s", k, date.Format(time.DateOnly))
		}
		s.rates[i] = v
	}
	v, ok, err := get(KeyPIT)
	if err != nil || !ok {
		return s, fmt.Errorf("payroll: no pit rate on %s", date.Format(time.DateOnly))
	}
	s.pit = v
	if v, ok, _ := get(KeyPersonalAllowance); ok {
		s.allowance, s.hasAllowance = v, true
	}
	// An averageSalary override derives both bases from it, as the law does
	// (ЗПЗСО arts. 15 and 16): the minimum is 50% rounded half-up to a whole
	// denar, the maximum the multiplier of the date (or of the override)
	// times the average. Without an override the published bases are used
	// as published. Explicit minBase and maxBase overrides win over both.
	if avg, ok := over[KeyAverageSalary]; ok {
		s.averageSet = true
		s.minBase, s.hasMin = avg.Div(money.FromInt(2), 0).Round(2), true
		if m, ok, _ := get(KeyMaxBaseMultiplier); ok {
			s.maxBase, s.hasMax = avg.Mul(m).Round(2), true
		} else {
			s.noMultiplier = true
		}
	} else {
		if v, ok, _ := get(KeyMinBase); ok {
			s.minBase, s.hasMin = v, true
		}
		if v, ok, _ := get(KeyMaxBase); ok {
			s.maxBase, s.hasMax = v, true
		}
	}
	if v, ok := over[KeyMinBase]; ok {
		s.minBase, s.hasMin = v, true
		delete(s.prov, KeyMinBase)
	}
	if v, ok := over[KeyMaxBase]; ok {
		s.maxBase, s.hasMax, s.noMultiplier = v, true, false
		delete(s.prov, KeyMaxBase)
	}
	return s, nil
}

// scaleOf parses a key's decimal text: percentages and plain numbers as
// numbers with up to four decimals, money as denars.
func scaleOf(key, text string) (money.Amount, error) {
	if keyKinds[key] == "money" {
		return parseMoney(text)
	}
	n, err := ParseNumber(text)
	return n.a, err
}

// kindDescription names the unit of each kind of rate key in messages.
var kindDescription = map[string]string{
	"percent": "a percentage such as 18.8",
	"money":   "denars such as 10932",
	"number":  "a plain number such as 16",
}

// sortedKeys returns the keys of an overrides object in order, so that
// validation reports them in a stable order.
func sortedKeys(m map[string]json.RawMessage) []string {
	if len(m) == 0 {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
