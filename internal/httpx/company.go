package httpx

import (
	"context"
	"database/sql"
	"errors"

	"github.com/denar-mk/denar/internal/store/dbq"
)

func dbqListCompanyIDs(account string, limit int64) dbq.ListCompanyIDsParams {
	return dbq.ListCompanyIDsParams{AccountID: account, Lim: limit}
}

func (s *Service) companyInAccount(ctx context.Context, account, company string) (bool, error) {
	owner, err := s.opts.DB.Reader().GetCompanyAccount(ctx, company)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return owner == account, nil
}
