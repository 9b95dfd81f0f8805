package filing

import (
	"strings"
	"unicode"
)

// Code lists from research §4.1 (UJP-MPIN-2016 and UJP's current client lists).

// municipalityCode reports whether c is in UJP's municipality list: 101–185
// (Сл. весник 42/05) plus 999 "N/A".
func municipalityCode(c string) bool {
	if len(c) != 3 {
		return false
	}
	n := 0
	for _, r := range c {
		if r < '0' || r > '9' {
			return false
		}
		n = n*10 + int(r-'0')
	}
	return (n >= 101 && n <= 185) || n == 999
}

// fzomUnits maps each ФЗОМ area unit (МПИН 3.4б) to its city.
var fzomUnits = map[string]string{
	"4011": "Битола", "4012": "Демир Хисар", "4013": "Ресен",
	"4021": "Гостивар", "4022": "Тетово",
	"4031": "Куманово", "4032": "Кратово", "4033": "Крива Паланка",
	"4041": "Охрид", "4042": "Кичево", "4043": "Дебар", "4044": "Струга",
	"4051": "Прилеп", "4052": "Крушево", "4053": "Македонски Брод",
	"4061": "Скопје",
	"4071": "Велес", "4072": "Кавадарци", "4073": "Гевгелија", "4074": "Валандово", "4075": "Неготино",
	"4081": "Штип", "4082": "Берово", "4083": "Струмица", "4084": "Кочани", "4085": "Делчево",
	"4086": "Виница", "4087": "Пробиштип", "4088": "Радовиш", "4089": "Свети Николе",
}

// fzomBranch reports whether c is a unit (4 digits) or a business unit inside
// one (6 digits whose first four are a unit).
func fzomBranch(c string) bool {
	if len(c) != 4 && len(c) != 6 {
		return false
	}
	for _, r := range c {
		if r < '0' || r > '9' {
			return false
		}
	}
	_, ok := fzomUnits[c[:4]]
	return ok
}

// areaCodes are the dialling codes (МПИН 2.3) of the seats of the ФЗОМ units.
var areaCodes = map[string]string{
	"Скопје": "02", "Куманово": "031", "Кратово": "031", "Крива Паланка": "031",
	"Штип": "032", "Радовиш": "032", "Пробиштип": "032", "Свети Николе": "032",
	"Кочани": "033", "Берово": "033", "Делчево": "033", "Виница": "033",
	"Струмица": "034", "Гевгелија": "034", "Валандово": "034",
	"Гостивар": "042", "Велес": "043", "Кавадарци": "043", "Неготино": "043",
	"Тетово": "044", "Кичево": "045", "Македонски Брод": "045",
	"Охрид": "046", "Струга": "046", "Дебар": "046",
	"Битола": "047", "Ресен": "047", "Демир Хисар": "047",
	"Прилеп": "048", "Крушево": "048",
}

// cityKey normalises a city written in Cyrillic or Latin to its Cyrillic
// name, so "Skopje", "SKOPJE" and "Скопје" all find the same entry.
func cityKey(city string) string {
	c := strings.TrimSpace(city)
	if !hasLatin(c) {
		return c
	}
	cyr, ok := toCyrillic(strings.ToLower(c))
	if !ok {
		return c
	}
	rs := []rune(cyr)
	for i := range rs {
		if i == 0 || rs[i-1] == ' ' {
			rs[i] = []rune(strings.ToUpper(string(rs[i])))[0]
		}
	}
	return string(rs)
}

// DeriveAreaCode returns the dialling code of city, or "" when unknown.
func DeriveAreaCode(city string) string { return areaCodes[cityKey(city)] }

// DeriveFzomBranch returns the ФЗОМ unit of city, or "" when unknown.
func DeriveFzomBranch(city string) string {
	k := cityKey(city)
	for code, name := range fzomUnits {
		if name == k {
			return code
		}
	}
	return ""
}

// vidObvrska is the list of МПИН 1.3 codes.
var vidObvrska = map[string]bool{
	"100": true, "333": true, "101": true, "102": true, "103": true, "109": true, "123": true, "222": true,
	"700": true, "555": true, "553": true, "820": true, "821": true,
}

// vidObvrznikKnown is the part of the МПИН 1.4 list that is public; UJP's
// list has 40 codes, so an unknown code is only a warning.
var vidObvrznikKnown = map[string]bool{
	"110": true, "111": true, "112": true, "116": true, "122": true, "123": true, "180": true,
}

// codeSet builds a set from space-separated codes.
func codeSet(codes string) map[string]bool {
	m := map[string]bool{}
	for _, c := range strings.Fields(codes) {
		m[c] = true
	}
	return m
}

// vidStaz is UJP's current list of МПИН 3.17 codes.
var vidStaz = codeSet("2222 0050 0040 0041 0042 0043 0044 0045 0046 0047 0049 0055 0065 0066 0067 0072 0080 0089 0099 0048 0017 0068 0075 3333 4444 5555 7777 0057 0038 6666")

// exemptionCodes is UJP's list of МПИН 3.17б codes (research §4.1 and the
// МПИН client's osloboduvanje list): 001 self-employed, not liable for the
// employment contribution; 002 persons under conventions; 003 and 004
// insured pensioners; 009 non-residents not liable for contributions; 015
// persons working abroad exempt from PIT; 017 embassies not withholding
// PIT through МПИН; 034 persons exempt under international social
// security agreements; 050 employee of a self-employed person; 060
// self-employed who started in the current year.
var exemptionCodes = codeSet("001 002 003 004 009 015 017 034 050 060")

