package pipeline

// A company's problems with UJP as the calls to UJP find and clear them
// (einvoicing.CompanyProblem): UJP refusing the caller never fails a
// document; the company carries the problem until a call of the same kind
// succeeds.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/ujp"
)

// Codes of a company's problems.
const (
	// problemPrivilegeMissing: the user lacks a portal privilege for the
	// company (UJP's E1011): DP for PDFs, RD for document JSON, DA for
	// archives.
	problemPrivilegeMissing = "ujp_privilege_missing"
	// ProblemAccessMissing: UJP does not know the user or the certificate,
	// or the user may not act for the company, or an identity header's
	// value is refused.
	ProblemAccessMissing = "ujp_access_missing"
)

// problemOf is the company problem of UJP's access refusal r.
func problemOf(r *ujp.RejectedError, now time.Time) einvoicing.CompanyProblem {
	p := einvoicing.CompanyProblem{Code: ProblemAccessMissing, UJPCode: r.Code, Since: now.UTC(), LastSeenAt: now.UTC()}
	switch {
	case r.Code == ujp.CodePrivilegeNotFound && r.Privilege != "":
		p.Code, p.Privilege = problemPrivilegeMissing, r.Privilege
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
	list := einvoicing.CompanyProblems(raw)
	p := problemOf(r, tx.Now)
	i := slices.IndexFunc(list, func(q einvoicing.CompanyProblem) bool { return q.Code == p.Code && q.Privilege == p.Privilege })
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
func (p *Service) AccessProblem(ctx context.Context, companyID string, err error) (bool, error) {
	r := ujp.AccessProblem(err)
	if r == nil {
		return false, nil
	}
	p.log.Warn("UJP refused access; the company carries the problem", "company", companyID, "ujpCode", r.Code, "privilege", r.Privilege, "op", r.Op)
	return true, p.db.InTx(ctx, func(tx *store.Tx) error { return recordAccessProblem(ctx, tx, companyID, r) })
}

// AccessOK clears what a call UJP accepted proves: any access problem, and
// the missing privilege the call needs (privilege; "" for none).
func (p *Service) AccessOK(ctx context.Context, companyID, privilege string) error {
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
	list := einvoicing.CompanyProblems(raw)
	kept := slices.DeleteFunc(slices.Clone(list), func(q einvoicing.CompanyProblem) bool {
		return q.Code == ProblemAccessMissing || (q.Code == problemPrivilegeMissing && q.Privilege == privilege && privilege != "")
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
func PrivilegeMissing(co dbq.Company, privilege string) (einvoicing.CompanyProblem, bool) {
	for _, q := range einvoicing.CompanyProblems(co.UjpProblems) {
		if q.Code == problemPrivilegeMissing && q.Privilege == privilege {
			return q, true
		}
	}
	return einvoicing.CompanyProblem{}, false
}
