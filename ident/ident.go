// Package ident checks the Macedonian identifiers that appear on statutory
// filings: the personal number ЕМБГ, the tax number ЕДБ and the 15-digit bank
// account. The checks are pure functions so that validation, the generators
// and the HTTP layer all agree on what "valid" means.
package ident

import (
	"errors"
	"fmt"
	"time"
)

// Errors returned by the checks; callers branch with errors.Is.
var (
	ErrLength   = errors.New("wrong length")
	ErrDigits   = errors.New("not all digits")
	ErrDate     = errors.New("invalid date of birth")
	ErrChecksum = errors.New("check digit does not match")
)

func digitsOnly(s string, n int) error {
	if len(s) != n {
		return fmt.Errorf("%w: %d characters, want %d", ErrLength, len(s), n)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return fmt.Errorf("%w: position %d", ErrDigits, i+1)
		}
	}
	return nil
}

// EMBG checks a ЕМБГ: 13 digits DDMMYYYRRBBBK where DDMMYYY is a real date
// (YYY 9xx is 19xx, 0xx is 20xx) and K is the mod-11 check digit with weights
// 7,6,5,4,3,2 repeated; a remainder giving 10 or 11 maps to 0.
func EMBG(s string) error {
	if err := digitsOnly(s, 13); err != nil {
		return fmt.Errorf("embg: %w", err)
	}
	if _, err := EMBGBirthDate(s); err != nil {
		return err
	}
	w := [12]int{7, 6, 5, 4, 3, 2, 7, 6, 5, 4, 3, 2}
	sum := 0
	for i := 0; i < 12; i++ {
		sum += int(s[i]-'0') * w[i]
	}
	k := 11 - sum%11
	if k > 9 {
		k = 0
	}
	if int(s[12]-'0') != k {
		return fmt.Errorf("embg: %w", ErrChecksum)
	}
	return nil
}

// EMBGBirthDate returns the date encoded in the first seven digits of a ЕМБГ.
func EMBGBirthDate(s string) (time.Time, error) {
	if err := digitsOnly(s, 13); err != nil {
		return time.Time{}, fmt.Errorf("embg: %w", err)
	}
	num := func(a, b int) int {
		n := 0
		for _, c := range s[a:b] {
			n = n*10 + int(c-'0')
		}
		return n
	}
	d, m, y := num(0, 2), num(2, 4), num(4, 7)
	if y >= 800 {
		y += 1000
	} else {
		y += 2000
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if m < 1 || m > 12 || d < 1 || t.Day() != d || t.Month() != time.Month(m) {
		return time.Time{}, fmt.Errorf("embg: %w: %s", ErrDate, s[:7])
	}
	return t, nil
}

// EDB checks a ЕДБ (tax number): exactly 13 digits, the last a mod-11 check
// digit over the first twelve with weights 7,6,5,4,3,2,7,6,5,4,3,2: the
// check digit is (−Σ dᵢ·wᵢ mod 11) mod 10, so a remainder giving 10 maps to
// 0. This is python-stdnum's mk.edb rule, which it tests against real
// numbers such as 4030000375897. The caller passes the bare digits: no
// "MK" prefix, spaces or dashes (see EDBCheckDigit for building one).
func EDB(s string) error {
	if err := digitsOnly(s, 13); err != nil {
		return fmt.Errorf("edb: %w", err)
	}
	if s[12] != edbCheck(s[:12]) {
		return fmt.Errorf("edb: %w", ErrChecksum)
	}
	return nil
}

// EDBCheckDigit returns the check digit that completes a 12-digit ЕДБ
// prefix into a valid ЕДБ.
func EDBCheckDigit(prefix string) (string, error) {
	if err := digitsOnly(prefix, 12); err != nil {
		return "", fmt.Errorf("edb prefix: %w", err)
	}
	return string(edbCheck(prefix)), nil
}

// edbCheck computes the check digit of twelve digits (already checked).
func edbCheck(p string) byte {
	w := [12]int{7, 6, 5, 4, 3, 2, 7, 6, 5, 4, 3, 2}
	sum := 0
	for i := 0; i < 12; i++ {
		sum += int(p[i]-'0') * w[i]
	}
	return byte('0' + (11-sum%11)%11%10)
}

// BankAccount checks a Macedonian account number: 15 digits (3-digit bank
// code, 10-digit account, 2 check digits) whose value is 1 modulo 97, the
// ISO 7064 MOD 97-10 rule also used for the BBAN inside an MK IBAN.
func BankAccount(s string) error {
	if err := digitsOnly(s, 15); err != nil {
		return fmt.Errorf("bank account: %w", err)
	}
	r := 0
	for i := 0; i < len(s); i++ {
		r = (r*10 + int(s[i]-'0')) % 97
	}
	if r != 1 {
		return fmt.Errorf("bank account: %w", ErrChecksum)
	}
	return nil
}

// BankAccountCheckDigits returns the two check digits for a 13-digit prefix.
func BankAccountCheckDigits(prefix string) (string, error) {
	if err := digitsOnly(prefix, 13); err != nil {
		return "", fmt.Errorf("bank account prefix: %w", err)
	}
	r := 0
	for i := 0; i < len(prefix); i++ {
		r = (r*10 + int(prefix[i]-'0')) % 97
	}
	c := 98 - (r*100)%97
	return fmt.Sprintf("%02d", c), nil
}
