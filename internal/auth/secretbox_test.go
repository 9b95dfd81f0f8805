package auth

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestSecretBox(t *testing.T) {
	t.Parallel()
	key, err := ParseSecretKey(NewSecretKey())
	if err != nil {
		t.Fatal(err)
	}
	box, err := NewSecretBox(key)
	if err != nil {
		t.Fatal(err)
	}
	secret := "whsec_" + RandomToken(40)
	sealed := box.Seal(secret, "whe_1")
	if strings.Contains(sealed, secret[6:]) {
		t.Fatal("the sealed secret shows the secret")
	}
	if again := box.Seal(secret, "whe_1"); again == sealed {
		t.Fatal("two seals of one secret are equal: the nonce is not fresh")
	}
	if got, err := box.Open(sealed, "whe_1"); err != nil || got != secret {
		t.Fatalf("open: %q, %v", got, err)
	}
	if _, err := box.Open(sealed, "whe_2"); err == nil {
		t.Fatal("a secret opened for another endpoint")
	}
	other, _ := NewSecretBox(bytes.Repeat([]byte{7}, 32))
	if _, err := other.Open(sealed, "whe_1"); !errors.Is(err, ErrWrongSecretKey) {
		t.Fatalf("another key: %v", err)
	}
	tampered := sealed[:len(sealed)-2] + "AA"
	if tampered == sealed {
		tampered = sealed[:len(sealed)-2] + "BB"
	}
	if _, err := box.Open(tampered, "whe_1"); err == nil {
		t.Fatal("a tampered secret opened")
	}
}

func TestParseSecretKey(t *testing.T) {
	t.Parallel()
	raw := bytes.Repeat([]byte{0xab}, 32)
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{strings.Repeat("ab", 32), true},
		{"q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s=", true},
		{"q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s", true},
		{"  q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s=\n", true},
		{strings.Repeat("ab", 31), false},
		{"q6urq6ur", false},
		{"", false},
		{strings.Repeat("zz", 32), false},
	} {
		got, err := ParseSecretKey(tc.in)
		if tc.ok != (err == nil) || (tc.ok && !bytes.Equal(got, raw)) {
			t.Errorf("ParseSecretKey(%q) = %x, %v", tc.in, got, err)
		}
	}
}

// FuzzParseSecretKey: whatever it accepts is a 32-byte key.
func FuzzParseSecretKey(f *testing.F) {
	f.Add(strings.Repeat("ab", 32))
	f.Add(NewSecretKey())
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseSecretKey(s)
		if err == nil && len(k) != SecretKeySize {
			t.Fatalf("accepted a %d-byte key", len(k))
		}
	})
}