// competentBodyCodes is the МПИН 3.23 list (research §4.1): the codes a
// record's sickFundCode may name for hours another payer takes over.
var competentBodyCodes = codeSet("128 129 130 131 132 133 140 240 241 242 243 244 245 246 247 301 302 303 304 305 306 307 351 400")

var latinMulti = []struct {
	lat, cyr string
	runes    []rune
}{
	{lat: "dzh", cyr: "џ"}, {lat: "dž", cyr: "џ"}, {lat: "gj", cyr: "ѓ"}, {lat: "kj", cyr: "ќ"}, {lat: "lj", cyr: "љ"}, {lat: "nj", cyr: "њ"}, {lat: "dz", cyr: "ѕ"},
	{lat: "zh", cyr: "ж"}, {lat: "ch", cyr: "ч"}, {lat: "sh", cyr: "ш"}, {lat: "ǵ", cyr: "ѓ"}, {lat: "ḱ", cyr: "ќ"}, {lat: "ž", cyr: "ж"}, {lat: "č", cyr: "ч"}, {lat: "š", cyr: "ш"},
	{lat: "ć", cyr: "ќ"}, {lat: "đ", cyr: "ѓ"},
}

var latinOne = map[rune]string{
	'a': "а", 'b': "б", 'c': "ц", 'd': "д", 'e': "е", 'f': "ф", 'g': "г", 'h': "х", 'i': "и", 'j': "ј",
	'k': "к", 'l': "л", 'm': "м", 'n': "н", 'o': "о", 'p': "п", 'r': "р", 's': "с", 't': "т", 'u': "у",
	'v': "в", 'z': "з", ' ': " ", '-': "-", '\'': "'",
}

func init() {
	for i := range latinMulti {
		latinMulti[i].runes = []rune(latinMulti[i].lat)
	}
}

func hasLatin(s string) bool {
	for _, r := range s {
		if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') {
			return true
		}
	}
	return false
}

// toCyrillic transliterates a Latin-script Macedonian name (the official
// romanisation and the common digraphs) to Cyrillic, keeping the case of each
// letter. ok is false when a letter has no Macedonian equivalent (q, w, x, y).
func toCyrillic(s string) (string, bool) {
	if !hasLatin(s) {
		for _, r := range s {
			if r >= 0x0400 && r <= 0x04FF {
				continue
			}
			if _, ok := latinOne[r]; !ok {
				return "", false
			}
		}
		return s, true
	}
	if ascii(s) {
		return asciiToCyrillic(s)
	}
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); {
		matched := false
		for _, m := range latinMulti {
			mr := m.runes
			if i+len(mr) <= len(rs) && strings.EqualFold(string(rs[i:i+len(mr)]), m.lat) {
				out := m.cyr
				if rs[i] != []rune(strings.ToLower(string(rs[i])))[0] {
					out = strings.ToUpper(out)
				}
				b.WriteString(out)
				i += len(mr)
				matched = true
				break
			}
		}
		if matched {
			continue
		}
		r := rs[i]
		lower := []rune(strings.ToLower(string(r)))[0]
		if c, ok := latinOne[lower]; ok {
			if lower != r {
				c = strings.ToUpper(c)
			}
			b.WriteString(c)
		} else if r >= 0x0400 && r <= 0x04FF {
			b.WriteRune(r)
		} else {
			return "", false
		}
		i++
	}
	return b.String(), true
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// asciiMulti and asciiOne are latinMulti and latinOne restricted to ASCII
// Latin, with both cases of the Cyrillic prepared: for an ASCII name
// asciiToCyrillic gives what the general loop of toCyrillic gives (no
// non-ASCII digraph can match ASCII text under case folding), without
// converting to runes or changing case one letter at a time.
var (
	asciiMulti []struct{ lat, lower, upper string }
	asciiOne   [128]struct {
		lower, upper string
		ok           bool
	}
)

func init() {
	for _, m := range latinMulti {
		if ascii(m.lat) {
			asciiMulti = append(asciiMulti, struct{ lat, lower, upper string }{m.lat, m.cyr, strings.ToUpper(m.cyr)})
		}
	}
	for r, c := range latinOne {
		asciiOne[r].lower, asciiOne[r].upper, asciiOne[r].ok = c, c, true
		if up := unicode.ToUpper(r); up != r {
			asciiOne[up].lower, asciiOne[up].upper, asciiOne[up].ok = c, strings.ToUpper(c), true
		}
	}
}

func lowerASCII(b byte) byte {
	if b >= 'A' && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

func asciiToCyrillic(s string) (string, bool) {
	b := make([]byte, 0, 2*len(s))
	for i := 0; i < len(s); {
		matched := false
		for _, m := range asciiMulti {
			if i+len(m.lat) > len(s) {
				continue
			}
			j := 0
			for j < len(m.lat) && lowerASCII(s[i+j]) == m.lat[j] {
				j++
			}
			if j == len(m.lat) {
				if s[i] >= 'A' && s[i] <= 'Z' {
					b = append(b, m.upper...)
				} else {
					b = append(b, m.lower...)
				}
				i += len(m.lat)
				matched = true
				break
			}
		}
		if matched {
			continue
		}
		one := &asciiOne[s[i]]
		if !one.ok {
			return "", false
		}
		if s[i] >= 'A' && s[i] <= 'Z' {
			b = append(b, one.upper...)
		} else {
			b = append(b, one.lower...)
		}
		i++
	}
	return string(b), true
}

// cyrName returns the Cyrillic form of a name: the given Cyrillic field, the
// name itself when it is already Cyrillic, else its transliteration.
func cyrName(cyr *string, name string) (string, bool) {
	if cyr != nil && strings.TrimSpace(*cyr) != "" {
		return strings.TrimSpace(*cyr), true
	}
	return toCyrillic(strings.TrimSpace(name))
}
