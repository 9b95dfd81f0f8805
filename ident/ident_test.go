package ident

import (
	"errors"
	"fmt"
	"testing"
)

func TestEMBG(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want error
	}{
		{"0101990450014", nil},
		{"1505985412349", nil},
		{"2902000450031", nil}, // 29 Feb 2000, leap year
		{"0101990450015", ErrChecksum},
		{"2902001450031", ErrDate}, // 29 Feb 2001 does not exist
		{"3204990450014", ErrDate},
		{"0113990450014", ErrDate},
		{"010199045001", ErrLength},
		{"01019904500A4", ErrDigits},
		{"", ErrLength},
	}
	for _, tt := range tests {
		if err := EMBG(tt.in); !errors.Is(err, tt.want) && !(err == nil && tt.want == nil) {
			t.Errorf("EMBG(%q) = %v, want %v", tt.in, err, tt.want)
		}
	}
}

func TestEDB(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want error
	}{
		// Real numbers, python-stdnum's mk.edb vectors.
		{"4030000375897", nil},
		{"4020990116747", nil},
		{"4057009501106", nil},
		{"4030000375890", ErrChecksum},
		// The sandbox's test numbers.
		{"4030000000001", nil},
		{"4030000000010", nil}, // Σ ≡ 1 (mod 11): (−1 mod 11) = 10 maps to 0
		{"4030000000028", nil},
		{"4030000000036", nil},
		{"4030000000044", nil},
		{"4039999999997", nil},
		{"4039999999989", nil},
		{"4030000000002", ErrChecksum},
		{"4030990123456", ErrChecksum},
		{"0000000000000", nil}, // Σ = 0: check digit 0
		{"403099012345", ErrLength},
		{"40300000000100", ErrLength},
		{"MK4030000375897", ErrLength}, // the bare digits only, no country prefix
		{"40309901234x6", ErrDigits},
		{" 403000037589", ErrDigits},
		{"", ErrLength},
	}
	for _, tt := range tests {
		if err := EDB(tt.in); !errors.Is(err, tt.want) && !(err == nil && tt.want == nil) {
			t.Errorf("EDB(%q) = %v, want %v", tt.in, err, tt.want)
		}
	}
}

func TestEDBCheckDigit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		err      error
	}{
		{"403000037589", "7", nil},
		{"402099011674", "7", nil},
		{"405700950110", "6", nil},
		{"403000000001", "0", nil},
		{"40300000001", "", ErrLength},
		{"40300000000a", "", ErrDigits},
	}
	for _, tt := range tests {
		got, err := EDBCheckDigit(tt.in)
		if got != tt.want || !errors.Is(err, tt.err) && !(err == nil && tt.err == nil) {
			t.Errorf("EDBCheckDigit(%q) = %q, %v; want %q, %v", tt.in, got, err, tt.want, tt.err)
		}
	}
	// Exactly one digit completes each prefix.
	for _, p := range []string{"403000037589", "000000000000", "999999999999", "403999999998"} {
		n := 0
		for k := '0'; k <= '9'; k++ {
			if EDB(p+string(k)) == nil {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d check digits complete %s, want 1", n, p)
		}
	}
}

func ExampleEDB() {
	fmt.Println(EDB("4030000375897"))
	fmt.Println(EDB("4030000375890"))
	d, _ := EDBCheckDigit("403000000001")
	fmt.Println("403000000001" + d)
	// Output:
	// <nil>
	// edb: check digit does not match
	// 4030000000010
}

func TestBankAccount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want error
	}{
		{"250120000058984", nil}, // BBAN of the published example IBAN MK07250120000058984
		{"300000000211884", nil},
		{"250120000058985", ErrChecksum},
		{"25012000005898", ErrLength},
		{"2501200000589a4", ErrDigits},
	}
	for _, tt := range tests {
		if err := BankAccount(tt.in); !errors.Is(err, tt.want) && !(err == nil && tt.want == nil) {
			t.Errorf("BankAccount(%q) = %v, want %v", tt.in, err, tt.want)
		}
	}
}

func FuzzEMBG(f *testing.F) {
	f.Add("0101990450014")
	f.Add("abc")
	f.Fuzz(func(t *testing.T, s string) {
		if EMBG(s) == nil {
			if _, err := EMBGBirthDate(s); err != nil {
				t.Fatalf("valid EMBG %q without a date: %v", s, err)
			}
		}
	})
}

func FuzzEDB(f *testing.F) {
	f.Add("4030000375897")
	f.Add("403000037589")
	f.Add("MK4030000375897")
	f.Fuzz(func(t *testing.T, s string) {
		err := EDB(s)
		if err == nil && len(s) != 13 {
			t.Fatalf("valid ЕДБ %q of length %d", s, len(s))
		}
		if c, err := EDBCheckDigit(s); err == nil {
			if EDB(s+c) != nil {
				t.Fatalf("check digit %s for %q does not validate", c, s)
			}
		}
		if err == nil {
			// Any other last digit is refused.
			for k := byte('0'); k <= '9'; k++ {
				if k != s[12] && EDB(s[:12]+string(k)) == nil {
					t.Fatalf("%q and %q both valid", s, s[:12]+string(k))
				}
			}
		}
	})
}

func FuzzBankAccount(f *testing.F) {
	f.Add("250120000058984")
	f.Add("3000000002118")
	f.Fuzz(func(t *testing.T, s string) {
		_ = BankAccount(s)
		if c, err := BankAccountCheckDigits(s); err == nil {
			if BankAccount(s+c) != nil {
				t.Fatalf("check digits %s for %q do not validate", c, s)
			}
		}
	})
}
