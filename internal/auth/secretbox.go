package auth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// SecretBox seals secrets that must be read back (webhook endpoint
// secrets, TOTP seeds) for storage, with AES-256-GCM under the operator's
// key (DENAR_WEBHOOK_SECRET_KEY). A sealed secret reads
// "v1.<key id>.<base64url(nonce ‖ ciphertext ‖ tag)>": the key id (the
// first 8 hex digits of SHA-256 of the key) tells a wrong key from a
// damaged value, and the id of the row it belongs to (the endpoint's, the
// user's) is the additional data, so a sealed secret copied onto another
// row does not open.
type SecretBox struct {
	aead  cipher.AEAD
	keyID string
}

// SecretKeySize is the size of the key: AES-256.
const SecretKeySize = 32

// NewSecretBox returns a box sealing with key (32 bytes).
func NewSecretBox(key []byte) (*SecretBox, error) {
	if len(key) != SecretKeySize {
		return nil, fmt.Errorf("secret key: %d bytes, want %d", len(key), SecretKeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	sum := sha256.Sum256(key)
	return &SecretBox{aead: aead, keyID: hex.EncodeToString(sum[:4])}, nil
}

// ParseSecretKey reads a key as configured: 32 bytes written as 64 hex
// digits or as base64 (standard or URL alphabet, padded or not).
func ParseSecretKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if len(s) == 2*SecretKeySize {
		if b, err := hex.DecodeString(s); err == nil {
			return b, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == SecretKeySize {
			return b, nil
		}
	}
	return nil, errors.New("must be 32 random bytes as 64 hex digits or as base64 (for example: openssl rand -base64 32)")
}

// NewSecretKey returns a fresh random key, base64-encoded as ParseSecretKey
// reads it.
func NewSecretKey() string {
	b := make([]byte, SecretKeySize)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// Seal encrypts a secret of the row id.
func (b *SecretBox) Seal(secret, id string) string {
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(secret)+b.aead.Overhead())
	_, _ = rand.Read(nonce)
	out := b.aead.Seal(nonce, nonce, []byte(secret), []byte(id))
	return "v1." + b.keyID + "." + base64.RawURLEncoding.EncodeToString(out)
}

// ErrWrongSecretKey means a secret was sealed under another key than the
// configured one.
var ErrWrongSecretKey = errors.New("the secret was sealed with another DENAR_WEBHOOK_SECRET_KEY")

// Sealed reports whether a stored value is in the sealed form (values
// stored before sealing are not).
func Sealed(v string) bool { return strings.HasPrefix(v, "v1.") }

// Open decrypts a sealed secret of the row id.
func (b *SecretBox) Open(sealed, id string) (string, error) {
	parts := strings.SplitN(sealed, ".", 3)
	if len(parts) != 3 || parts[0] != "v1" {
		return "", errors.New("sealed secret: not a sealed secret")
	}
	if parts[1] != b.keyID {
		return "", ErrWrongSecretKey
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(raw) < b.aead.NonceSize() {
		return "", errors.New("sealed secret: damaged")
	}
	n := b.aead.NonceSize()
	plain, err := b.aead.Open(nil, raw[:n], raw[n:], []byte(id))
	if err != nil {
		return "", errors.New("sealed secret: does not open (damaged, or sealed for another row)")
	}
	return string(plain), nil
}
