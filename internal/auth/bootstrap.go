package auth

import (
	"context"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// Bootstrapped is what the first run created; Keys are shown once.
type Bootstrapped struct {
	Account     dbq.Account
	PayrollKey  string
	EInvoiceKey string
}

// Bootstrap creates a local sandbox account with one payroll key and one
// e-invoicing sandbox key, but only on a store that has never held an
// account and never been bootstrapped. It returns nil when it did nothing.
// Two processes starting together on one PostgreSQL database race for the
// same settings row, so only one of them bootstraps.
func Bootstrap(ctx context.Context, db *store.DB) (*Bootstrapped, error) {
	var out *Bootstrapped
	err := db.InTx(ctx, func(tx *store.Tx) error {
		n, err := tx.CountAccounts(ctx)
		if err != nil || n > 0 {
			return err
		}
		claimed, err := tx.ClaimSetting(ctx, dbq.ClaimSettingParams{Name: "bootstrap", Value: "done", UpdatedAt: tx.Now})
		if err != nil || claimed == 0 {
			return err
		}
		acct, err := CreateAccountTx(ctx, tx, "Local sandbox", "sandbox")
		if err != nil {
			return err
		}
		_, pk, err := CreateKeyTx(ctx, tx, KeyParams{AccountID: acct.ID, Service: ServicePayroll, Environment: EnvSandbox})
		if err != nil {
			return err
		}
		_, ek, err := CreateKeyTx(ctx, tx, KeyParams{AccountID: acct.ID, Service: ServiceEInvoice, Environment: EnvSandbox})
		if err != nil {
			return err
		}
		out = &Bootstrapped{Account: acct, PayrollKey: pk, EInvoiceKey: ek}
		return nil
	})
	return out, err
}
