package companies

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/template"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/mail"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/usecase"
)

// mandatePrefix marks mandate tokens; the rest is 43 base62 characters
// (about 256 bits), so the link itself is the credential.
const mandatePrefix = "mdt_"

// MandatePath is the path of a mandate page.
func MandatePath(token string) string { return "/mandates/" + token }

// sendMandate creates a mandate token for a new company and queues the
// mail, in the company's transaction.
func (s *Service) sendMandate(ctx context.Context, tx *store.Tx, c dbq.Company, acct dbq.Account) error {
	ttl := s.cfg.MandateTTL
	tok := mandatePrefix + auth.RandomToken(43)
	if err := tx.CreateMandate(ctx, dbq.CreateMandateParams{
		TokenHash: auth.Hash(tok), CompanyID: c.ID, AccountID: acct.ID, CreatedAt: tx.Now, ExpiresAt: tx.Now.Add(ttl),
	}); err != nil {
		return fmt.Errorf("create mandate: %w", err)
	}
	link := strings.TrimRight(s.cfg.PublicURL, "/") + MandatePath(tok)
	var b strings.Builder
	if err := mandateMail.Execute(&b, map[string]any{
		"Rep": c.RepresentativeName, "Company": c.Name, "Tax": c.TaxNumber, "Account": acct.Name,
		"Link": link, "Days": int(ttl / (24 * time.Hour)),
	}); err != nil {
		return fmt.Errorf("render mandate mail: %w", err)
	}
	// The link is the mandate's credential: the outbox keeps it sealed.
	if _, err := mail.QueueSealed(ctx, tx, s.secrets, mail.Message{
		To: c.RepresentativeEmail, Subject: "Овластување за е-фактури: " + c.Name + " (e-invoicing mandate)", Body: b.String(), Link: link,
	}); err != nil {
		return fmt.Errorf("queue mandate mail: %w", err)
	}
	return nil
}

var mandateMail = template.Must(template.New("mail").Parse(`Почитуван/а {{.Rep}},

{{.Account}} бара овластување да издава и прима е-фактури преку УЈП (е-Фактура) во име на {{.Company}} (ЕДБ {{.Tax}}).

Прегледајте го барањето и прифатете го на следнава врска (важи {{.Days}} дена, може да се искористи еднаш):

{{.Link}}

Ако не го очекувавте ова барање, не правете ништо: без ваше прифаќање овластувањето не важи.

English: {{.Account}} asks for your mandate to e-invoice through UJP on behalf of {{.Company}}; open the link above to review and accept it.

-- denar
`))

// Mandate states a mandate page shows.
const (
	MandateOpen     = "open"
	MandateAccepted = "accepted"
	MandateUsed     = "used"
	MandateExpired  = "expired"
	MandateUnknown  = "unknown"
)

// Mandate is what a mandate page shows about its company.
type Mandate struct {
	State       string
	Company     string
	TaxNumber   string
	VATNumber   string
	Address     string
	Account     string
	ExpiresAt   time.Time
	Environment string
}

// Mandate returns what the mandate page of token shows. The token is the
// whole authority: there is no principal.
func (s *Service) Mandate(ctx context.Context, token string) (Mandate, error) {
	v, _, err := s.loadMandate(ctx, s.db.Reader(), token, s.db.Now())
	return v, err
}

// AcceptMandate accepts the mandate of token: the company becomes active.
// A used or expired link changes nothing; the answer says which.
func (s *Service) AcceptMandate(ctx context.Context, token string) (Mandate, error) {
	var v Mandate
	err := s.db.InTx(context.WithoutCancel(ctx), func(tx *store.Tx) error {
		var m dbq.Mandate
		var err error
		v, m, err = s.loadMandate(ctx, tx.Queries, token, tx.Now)
		if err != nil || v.State != MandateOpen {
			return err
		}
		n, err := tx.UseMandate(ctx, dbq.UseMandateParams{TokenHash: m.TokenHash, UsedAt: sql.NullTime{Time: tx.Now, Valid: true}})
		if err != nil {
			return fmt.Errorf("use mandate: %w", err)
		}
		if n == 0 {
			v.State = MandateUsed
			return nil
		}
		if err := tx.SetCompanyStatus(ctx, dbq.SetCompanyStatusParams{ID: m.CompanyID, Status: "active"}); err != nil {
			return fmt.Errorf("activate company: %w", err)
		}
		v.State = MandateAccepted
		return nil
	})
	return v, err
}

