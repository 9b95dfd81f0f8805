// Package einvoicingtest seeds the store with delivered e-invoices for
// tests and benchmarks that need many of them (usage at 100,000 documents,
// archives of 10,000): the rows the submission pipeline leaves behind —
// the e-invoice, its signed signing request, its status history, UJP's PDF
// and its usage ledger row — written directly, in batches — and it tells
// benchmarks how much CPU time the process has used (ProcessCPU). It is
// never imported by production code.
package einvoicingtest

import (
	"context"
	"database/sql"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// Company makes an account (on plan) with one active company in env and
// a signing agent and certificate for it.
type Company struct {
	AccountID, CompanyID, CertificateID, Environment string
}

// NewCompany writes a company of a new account (accountID "" makes one).
func NewCompany(ctx context.Context, db *store.DB, accountID, plan, env, taxNumber string) (Company, error) {
	c := Company{AccountID: accountID, CompanyID: denar.NewID("cmp"), Environment: env}
	err := db.InTx(ctx, func(tx *store.Tx) error {
		if c.AccountID == "" {
			c.AccountID = denar.NewID("acct")
			if _, err := tx.CreateAccount(ctx, dbq.CreateAccountParams{ID: c.AccountID, Name: "Биро", Plan: plan, CreatedAt: tx.Now}); err != nil {
				return err
			}
		}
		if _, err := tx.CreateCompany(ctx, dbq.CreateCompanyParams{ID: c.CompanyID, AccountID: c.AccountID, Name: "Продавач " + taxNumber,
			TaxNumber: taxNumber, Status: "active", SigningMode: "sdk", Environment: env, Address: "{}", CreatedAt: tx.Now}); err != nil {
			return err
		}
		agent := denar.NewID("agt")
		if _, err := tx.CreateSigningAgent(ctx, dbq.CreateSigningAgentParams{ID: agent, AccountID: c.AccountID, Environment: env,
			Name: "seed", SecretHash: "x", CreatedAt: tx.Now}); err != nil {
			return err
		}
		c.CertificateID = denar.NewID("crt")
		_, err := tx.CreateSigningCertificate(ctx, dbq.CreateSigningCertificateParams{ID: c.CertificateID, AgentID: agent, CompanyID: c.CompanyID,
			Der: "AA==", Serial: "1", Subject: "CN=seed", NotBefore: tx.Now.Add(-time.Hour), NotAfter: tx.Now.Add(24 * time.Hour), CreatedAt: tx.Now})
		return err
	})
	return c, err
}

// Doc is one seeded delivered e-invoice.
type Doc struct {
	ID, EUID string
	// Document is the document JSON inside the JWS, as UJP received it.
	Document []byte
	JWS      string
	PDF      []byte // nil: none fetched
}

// Options shape seeded documents.
type Options struct {
	// DeliveredAt of document i.
	At func(i int) time.Time
	// PDFSize > 0 gives every document a PDF of that many bytes.
	PDFSize int
	// Batch is the documents per transaction; default 500.
	Batch int
	// NoLedger leaves the usage ledger alone (benchmarks that seed it
	// themselves).
	NoLedger bool
}

// Delivered writes n delivered documents of c and returns them.
func Delivered(ctx context.Context, db *store.DB, c Company, n int, o Options) ([]Doc, error) {
	if o.Batch <= 0 {
		o.Batch = 500
	}
	var pdf []byte
	if o.PDFSize > 0 {
		pdf = fakePDF(o.PDFSize)
	}
	out := make([]Doc, 0, n)
	for start := 0; start < n; start += o.Batch {
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for i := start; i < min(n, start+o.Batch); i++ {
				at := o.At(i).UTC().Truncate(time.Microsecond)
				d, err := deliveredOne(ctx, tx, c, i, at, pdf, o.NoLedger)
				if err != nil {
					return err
				}
				out = append(out, d)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func deliveredOne(ctx context.Context, tx *store.Tx, c Company, i int, at time.Time, pdf []byte, noLedger bool) (Doc, error) {
	id := denar.NewID("einv")
	euid := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, time.Now().UnixNano()&0xffffffffffff)
	doc := []byte(fmt.Sprintf(`{"header":{"docId":%q,"requestTimestamp":%q},"invoice":{"number":"S-%06d","lines":[{"description":"Услуга","quantity":"1","unitPrice":"1000.0000"}]}}`,
		id, ujpdoc.FormatTimestamp(at), i))
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","x5c":["AA=="]}`))
	payload := base64.RawURLEncoding.EncodeToString(doc)
	jws := header + "." + payload + "." + base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("signature-%d", i)))
	if _, err := tx.CreateEInvoice(ctx, dbq.CreateEInvoiceParams{ID: id, AccountID: c.AccountID, CompanyID: c.CompanyID,
		Environment: c.Environment, Kind: "invoice", Status: "delivered", DocumentType: "100", Number: fmt.Sprintf("S-%06d", i),
		IssueDate: at.Format(time.DateOnly), Document: string(doc), UjpDocID: id, TotalNet: "1000.00", TotalVat: "180.00",
		TotalGross: "1180.00", Currency: "MKD", Problems: "[]", Fingerprint: "seed", CreatedAt: at, UpdatedAt: at}); err != nil {
		return Doc{}, err
	}
	if _, err := tx.Tx.ExecContext(ctx, "UPDATE einvoices SET euid = $1, delivered_at = $2 WHERE id = $3", euid, at, id); err != nil {
		return Doc{}, err
	}
	sr := denar.NewID("sgr")
	if _, err := tx.CreateSigningRequest(ctx, dbq.CreateSigningRequestParams{ID: sr, AccountID: c.AccountID, CompanyID: c.CompanyID,
		CertificateID: c.CertificateID, Purpose: "document", ProtectedHeader: header, Payload: payload, LinkType: "einvoice", LinkID: id,
		ExpiresAt: at.Add(time.Hour), CreatedAt: at}); err != nil {
		return Doc{}, err
	}
	if _, err := tx.FinishSigningRequest(ctx, dbq.FinishSigningRequestParams{State: "signed", Jws: jws, ID: sr, Now: at}); err != nil {
		return Doc{}, err
	}
	prev := sql.NullString{}
	for k, to := range []string{"awaiting_signature", "queued", "submitting", "delivered"} {
		if err := tx.AddEInvoiceStatus(ctx, dbq.AddEInvoiceStatusParams{ID: denar.NewID("esh"), EinvoiceID: id, FromStatus: prev,
			ToStatus: to, Cause: []string{"issued", "signed", "submission", "submitted"}[k], At: at}); err != nil {
			return Doc{}, err
		}
		prev = sql.NullString{String: to, Valid: true}
	}
	if pdf != nil {
		if err := tx.PutEInvoicePDF(ctx, dbq.PutEInvoicePDFParams{EinvoiceID: id, Pdf: base64.StdEncoding.EncodeToString(pdf), CreatedAt: at}); err != nil {
			return Doc{}, err
		}
	}
	if !noLedger {
		l := at.In(ujpdoc.Skopje)
		if _, err := tx.CountUsageDocument(ctx, dbq.CountUsageDocumentParams{DocumentID: id, AccountID: c.AccountID, CompanyID: c.CompanyID,
			Environment: c.Environment, Direction: "sent", Period: l.Format("2006-01"), Day: l.Format(time.DateOnly),
			SigningRequestID: sql.NullString{String: sr, Valid: true}, At: at}); err != nil {
			return Doc{}, err
		}
		if err := tx.AddUsageCount(ctx, dbq.AddUsageCountParams{AccountID: c.AccountID, Environment: c.Environment,
			Period: l.Format("2006-01"), CompanyID: c.CompanyID, Direction: "sent"}); err != nil {
			return Doc{}, err
		}
	}
	return Doc{ID: id, EUID: euid, Document: doc, JWS: jws, PDF: pdf}, nil
}

// fakePDF is n bytes that start and end like a PDF, filled with bytes a
// compressor cannot shrink (a real PDF's streams are compressed already).
func fakePDF(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	copy(b, "%PDF-1.4\n")
	copy(b[max(0, n-6):], "%%EOF\n")
	return b
}
