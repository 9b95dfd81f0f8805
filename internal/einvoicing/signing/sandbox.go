package signing

// The sandbox's signers: a certificate registered for a sandbox company is
// made known to UJP's simulator, as UJP's portal would for a real signer.

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
)

// SandboxSetup does at the sandbox's simulator what UJP's portal does for
// a real company, out of band of the gateway's UJP client: it registers a
// signer's certificate and grants the signer every portal privilege (DP,
// RD, DA) for the company. cmd/denar gives one for the simulator backends
// (the embedded simulator, a denar ujp-sim); with UJP's own test
// environment there is none, and certificates need their EUJP id.
type SandboxSetup interface {
	RegisterSigner(ctx context.Context, eujpID, edb string, certDER []byte) error
}

// KindSandboxSigner registers a sandbox certificate with the simulator.
const KindSandboxSigner = "sandbox.register_signer"

type sandboxSignerArgs struct {
	CertificateID string `json:"certificateId"`
}

func (sandboxSignerArgs) Kind() string { return KindSandboxSigner }

// enqueueSandboxSigner has the sandbox's simulator told of certificate
// certID by a job (KindSandboxSigner), in tx.
func enqueueSandboxSigner(ctx context.Context, tx *store.Tx, certID string) error {
	_, err := jobs.Insert(ctx, tx, sandboxSignerArgs{CertificateID: certID}, jobs.InsertOpts{MaxAttempts: 20})
	return err
}

// simulatedSandbox reports whether the sandbox's UJP is a simulator this
// room registers signers with (Deps.SandboxSetup): a sandbox certificate
// then needs no EUJP id of its own.
func (s *Service) simulatedSandbox() bool { return s.sandboxSetup != nil }

// registerSandboxSigner is the worker of KindSandboxSigner.
func (s *Service) registerSandboxSigner(ctx context.Context, _ *jobs.Job, a sandboxSignerArgs) error {
	cert, err := s.db.Reader().GetSigningCertificate(ctx, a.CertificateID)
	if err != nil {
		return fmt.Errorf("sandbox signer %s: %w", a.CertificateID, err)
	}
	co, err := s.db.Reader().GetCompany(ctx, cert.CompanyID)
	if err != nil {
		return fmt.Errorf("sandbox signer %s: company: %w", a.CertificateID, err)
	}
	der, err := base64.StdEncoding.DecodeString(cert.Der)
	if err != nil {
		return jobs.Cancel(fmt.Errorf("sandbox signer %s: %w", cert.ID, err))
	}
	if err := s.sandboxSetup.RegisterSigner(ctx, cert.EujpID, co.TaxNumber, der); err != nil {
		return err
	}
	// Documents sent before the simulator knew the signer wait on UJP's
	// refusal (E1012): they go now.
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		ids, err := tx.ListQueuedEInvoiceIDs(ctx, co.ID)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if err := einvoicing.EnqueueSubmit(ctx, tx, id); err != nil {
				return err
			}
		}
		return nil
	})
}
