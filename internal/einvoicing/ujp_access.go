package einvoicing

// A company's problems with UJP that are not a document's: UJP refuses the
// caller — its user (E1010), a portal privilege (E1011), the certificate
// (E1012), the right to act for the company (E1013), or an identity header's
// value (E4021–E4023) — which only the company or the operator can set right
// in UJP's portal or here. Such a refusal never fails a document: the
// document waits (queued, retried with backoff) or the read is left for
// later, and the company carries the problem (Company.problems) until a call
// of the same kind succeeds.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/ujp"
)

// Codes of a company's problems.
const (
	// ProblemPrivilegeMissing: the user lacks a portal privilege for the
	// company (UJP's E1011): DP for PDFs, RD for document JSON, DA for
	// archives.
	ProblemPrivilegeMissing = "ujp_privilege_missing"
	// ProblemAccessMissing: UJP does not know the user or the certificate,
	// or the user may not act for the company, or an identity header's
	// value is refused.
	ProblemAccessMissing = "ujp_access_missing"
)

// CompanyProblem is one of a company's problems with UJP.
type CompanyProblem struct {
	Code       string    `json:"code" enum:"ujp_access_missing,ujp_privilege_missing" example:"ujp_privilege_missing" doc:"ujp_access_missing: UJP refuses the company's signer access (its user is not registered or not authorized for the company); ujp_privilege_missing: a portal privilege is missing (see privilege)."`
	Privilege  string    `json:"privilege,omitempty" enum:"DP,RD,DA" doc:"The portal privilege missing (ujp_privilege_missing): DP for UJP's PDFs, RD for document JSON (incoming documents, looking up a send whose answer was lost), DA for archives."`
	UJPCode    string    `json:"ujpCode" doc:"UJP's error code, as UJP wrote it (E1010, E1011, E1012, E1013, E4021, E4022, E4023)."`
	Message    string    `json:"message" example:"Корисникот нема привилегија за преземање PDF документи" doc:"UJP's refusal, in its words."`
	Since      time.Time `json:"since" doc:"When UJP first refused."`
	LastSeenAt time.Time `json:"lastSeenAt" doc:"When UJP last refused."`
}

func CompanyProblems(raw string) []CompanyProblem {
	out := []CompanyProblem{}
	if raw != "" {
		_ = json.Unmarshal([]byte(raw), &out)
	}
	return out
}

// problemOf is the company problem of UJP's access refusal r.
func problemOf(r *ujp.RejectedError, now time.Time) CompanyProblem {
	p := CompanyProblem{Code: ProblemAccessMissing, UJPCode: r.Code, Since: now.UTC(), LastSeenAt: now.UTC()}
	switch {
	case r.Code == ujp.CodePrivilegeNotFound && r.Privilege != "":
		p.Code, p.Privilege = ProblemPrivilegeMissing, r.Privilege
		p.Message = fmt.Sprintf("UJP refused %s: the signer's user lacks the %s privilege for this company in UJP's portal (%s %s).",
			r.Op, r.Privilege, r.Code, r.Message)
	default:
		p.Message = fmt.Sprintf("UJP refused %s: %s %s. Check the signer's EUJP id, its certificate and its access to this company in UJP's portal.",
			r.Op, r.Code, r.Message)
	}
	return p
}

// recordAccessProblem records UJP's access refusal r on company id in tx.
func recordAccessProblem(ctx context.Context, tx *store.Tx, id string, r *ujp.RejectedError) error {
	raw, err := tx.GetCompanyUJPProblems(ctx, id)
	if err != nil {
		return fmt.Errorf("problems of %s: %w", id, err)
	}
	list := CompanyProblems(raw)
	p := problemOf(r, tx.Now)
	i := slices.IndexFunc(list, func(q CompanyProblem) bool { return q.Code == p.Code && q.Privilege == p.Privilege })
	if i >= 0 {
		p.Since = list[i].Since
		list[i] = p
	} else {
		list = append(list, p)
	}
	b, err := json.Marshal(list)
	if err != nil {
		return err
	}
	return tx.SetCompanyUJPProblems(ctx, dbq.SetCompanyUJPProblemsParams{ID: id, Problems: string(b)})
}

// AccessProblem records UJP's access refusal in err, if it is one, in its
// own transaction, and reports whether it was.
func (p *Pipeline) AccessProblem(ctx context.Context, companyID string, err error) (bool, error) {
	r := ujp.AccessProblem(err)
	if r == nil {
		return false, nil
	}
	p.log.Warn("UJP refused access; the company carries the problem", "company", companyID, "ujpCode", r.Code, "privilege", r.Privilege, "op", r.Op)
	return true, p.db.InTx(ctx, func(tx *store.Tx) error { return recordAccessProblem(ctx, tx, companyID, r) })
}

// AccessOK clears what a call UJP accepted proves: any access problem, and
// the missing privilege the call needs (privilege; "" for none).
func (p *Pipeline) AccessOK(ctx context.Context, companyID, privilege string) error {
	raw, err := p.db.Reader().GetCompanyUJPProblems(ctx, companyID)
	if err != nil || raw == "[]" || raw == "" {
		return err
	}
	return p.db.InTx(ctx, func(tx *store.Tx) error { return clearAccessProblems(ctx, tx, companyID, privilege) })
}

func clearAccessProblems(ctx context.Context, tx *store.Tx, id, privilege string) error {
	raw, err := tx.GetCompanyUJPProblems(ctx, id)
	if err != nil {
		return err
	}
	list := CompanyProblems(raw)
	kept := slices.DeleteFunc(slices.Clone(list), func(q CompanyProblem) bool {
		return q.Code == ProblemAccessMissing || (q.Code == ProblemPrivilegeMissing && q.Privilege == privilege && privilege != "")
	})
	if len(kept) == len(list) {
		return nil
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return err
	}
	return tx.SetCompanyUJPProblems(ctx, dbq.SetCompanyUJPProblemsParams{ID: id, Problems: string(b)})
}

// PrivilegeMissing returns the company's problem of the missing privilege,
// if it carries one.
func PrivilegeMissing(co dbq.Company, privilege string) (CompanyProblem, bool) {
	for _, q := range CompanyProblems(co.UjpProblems) {
		if q.Code == ProblemPrivilegeMissing && q.Privilege == privilege {
			return q, true
		}
	}
	return CompanyProblem{}, false
}
