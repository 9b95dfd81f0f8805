package einvoicing

// Signing requests: what other server code (e-invoices, decisions, UJP
// reads) calls to get something signed by the customer's agent, and what a
// recorded signature sets off (AfterSigned). The claim → signature |
// refusal | expiry state machine is the signing room's
// (internal/einvoicing/signing); each transition is a guarded UPDATE
// (state IN pending, claimed), so no request is ever signed twice, whatever
// the retries or concurrent agents.

import (
	"context"
	"crypto/x509"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice/jwsverify"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// Purposes of a signing request. UJP wants signatures on reads too, so an
// agent can sign queries without asking a person.
const (
	PurposeDocument = "document"
	PurposeDecision = "decision"
	PurposeQuery    = "query"
)

// States of a signing request.
const (
	StatePending   = "pending"
	StateClaimed   = "claimed"
	StateSigned    = "signed"
	StateRefused   = "refused"
	StateExpired   = "expired"
	SigningTTL     = 15 * time.Minute
	AgentOnlineTTL = 90 * time.Second
)

// SigningLink names the object a signing request belongs to.
type SigningLink struct {
	Type string `json:"type" doc:"What the request signs for, e.g. einvoice, decision, query."`
	ID   string `json:"id" doc:"Id of that object."`
}

// SigningRequest is the public form of a signing request.
type SigningRequest struct {
	ID              string            `json:"id" doc:"Prefix sgr_."`
	Object          string            `json:"object" enum:"signing_request" example:"signing_request" doc:"Always signing_request."`
	CompanyID       string            `json:"companyId" example:"cmp_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The company whose certificate must sign (cmp_…)."`
	Purpose         string            `json:"purpose" enum:"document,decision,query" example:"document" doc:"document: an e-invoice to submit; decision: an inbox accept or reject; query: a signed read of UJP (the inbox's documents)."`
	State           string            `json:"state" enum:"pending,claimed,signed,refused,expired" example:"pending" doc:"pending: waiting for a signer; claimed: a signer took it; signed: done; refused: the signer declined (see refusal); expired: see replacedBy."`
	ProtectedHeader string            `json:"protectedHeader" doc:"base64url of the exact JWS protected header JSON to sign with ({\"alg\":\"RS256\",\"x5c\":[…]}); use it verbatim."`
	Payload         string            `json:"payload" doc:"base64url of the bytes to sign; use it verbatim as the JWS payload."`
	SigningInput    string            `json:"signingInput" doc:"protectedHeader + '.' + payload: the ASCII bytes RS256 signs."`
	ExpiresAt       time.Time         `json:"expiresAt" doc:"After this a signature is refused with 410 signature_expired and a new request is issued."`
	ClaimedBy       *string           `json:"claimedBy" doc:"Agent id (or API key id for inline signing) that claimed it."`
	JWS             *string           `json:"jws" doc:"The verified compact JWS once signed."`
	Refusal         *SigningRefusal   `json:"refusal" doc:"Why the signer declined; null unless refused."`
	ReplacedBy      *string           `json:"replacedBy" doc:"The request issued in place of this expired one."`
	Links           map[string]string `json:"links" doc:"The object this request belongs to, by type."`
	Summary         *SigningSummary   `json:"summary" doc:"What a signer is shown before signing: the company, the document, its buyer or seller, its total and what the signature does. Null for requests made before it was kept."`
	CreatedAt       time.Time         `json:"createdAt" example:"2026-05-04T09:15:00Z" doc:"When the request was made."`
	UpdatedAt       time.Time         `json:"updatedAt" example:"2026-05-04T09:15:01Z" doc:"When its state last changed."`
}

// SigningRefusal is why an agent declined.
type SigningRefusal struct {
	Reason  string `json:"reason" enum:"user_declined,policy,token_missing,pin_locked,payload_invalid,unattended" example:"user_declined" doc:"Why: user_declined (the person said no), policy (the agent's rules refused), token_missing, pin_locked, payload_invalid, unattended (nobody was there to ask)."`
	Message string `json:"message" example:"Износот не одговара на нарачката" doc:"The signer's own words, if any."`
}

func SigningRequestFrom(r dbq.SigningRequest) SigningRequest {
	out := SigningRequest{
		ID: r.ID, Object: "signing_request", CompanyID: r.CompanyID, Purpose: r.Purpose, State: r.State,
		ProtectedHeader: r.ProtectedHeader, Payload: r.Payload, SigningInput: r.ProtectedHeader + "." + r.Payload,
		ExpiresAt: r.ExpiresAt.UTC(), Links: map[string]string{r.LinkType: r.LinkID},
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), Summary: decodeSummary(r.Summary),
	}
	if r.ClaimedBy != "" {
		out.ClaimedBy = &r.ClaimedBy
	}
	if r.Jws != "" {
		out.JWS = &r.Jws
	}
	if r.RefusalReason != "" {
		out.Refusal = &SigningRefusal{Reason: r.RefusalReason, Message: r.RefusalMessage}
	}
	if r.ReplacedBy != "" {
		out.ReplacedBy = &r.ReplacedBy
	}
	return out
}

