package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/denar-mk/denar/money"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// Plan is a row of the plans table: what an account on it may do and what
// it pays. Plans are data: the migration seeds sandbox, starter, business
// and enterprise, and `denar admin plan set` changes or adds plans.
type Plan struct {
	Code string `json:"code"`
	// IncludedDocuments is the monthly allowance of production documents
	// (sent plus received) the plan's price covers.
	IncludedDocuments int `json:"includedDocuments"`
	// ExtraDocumentPrice is the price of each production document beyond
	// the allowance, a decimal string in Currency.
	ExtraDocumentPrice string `json:"extraDocumentPrice"`
	Currency           string `json:"currency"`
	// Production says whether production credentials of the account work
	// at all; without it every production operation is 403
	// production_not_enabled.
	Production bool `json:"production"`
}

// PlanFrom converts a stored plan.
func PlanFrom(r dbq.Plan) Plan {
	return Plan{Code: r.Code, IncludedDocuments: int(r.IncludedDocuments), ExtraDocumentPrice: r.ExtraDocumentPrice,
		Currency: r.Currency, Production: r.Production}
}

var (
	planCode     = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,39}$`)
	currencyCode = regexp.MustCompile(`^[A-Z]{3}$`)
)

// Plans lists the plans, smallest allowance first.
func (s *Store) Plans(ctx context.Context) ([]Plan, error) {
	rows, err := s.DB.Reader().ListPlans(ctx)
	if err != nil {
		return nil, fmt.Errorf("list plans: %w", err)
	}
	out := make([]Plan, 0, len(rows))
	for _, r := range rows {
		out = append(out, PlanFrom(r))
	}
	return out, nil
}

// PutPlan creates or changes a plan. Accounts on it follow a change of
// its production flag in the same transaction.
func (s *Store) PutPlan(ctx context.Context, p Plan) (Plan, error) {
	if !planCode.MatchString(p.Code) {
		return Plan{}, fmt.Errorf("plan code %q: lower-case letters, digits, - and _, starting with a letter", p.Code)
	}
	if p.IncludedDocuments < 0 || p.IncludedDocuments > 1<<30 {
		return Plan{}, fmt.Errorf("included documents %d out of range", p.IncludedDocuments)
	}
	price, err := money.Parse(strings.TrimSpace(p.ExtraDocumentPrice))
	if err != nil || price.IsNegative() || price.Scale() > 4 {
		return Plan{}, fmt.Errorf("extra document price %q: a non-negative decimal amount with at most 4 decimals", p.ExtraDocumentPrice)
	}
	p.ExtraDocumentPrice = price.StringFixed(max(2, price.Scale()))
	if p.Currency == "" {
		p.Currency = "MKD"
	}
	if !currencyCode.MatchString(p.Currency) {
		return Plan{}, fmt.Errorf("currency %q: an ISO 4217 code", p.Currency)
	}
	err = s.DB.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.PutPlan(ctx, dbq.PutPlanParams{Code: p.Code, IncludedDocuments: int32(p.IncludedDocuments),
			ExtraDocumentPrice: p.ExtraDocumentPrice, Currency: p.Currency, Production: p.Production}); err != nil {
			return err
		}
		return tx.SyncPlanAccounts(ctx, dbq.SyncPlanAccountsParams{Production: p.Production, Code: p.Code})
	})
	if err != nil {
		return Plan{}, fmt.Errorf("put plan %s: %w", p.Code, err)
	}
	return p, nil
}

// SetAccountPlan moves an account to plan. It takes effect on the
// account's next request: authentication reads the plan every time.
func (s *Store) SetAccountPlan(ctx context.Context, accountID, plan string) (Plan, error) {
	var out Plan
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		p, err := planTx(ctx, tx, plan)
		if err != nil {
			return err
		}
		n, err := tx.SetAccountPlan(ctx, dbq.SetAccountPlanParams{Plan: p.Code, ProductionEnabled: p.Production, ID: accountID})
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("no account %q", accountID)
		}
		out = PlanFrom(p)
		return nil
	})
	return out, err
}

func planTx(ctx context.Context, tx *store.Tx, code string) (dbq.Plan, error) {
	p, err := tx.GetPlan(ctx, code)
	if errors.Is(err, sql.ErrNoRows) {
		known := []string{}
		if rows, err := tx.ListPlans(ctx); err == nil {
			for _, r := range rows {
				known = append(known, r.Code)
			}
		}
		return dbq.Plan{}, fmt.Errorf("unknown plan %q (known: %s)", code, strings.Join(known, ", "))
	}
	if err != nil {
		return dbq.Plan{}, fmt.Errorf("plan %s: %w", code, err)
	}
	return p, nil
}
