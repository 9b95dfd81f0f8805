//go:build pkcs11

package agent

import (
	"context"
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

	"github.com/denar-mk/denar/sdk/signer"
)

// PKCS11Enabled reports whether this binary can use PKCS#11 tokens.
const PKCS11Enabled = true

// sha256DigestInfo is the DER prefix of a SHA-256 DigestInfo (RFC 8017
// §9.2): CKM_RSA_PKCS signs DigestInfo||digest, which is RS256, and lets
// the token sign the digest crypto.Signer hands us.
var sha256DigestInfo = []byte{0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20}

// tokenSigner signs on a PKCS#11 token in one logged-in session: it logs
// in once (one PIN entry) and keeps the session for every batch after,
// until the token ends it (pulled out, logged out); the next batch's Begin
// then opens a session and logs in once again. It implements
// signer.Session.
type tokenSigner struct {
	mu      sync.Mutex // a PKCS#11 session is not safe for concurrent use
	ctx     *pkcs11.Ctx
	label   string // the token's
	keyName string // the private key's label
	pin     func() (string, error)
	session pkcs11.SessionHandle
	open    bool // session is a session of ours
	key     pkcs11.ObjectHandle
	pub     *rsa.PublicKey
	logins  int // C_Login calls (PIN entries) so far
}

func (s *tokenSigner) Public() crypto.PublicKey { return s.pub }

// Begin makes sure the signer holds a logged-in session before a batch:
// nothing to do while the session lasts, else one new session and one
// login. A refused or locked PIN is a signer.RefusalError with pin_locked,
// a token that is not there one with token_missing.
func (s *tokenSigner) Begin(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ready()
}

// End leaves the session open for the next batch.
func (s *tokenSigner) End() {}

// Logins is how many times the signer logged in (asked for the PIN).
func (s *tokenSigner) Logins() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logins
}

// ready opens and logs in a session unless the one held is still logged
// in; s.mu is held.
func (s *tokenSigner) ready() error {
	if s.open {
		if info, err := s.ctx.GetSessionInfo(s.session); err == nil &&
			(info.State == pkcs11.CKS_RO_USER_FUNCTIONS || info.State == pkcs11.CKS_RW_USER_FUNCTIONS) {
			return nil
		}
		_ = s.ctx.CloseSession(s.session)
		s.open = false
	}
	slots, err := s.ctx.GetSlotList(true)
	if err != nil {
		return &signer.RefusalError{Reason: "token_missing", Err: fmt.Errorf("pkcs11: slots: %w", err)}
	}
	slot, found := uint(0), false
	for _, sl := range slots {
		if ti, err := s.ctx.GetTokenInfo(sl); err == nil && ti.Label == s.label {
			slot, found = sl, true
			break
		}
	}
	if !found {
		return &signer.RefusalError{Reason: "token_missing", Err: fmt.Errorf("pkcs11: no token labelled %q (is it plugged in?)", s.label)}
	}
	sess, err := s.ctx.OpenSession(slot, pkcs11.CKF_SERIAL_SESSION)
	if err != nil {
		return &signer.RefusalError{Reason: "token_missing", Err: fmt.Errorf("pkcs11: open session: %w", err)}
	}
	pin, err := s.pin()
	if err != nil {
		_ = s.ctx.CloseSession(sess)
		return &signer.RefusalError{Reason: "pin_locked", Err: fmt.Errorf("pkcs11: PIN: %w", err)}
	}
	s.logins++
	if err := s.ctx.Login(sess, pkcs11.CKU_USER, pin); err != nil {
		var pe pkcs11.Error
		// Another session of the token may have logged in for us (the
		// login is the token's): the session is usable.
		if !errors.As(err, &pe) || pe != pkcs11.CKR_USER_ALREADY_LOGGED_IN {
			_ = s.ctx.CloseSession(sess)
			return &signer.RefusalError{Reason: "pin_locked", Err: fmt.Errorf("pkcs11: login: %w", err)}
		}
	}
	if err := s.ctx.FindObjectsInit(sess, []*pkcs11.Attribute{
		pkcs11.NewAttribute(pkcs11.CKA_CLASS, pkcs11.CKO_PRIVATE_KEY),
		pkcs11.NewAttribute(pkcs11.CKA_LABEL, s.keyName),
	}); err != nil {
		_ = s.ctx.CloseSession(sess)
		return &signer.RefusalError{Reason: "token_missing", Err: fmt.Errorf("pkcs11: find key: %w", err)}
	}
	objs, _, err := s.ctx.FindObjects(sess, 1)
	_ = s.ctx.FindObjectsFinal(sess)
	if err != nil || len(objs) == 0 {
		_ = s.ctx.CloseSession(sess)
		return &signer.RefusalError{Reason: "token_missing", Err: fmt.Errorf("pkcs11: no private key labelled %q: %v", s.keyName, err)}
	}
	s.session, s.key, s.open = sess, objs[0], true
	return nil
}

func (s *tokenSigner) Sign(_ io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	if opts.HashFunc() != crypto.SHA256 || len(digest) != 32 {
		return nil, errors.New("pkcs11: only SHA-256 digests (RS256) are signed")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.ready(); err != nil {
		return nil, err
	}
	if err := s.ctx.SignInit(s.session, []*pkcs11.Mechanism{pkcs11.NewMechanism(pkcs11.CKM_RSA_PKCS, nil)}, s.key); err != nil {
		return nil, &signer.RefusalError{Reason: "token_missing", Err: fmt.Errorf("pkcs11: sign init: %w", err)}
	}
	sig, err := s.ctx.Sign(s.session, append(append([]byte{}, sha256DigestInfo...), digest...))
	if err != nil {
		return nil, &signer.RefusalError{Reason: "token_missing", Err: fmt.Errorf("pkcs11: sign: %w", err)}
	}
	return sig, nil
}

// LoadPKCS11 opens the token labelled tokenLabel through module, logs in
// with pin and uses the private key labelled keyLabel; the certificate comes
// from certPath (PEM), since many tokens are provisioned with the key only.
func LoadPKCS11(module, tokenLabel, pin, keyLabel, certPath string) (Key, error) {
	return LoadPKCS11PIN(module, tokenLabel, func() (string, error) { return pin, nil }, keyLabel, certPath)
}

// LoadPKCS11PIN is LoadPKCS11 with the PIN asked of pin each time the token
// needs a login: once at the start, then once per token session (after
// the token was pulled out or logged out), never per signature.
func LoadPKCS11PIN(module, tokenLabel string, pin func() (string, error), keyLabel, certPath string) (Key, error) {
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
	s := &tokenSigner{ctx: p, label: tokenLabel, keyName: keyLabel, pin: pin, pub: pub}
	if err := s.ready(); err != nil {
		_ = p.Finalize()
		p.Destroy()
		var re *signer.RefusalError
		if errors.As(err, &re) {
			return Key{}, re.Err
		}
		return Key{}, err
	}
	return Key{Signer: s, Cert: cert, Close: func() error {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.open {
			_ = p.Logout(s.session)
			_ = p.CloseSession(s.session)
		}
		err := p.Finalize()
		p.Destroy()
		return err
	}}, nil
}