// ErrNoSigner is returned by RequestSignature when the company has no valid
// certificate registered.
var ErrNoSigner = denar.Errorf("signer_not_ready", "The company has no valid signing certificate; pair an agent and register one.")

// RequestSignature creates a pending signing request for companyID inside
// the caller's transaction: payload is the exact bytes to be signed (for an
// e-invoice, the UJP document JSON), link the object it belongs to. The
// protected header carries the company's current certificate in x5c. When
// the request is signed, the handler registered with HandleLink for
// link.Type runs in the same transaction that records the signature.
func RequestSignature(ctx context.Context, tx *store.Tx, companyID, purpose string, payload []byte, link SigningLink) (SigningRequest, error) {
	switch purpose {
	case PurposeDocument, PurposeDecision, PurposeQuery:
	default:
		return SigningRequest{}, fmt.Errorf("signing: unknown purpose %q", purpose)
	}
	if !slices.Contains(linkTypes, link.Type) {
		return SigningRequest{}, fmt.Errorf("signing: no handler for link type %q", link.Type)
	}
	company, err := tx.GetCompany(ctx, companyID)
	if err != nil {
		return SigningRequest{}, fmt.Errorf("signing: company %s: %w", companyID, err)
	}
	cert, err := tx.CurrentSigningCertificate(ctx, dbq.CurrentSigningCertificateParams{CompanyID: companyID, Now: tx.Now})
	if errors.Is(err, sql.ErrNoRows) {
		return SigningRequest{}, ErrNoSigner
	}
	if err != nil {
		return SigningRequest{}, fmt.Errorf("signing: certificate of %s: %w", companyID, err)
	}
	summary, err := summaryFor(ctx, tx, company, purpose, link, payload)
	if err != nil {
		return SigningRequest{}, err
	}
	return CreateRequest(ctx, tx, company.AccountID, cert, purpose, jwsverify.B64(payload), link, summary)
}

// CreateRequest creates a pending signing request for cert's company
// inside tx, with the protected header of cert; summary is what its
// signer is shown.
func CreateRequest(ctx context.Context, tx *store.Tx, account string, cert dbq.SigningCertificate, purpose, payloadB64 string, link SigningLink, summary SigningSummary) (SigningRequest, error) {
	header, err := protectedHeader(cert)
	if err != nil {
		return SigningRequest{}, err
	}
	return createRequest(ctx, tx, denar.NewID("sgr"), account, cert, header, purpose, payloadB64, link, summary)
}

// createRequest inserts a pending signing request with the given id and
// protected header (base64url).
func createRequest(ctx context.Context, tx *store.Tx, id, account string, cert dbq.SigningCertificate, header, purpose, payloadB64 string, link SigningLink, summary SigningSummary) (SigningRequest, error) {
	row, err := insertRequest(ctx, tx, id, account, cert, header, purpose, payloadB64, link, summary)
	if err != nil {
		return SigningRequest{}, err
	}
	return SigningRequestFrom(row), nil
}

// insertRequest is createRequest answering with the row.
func insertRequest(ctx context.Context, tx *store.Tx, id, account string, cert dbq.SigningCertificate, header, purpose, payloadB64 string, link SigningLink, summary SigningSummary) (dbq.SigningRequest, error) {
	// The row is the values written (the rest start at their defaults):
	// nothing is read back.
	sum := encodeSummary(summary)
	row := dbq.SigningRequest{ID: id, AccountID: account, CompanyID: cert.CompanyID, CertificateID: cert.ID,
		Purpose: purpose, State: StatePending, ProtectedHeader: header, Payload: payloadB64,
		LinkType: link.Type, LinkID: link.ID, ExpiresAt: tx.Stored(tx.Now.Add(SigningTTL)),
		CreatedAt: tx.Stored(tx.Now), UpdatedAt: tx.Stored(tx.Now), Summary: sum}
	err := tx.InsertSigningRequest(ctx, dbq.InsertSigningRequestParams{
		ID: id, AccountID: account, CompanyID: cert.CompanyID, CertificateID: cert.ID,
		Purpose: purpose, ProtectedHeader: header, Payload: payloadB64,
		LinkType: link.Type, LinkID: link.ID, ExpiresAt: tx.Now.Add(SigningTTL), CreatedAt: tx.Now, Summary: sum,
	})
	if err != nil {
		return row, fmt.Errorf("signing: create request: %w", err)
	}
	// The account's agents' sockets and long-polls look at once when this
	// commits (IssueEInvoiceRows notifies the same way on PostgreSQL).
	if err := tx.Notify(ctx, signingRequestsChannel, account); err != nil {
		return row, fmt.Errorf("signing: create request: %w", err)
	}
	return row, nil
}

