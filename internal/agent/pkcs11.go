//go:build pkcs11

package agent

import (
	"crypto"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/miekg/pkcs11"
)

// PKCS11Enabled reports whether this binary can use PKCS#11 tokens.
const PKCS11Enabled = true

// sha256DigestInfo is the DER prefix of a SHA-256 DigestInfo (RFC 8017
// §9.2): CKM_RSA_PKCS signs DigestInfo||digest, which is RS256, and lets
// the token sign the digest crypto.Signer hands us.
var sha256DigestInfo = []byte{0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20}

type tokenSigner struct {
	mu      sync.Mutex // a PKCS#11 session is not safe for concurrent use
	ctx     *pkcs11.Ctx
	session pkcs11.SessionHandle
	key     pkcs11.ObjectHandle
	pub     *rsa.PublicKey
}

func (s *tokenSigner) Public() crypto.PublicKey { return s.pub }

func (s *tokenSigner) Sign(_ io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	if opts.HashFunc() != crypto.SHA256 || len(digest) != 32 {
		return nil, errors.New("pkcs11: only SHA-256 digests (RS256) are signed")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.ctx.SignInit(s.session, []*pkcs11.Mechanism{pkcs11.NewMechanism(pkcs11.CKM_RSA_PKCS, nil)}, s.key); err != nil {
		return nil, fmt.Errorf("pkcs11: sign init: %w", err)
	}
	sig, err := s.ctx.Sign(s.session, append(append([]byte{}, sha256DigestInfo...), digest...))
	if err != nil {
		return nil, fmt.Errorf("pkcs11: sign: %w", err)
	}
	return sig, nil
}

// LoadPKCS11 opens the token labelled tokenLabel through module, logs in
// with pin and uses the private key labelled keyLabel; the certificate comes
// from certPath (PEM), since many tokens are provisioned with the key only.
func LoadPKCS11(module, tokenLabel, pin, keyLabel, certPath string) (Key, error) {
	cb, err := os.ReadFile(certPath)
	if err != nil {
		return Key{}, err
	}
	blk, _ := pem.Decode(cb)
	if blk == nil {
		return Key{}, fmt.Errorf("%s is not PEM", certPath)
	}
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return Key{}, fmt.Errorf("parse certificate %s: %w", certPath, err)
	}
	pub, ok := cert.PublicKey.(*rsa.PublicKey)
	if !ok {
		return Key{}, errors.New("certificate key is not RSA")
	}
	p := pkcs11.New(module)
	if p == nil {
		return Key{}, fmt.Errorf("pkcs11: cannot load module %s", module)
	}
	if err := p.Initialize(); err != nil {
		p.Destroy()
		return Key{}, fmt.Errorf("pkcs11: initialize: %w", err)
	}
	fail := func(err error) (Key, error) {
		_ = p.Finalize()
		p.Destroy()
		return Key{}, err
	}
	slots, err := p.GetSlotList(true)
	if err != nil {
		return fail(fmt.Errorf("pkcs11: slots: %w", err))
	}
	slot, found := uint(0), false
	for _, sl := range slots {
		if ti, err := p.GetTokenInfo(sl); err == nil && ti.Label == tokenLabel {
			slot, found = sl, true
			break
		}
	}
	if !found {
		return fail(fmt.Errorf("pkcs11: no token labelled %q (is it plugged in?)", tokenLabel))
	}
	sess, err := p.OpenSession(slot, pkcs11.CKF_SERIAL_SESSION)
	if err != nil {
		return fail(fmt.Errorf("pkcs11: open session: %w", err))
	}
	if err := p.Login(sess, pkcs11.CKU_USER, pin); err != nil {
		return fail(fmt.Errorf("pkcs11: login: %w", err))
	}
	if err := p.FindObjectsInit(sess, []*pkcs11.Attribute{
		pkcs11.NewAttribute(pkcs11.CKA_CLASS, pkcs11.CKO_PRIVATE_KEY),
		pkcs11.NewAttribute(pkcs11.CKA_LABEL, keyLabel),
	}); err != nil {
		return fail(fmt.Errorf("pkcs11: find key: %w", err))
	}
	objs, _, err := p.FindObjects(sess, 1)
	_ = p.FindObjectsFinal(sess)
	if err != nil || len(objs) == 0 {
		return fail(fmt.Errorf("pkcs11: no private key labelled %q: %v", keyLabel, err))
	}
	s := &tokenSigner{ctx: p, session: sess, key: objs[0], pub: pub}
	return Key{Signer: s, Cert: cert, Close: func() error {
		_ = p.Logout(sess)
		_ = p.CloseSession(sess)
		err := p.Finalize()
		p.Destroy()
		return err
	}}, nil
}
