package httpx

import (
	"context"

	"github.com/denar-mk/denar/internal/auth"
)

// Companies answers the X-Company-Id questions of one service: which of the
// account's companies the service acts for. The payroll service counts the
// account's employer companies, the e-invoicing service its onboarded
// client companies; both are store-backed and supplied by cmd/denar.
type Companies interface {
	// CompanyEnvironment returns the environment of company id when it is
	// one of the service's companies in p's account; ok is false otherwise.
	CompanyEnvironment(ctx context.Context, p *auth.Principal, id string) (env string, ok bool, err error)
	// CompanyIDs returns up to limit ids of the service's companies in p's
	// account and environment.
	CompanyIDs(ctx context.Context, p *auth.Principal, limit int) ([]string, error)
}