// signingRequestsChannel is the store channel (store.Tx.Notify) on which
// the creation of an account's signing requests is announced, the key
// being the account id.
const signingRequestsChannel = "signing_requests"

// WatchSigningRequests wakes the returned channel after a transaction that
// created signing requests of account commits, here or in another process
// sharing the store (PostgreSQL); stop ends the watch. A wake-up may be
// lost or spurious: watchers keep looking every so often as well.
func (s *Service) WatchSigningRequests(account string) (wake <-chan struct{}, stop func()) {
	return s.db.Watch(signingRequestsChannel, account)
}

// protectedHeader is the base64url JWS protected header that carries cert.
func protectedHeader(cert dbq.SigningCertificate) (string, error) {
	parsed, err := ParseStoredCert(cert)
	if err != nil {
		return "", err
	}
	header, err := jwsverify.ProtectedHeader(parsed)
	if err != nil {
		return "", err
	}
	return jwsverify.B64(header), nil
}

// headerCache keeps the protected header of each certificate a service has
// issued requests with: parsing the X.509 certificate and encoding it is
// the same work for every document a company issues. A stored certificate
// never changes; the entry is still checked against the certificate's DER.
type headerCache struct {
	mu sync.Mutex
	m  map[string]cachedHeader // by certificate id
}

type cachedHeader struct{ der, header string }

func (c *headerCache) get(cert dbq.SigningCertificate) (string, error) {
	c.mu.Lock()
	h, ok := c.m[cert.ID]
	c.mu.Unlock()
	if ok && h.der == cert.Der {
		return h.header, nil
	}
	header, err := protectedHeader(cert)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= 1000 {
		c.m = map[string]cachedHeader{} // bounded: start over rather than grow
	}
	c.m[cert.ID] = cachedHeader{der: cert.Der, header: header}
	return header, nil
}

func ParseStoredCert(c dbq.SigningCertificate) (*x509.Certificate, error) {
	der, err := base64.StdEncoding.DecodeString(c.Der)
	if err != nil {
		return nil, fmt.Errorf("signing: stored certificate %s: %w", c.ID, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("signing: stored certificate %s: %w", c.ID, err)
	}
	return cert, nil
}

// GetSigningRequest returns a signing request by id; once its State is
// StateSigned, JWS holds the verified compact JWS.
func GetSigningRequest(ctx context.Context, q *dbq.Queries, id string) (SigningRequest, error) {
	r, err := q.GetSigningRequest(ctx, id)
	if err != nil {
		return SigningRequest{}, fmt.Errorf("signing: request %s: %w", id, err)
	}
	return SigningRequestFrom(r), nil
}

// AfterSigned is what a recorded signature sets off, in the transaction
// that records it, by what the request was for: an e-invoice moves to
// queued, a signed UJP read runs, a signed decision is sent to UJP. Returning an error rolls the signature
// back (the agent sees an error and may resubmit). Expired requests are
// replaced with a new request with the same link, so this sees the
// replacement's id, not the original's.
func (s *Service) AfterSigned(ctx context.Context, tx *store.Tx, r SigningRequest) error {
	h, ok := s.Link(r.linkType())
	if !ok {
		return fmt.Errorf("signing: request %s: no handler for link type %q", r.ID, r.linkType())
	}
	return h.Signed(ctx, tx, r)
}

// linkType is the type of the object the request belongs to.
func (r SigningRequest) linkType() string {
	for t := range r.Links {
		return t
	}
	return ""
}

// SignerReady reports whether companyID has a valid certificate whose agent
// was reachable within the last 90 seconds (an open WebSocket or long-poll
// refreshes it). The company code shows it as environments.*.signerReady.
func SignerReady(ctx context.Context, q *dbq.Queries, companyID string, now time.Time) (bool, error) {
	n, err := q.CompanySignerReady(ctx, dbq.CompanySignerReadyParams{
		CompanyID: companyID, Now: now, SeenAfter: sql.NullTime{Time: now.Add(-AgentOnlineTTL), Valid: true},
	})
	if err != nil {
		return false, fmt.Errorf("signing: signer of %s: %w", companyID, err)
	}
	return n > 0, nil
}
