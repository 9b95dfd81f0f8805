package einvoicing

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
)

// SandboxUJP drives the sandbox simulator of UJP on an integrator's behalf
// (*ujpsim.Sim in process, ujpsim.Control over HTTP, implement it). A
// refusal by the simulator (a document no longer in status 01, say) is an
// error with a UJPCode() string method.
type SandboxUJP interface {
	// The seller's side: the buyer's decision, the deadline, outages and
	// forced errors of one seller.
	Decide(ctx context.Context, euid string, accept bool, reasonCode, comment string) error
	AutoAccept(ctx context.Context, euid string) error
	SetSellerOutage(ctx context.Context, edb string, on bool) error
	RejectNextSend(ctx context.Context, edb, code, message string) error
	// The buyer's side: an invoice from a fictitious supplier dropped into
	// buyerTin's inbox (docID names it, so a retry drops it once;
	// transactionDate decides its deadline; "" for defaults), and the
	// seller's storno of a received document. Each returns the new EUID.
	SendToBuyer(ctx context.Context, buyerTin, docID, transactionDate, issueDate string) (string, error)
	VoidBySeller(ctx context.Context, euid, reason string) (string, error)
}

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

// EnqueueSandboxSigner has the sandbox's simulator told of certificate
// certID by a job (KindSandboxSigner), in tx.
func EnqueueSandboxSigner(ctx context.Context, tx *store.Tx, certID string) error {
	_, err := jobs.Insert(ctx, tx, sandboxSignerArgs{CertificateID: certID}, jobs.InsertOpts{MaxAttempts: 20})
	return err
}

// SimulatedSandbox reports whether the sandbox's UJP is a simulator this
// service registers signers with (Deps.SandboxSetup): a sandbox
// certificate then needs no EUJP id of its own.
func (s *Service) SimulatedSandbox() bool { return s.sandboxSetup != nil }

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
			if err := EnqueueSubmit(ctx, tx, id); err != nil {
				return err
			}
		}
		return nil
	})
}
