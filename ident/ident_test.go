package ident

import (
	"errors"
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
		{"4030990123456", nil},
		{"403099012345", ErrLength},
		{"40309901234x6", ErrDigits},
	}
	for _, tt := range tests {
		if err := EDB(tt.in); !errors.Is(err, tt.want) && !(err == nil && tt.want == nil) {
			t.Errorf("EDB(%q) = %v, want %v", tt.in, err, tt.want)
		}
	}
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
