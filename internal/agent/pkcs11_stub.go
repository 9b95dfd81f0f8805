//go:build !pkcs11

package agent

import "errors"

// PKCS11Enabled reports whether this binary can use PKCS#11 tokens; build
// with -tags pkcs11 (cgo) to enable them.
const PKCS11Enabled = false

// LoadPKCS11 is unavailable without the pkcs11 build tag.
func LoadPKCS11(module, tokenLabel, pin, keyLabel, certPath string) (Key, error) {
	return Key{}, errors.New("this denar-agent was built without PKCS#11; rebuild with -tags pkcs11")
}
