package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// PasswordParams are the Argon2id parameters of new password hashes. The
// defaults are the first of OWASP's recommended configurations (19 MiB of
// memory, two passes, one lane): about 30 ms on one core of the machines we
// run on, and 19 MiB per sign-in in flight. Every hash records its own
// parameters, so raising them later leaves old hashes verifiable.
type PasswordParams struct {
	MemoryKiB uint32
	Time      uint32
	Threads   uint8
}

// defaultPasswordParams are used by HashPassword.
var defaultPasswordParams = PasswordParams{MemoryKiB: 19 * 1024, Time: 2, Threads: 1}

const (
	saltLen = 16
	keyLen  = 32
	// MinPasswordLen is the shortest password a person may choose.
	MinPasswordLen = 12
)

// HashPassword returns the PHC string of password with the default
// parameters: $argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash> (base64, no
// padding).
func HashPassword(password string) string {
	return hashPassword(password, defaultPasswordParams)
}

func hashPassword(password string, p PasswordParams) string {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		panic("auth: random source failed: " + err.Error())
	}
	sum := argon2.IDKey([]byte(password), salt, p.Time, p.MemoryKiB, p.Threads, keyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.MemoryKiB, p.Time, p.Threads,
		b64.EncodeToString(salt), b64.EncodeToString(sum))
}

var errBadHash = errors.New("auth: not an argon2id password hash")

// CheckPassword reports whether password matches the PHC string hash, in
// time independent of where the two differ.
func CheckPassword(hash, password string) (bool, error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return false, errBadHash
	}
	var v int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return false, errBadHash
	}
	var p PasswordParams
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.MemoryKiB, &p.Time, &p.Threads); err != nil ||
		p.MemoryKiB == 0 || p.MemoryKiB > 1<<20 || p.Time == 0 || p.Time > 16 || p.Threads == 0 {
		return false, errBadHash
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false, errBadHash
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false, errBadHash
	}
	got := argon2.IDKey([]byte(password), salt, p.Time, p.MemoryKiB, p.Threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}