func (s *Service) loadMandate(ctx context.Context, q *dbq.Queries, tok string, now time.Time) (Mandate, dbq.Mandate, error) {
	if !strings.HasPrefix(tok, mandatePrefix) || len(tok) > 100 {
		return Mandate{State: MandateUnknown}, dbq.Mandate{}, nil
	}
	m, err := q.GetMandate(ctx, auth.Hash(tok))
	if errors.Is(err, sql.ErrNoRows) {
		return Mandate{State: MandateUnknown}, dbq.Mandate{}, nil
	}
	if err != nil {
		return Mandate{}, m, fmt.Errorf("load mandate: %w", err)
	}
	c, err := q.GetAccountCompany(ctx, dbq.GetAccountCompanyParams{ID: m.CompanyID, AccountID: m.AccountID})
	if err != nil {
		return Mandate{}, m, fmt.Errorf("load company: %w", err)
	}
	acct, err := q.GetAccount(ctx, m.AccountID)
	if err != nil {
		return Mandate{}, m, fmt.Errorf("load account: %w", err)
	}
	v := Mandate{State: MandateOpen, Company: c.Name, TaxNumber: c.TaxNumber, VATNumber: c.VatNumber, Account: acct.Name,
		ExpiresAt: m.ExpiresAt, Environment: c.Environment}
	var a einvoicing.Address
	if err := json.Unmarshal([]byte(c.Address), &a); err == nil {
		v.Address = strings.Trim(strings.TrimSpace(strings.Join([]string{a.Street, a.Number + ",", a.Zip, a.City}, " ")), ", ")
	}
	switch {
	case m.UsedAt.Valid:
		v.State = MandateUsed
	case !now.Before(m.ExpiresAt):
		v.State = MandateExpired
	}
	return v, m, nil
}

// SandboxMandateLink is the answer of POST
// /v1/sandbox/companies/{id}/mandate-link.
type SandboxMandateLink struct {
	Object    string    `json:"object" enum:"sandbox_mandate_link" example:"sandbox_mandate_link" doc:"Always sandbox_mandate_link."`
	CompanyID string    `json:"companyId" example:"cmp_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The company (cmp_…) the mandate is for."`
	URL       string    `json:"url" example:"http://127.0.0.1:8081/mandates/mdt_3Fq8…" doc:"The mandate page, as the representative's e-mail carries it: open it in a browser, or POST to it (an empty form) to accept the mandate as the representative would; the company becomes active. Single use, and shown once: an Idempotency-Key replay of this answer is 409 secret_already_shown (ask for another link)."`
	ExpiresAt time.Time `json:"expiresAt" example:"2026-05-11T09:00:00Z" doc:"When the link stops working (the mandate mail's lifetime)."`
}

// ECodeMandateAccepted answers a mandate link asked for a company that is
// already active.
const ECodeMandateAccepted = "mandate_already_accepted"

// SandboxMandateLink gives the caller a fresh mandate link of a sandbox
// company that waits for its mandate, as the representative's mail would
// carry it, so a sandbox onboarding can be finished by a program (the
// fictitious representatives of the sandbox read no mail). Production
// mandates reach their representative by mail only (sandbox_only).
func (s *Service) SandboxMandateLink(ctx context.Context, c einvoicing.Caller, companyID string) (SandboxMandateLink, error) {
	co, err := einvoicing.CompanyRow(ctx, s.db.Reader(), c.Principal, companyID)
	if err != nil {
		return SandboxMandateLink{}, err
	}
	if co.Environment != auth.EnvSandbox {
		return SandboxMandateLink{}, denar.Errorf("sandbox_only", "A mandate link is given out only for sandbox companies; in production the representative receives it by e-mail.")
	}
	tok := mandatePrefix + auth.RandomToken(43)
	return usecase.WriteShownOnce(ctx, s.db, c, func(tx *store.Tx) (SandboxMandateLink, error) {
		co, err := einvoicing.CompanyRow(ctx, tx.Queries, c.Principal, companyID)
		if err != nil {
			return SandboxMandateLink{}, err
		}
		if co.Status == "active" {
			return SandboxMandateLink{}, denar.Errorf(ECodeMandateAccepted, "Company %s is active: its mandate is already accepted.", companyID)
		}
		exp := tx.Now.Add(s.cfg.MandateTTL)
		if err := tx.CreateMandate(ctx, dbq.CreateMandateParams{TokenHash: auth.Hash(tok), CompanyID: co.ID, AccountID: co.AccountID,
			CreatedAt: tx.Now, ExpiresAt: exp}); err != nil {
			return SandboxMandateLink{}, fmt.Errorf("create mandate: %w", err)
		}
		return SandboxMandateLink{Object: "sandbox_mandate_link", CompanyID: co.ID,
			URL: strings.TrimRight(s.cfg.PublicURL, "/") + MandatePath(tok), ExpiresAt: exp.UTC()}, nil
	}, func(SandboxMandateLink) *denar.Error {
		return usecase.ShownOnce("sandbox_mandate_link", companyID, "The mandate link was in the first answer to this request and is not kept; ask for another one.")
	})
}
