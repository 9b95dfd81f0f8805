package ujpsim

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Control drives a simulator through its /_sim admin API: the buyer's
// decisions, the deadline, outages and terminal errors of one seller. It is
// what the sandbox simulate endpoint of the e-invoicing API uses against a
// `denar ujp-sim` over the network (an embedded simulator is driven through
// the same methods of *Sim, without HTTP).
type Control struct {
	BaseURL string
	HTTP    *http.Client
	// Token is the simulator's control token (DENAR_UJP_SIM_TOKEN), sent
	// as a bearer token; without it the simulator answers 401.
	Token string
}

// ControlError is a refusal by the simulator, with UJP's code (E1016 for a
// document no longer in status 01, E4008 for an unknown EUID).
type ControlError struct {
	Status  int
	Code    string
	Message string
}

// UJPCode is the simulator's (UJP's) error code.
func (e *ControlError) UJPCode() string { return e.Code }

func (e *ControlError) Error() string {
	return fmt.Sprintf("ujp-sim: %d %s %s", e.Status, e.Code, e.Message)
}

// Decide records the buyer's acceptance or rejection of a document in 01.
func (c Control) Decide(ctx context.Context, euid string, accept bool, reasonCode, comment string) error {
	return c.post(ctx, "/_sim/documents/"+url.PathEscape(euid)+"/decision",
		map[string]any{"accept": accept, "rejectReasonCode": reasonCode, "comment": comment})
}

// AutoAccept moves a document in 01 to 04 as if its deadline passed.
func (c Control) AutoAccept(ctx context.Context, euid string) error {
	return c.post(ctx, "/_sim/documents/"+url.PathEscape(euid)+"/auto-accept", nil)
}

// SetSellerOutage starts or ends an outage seen by one seller's calls.
func (c Control) SetSellerOutage(ctx context.Context, edb string, on bool) error {
	return c.post(ctx, "/_sim/sellers/"+url.PathEscape(edb)+"/outage", map[string]bool{"on": on})
}

// RejectNextSend makes the seller's next send fail with UJP code code.
func (c Control) RejectNextSend(ctx context.Context, edb, code, message string) error {
	return c.post(ctx, "/_sim/sellers/"+url.PathEscape(edb)+"/reject-next",
		ForcedRejection{Code: code, Message: message, Count: 1})
}

// SendToBuyer drops an invoice from the fictitious supplier into buyerTin's
// inbox and returns its EUID (docID "" for a new one).
func (c Control) SendToBuyer(ctx context.Context, buyerTin, docID, transactionDate, issueDate string) (string, error) {
	var d Document
	err := c.postFor(ctx, "/_sim/buyers/"+url.PathEscape(buyerTin)+"/incoming",
		map[string]string{"transactionDate": transactionDate, "issueDate": issueDate, "docId": docID}, &d)
	return d.EUID, err
}

// VoidBySeller stornos a document as its seller and returns the storno's
// EUID.
func (c Control) VoidBySeller(ctx context.Context, euid, reason string) (string, error) {
	var d Document
	err := c.postFor(ctx, "/_sim/documents/"+url.PathEscape(euid)+"/seller-storno", map[string]string{"reason": reason}, &d)
	return d.EUID, err
}

// IssuedInPortal stores an invoice of sellerTin as if issued in UJP's
// portal (buyerTin, docID and issueDate optional) and returns the stored
// record.
func (c Control) IssuedInPortal(ctx context.Context, sellerTin, buyerTin, docID, issueDate string) (Document, error) {
	var d Document
	err := c.postFor(ctx, "/_sim/sellers/"+url.PathEscape(sellerTin)+"/portal-invoice",
		map[string]string{"buyerTin": buyerTin, "docId": docID, "issueDate": issueDate}, &d)
	return d, err
}

// LoseDocument has the simulator lose a stored document (delete it).
func (c Control) LoseDocument(ctx context.Context, euid string) error {
	return c.do(ctx, http.MethodDelete, "/_sim/documents/"+url.PathEscape(euid), nil, nil)
}

// AddUser registers a user (an EUJP id) at the simulator.
func (c Control) AddUser(ctx context.Context, eujpID string) error {
	return c.post(ctx, "/_sim/users", map[string]string{"eujpId": eujpID})
}

// RegisterCertificate registers a signing certificate (DER) of a user for a
// company, adding the user if unknown, and returns the serial number as
// X-SERIAL-NUMBER must carry it.
func (c Control) RegisterCertificate(ctx context.Context, eujpID, edb string, der []byte) (string, error) {
	var out struct {
		SerialNumber string `json:"serialNumber"`
	}
	err := c.postFor(ctx, "/_sim/certificates", map[string]string{"eujpId": eujpID, "edb": edb,
		"certificateDer": base64.StdEncoding.EncodeToString(der)}, &out)
	return out.SerialNumber, err
}

// Grant gives a user portal privileges (DP, RD, DA) for a company.
func (c Control) Grant(ctx context.Context, eujpID, edb string, privileges ...string) error {
	return c.post(ctx, "/_sim/privileges/grant", map[string]any{"eujpId": eujpID, "edb": edb, "privileges": privileges})
}

// Revoke takes portal privileges away.
func (c Control) Revoke(ctx context.Context, eujpID, edb string, privileges ...string) error {
	return c.post(ctx, "/_sim/privileges/revoke", map[string]any{"eujpId": eujpID, "edb": edb, "privileges": privileges})
}

// RateLimited says how many calls of each user the simulator answered
// E4007.
func (c Control) RateLimited(ctx context.Context) (map[string]int64, error) {
	var out struct {
		Users map[string]int64 `json:"users"`
	}
	err := c.do(ctx, http.MethodGet, "/_sim/rate-limited", nil, &out)
	return out.Users, err
}

func (c Control) post(ctx context.Context, path string, body any) error {
	return c.postFor(ctx, path, body, nil)
}

func (c Control) postFor(ctx context.Context, path string, body, out any) error {
	return c.do(ctx, http.MethodPost, path, body, out)
}

func (c Control) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader = http.NoBody
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("ujp-sim: %s: %w", path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 == 2 {
		if out != nil {
			if err := json.Unmarshal(raw, out); err != nil {
				return fmt.Errorf("ujp-sim: %s: decode answer: %w", path, err)
			}
		}
		return nil
	}
	var env struct {
		ErrorStatus struct {
			ErrorCode    string `json:"errorCode"`
			ErrorMessage string `json:"errorMessage"`
		} `json:"errorStatus"`
	}
	_ = json.Unmarshal(raw, &env)
	return &ControlError{Status: resp.StatusCode, Code: env.ErrorStatus.ErrorCode, Message: env.ErrorStatus.ErrorMessage}
}
