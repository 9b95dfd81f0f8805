package auth

// An account's people managed from the dashboard: an owner changes a
// user's role or removes a user; everyone changes their own password. Each
// change is one transaction with its audit row.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// Errors of user management, shown on the dashboard's pages.
var (
	// ErrLastOwner refuses a change that would leave the account without an
	// owner: demoting or removing its only owner.
	ErrLastOwner = errors.New("the account must keep at least one owner")
	// ErrSelf refuses removing oneself (another owner may).
	ErrSelf = errors.New("you cannot remove yourself")
	// ErrWrongPassword refuses a password change whose current password is
	// wrong.
	ErrWrongPassword = errors.New("the current password is wrong")
)

// accountUser loads a user of the principal's account for a change, after
// taking the account's user lock; ErrUserNotFound for another account's.
func accountUser(ctx context.Context, tx *store.Tx, p *Principal, id string) (dbq.User, error) {
	if _, err := tx.LockAccountUsers(ctx, p.AccountID); err != nil {
		return dbq.User{}, fmt.Errorf("lock users of %s: %w", p.AccountID, err)
	}
	row, err := tx.GetUser(ctx, id)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && row.AccountID != p.AccountID) {
		return dbq.User{}, ErrUserNotFound
	}
	if err != nil {
		return dbq.User{}, fmt.Errorf("user %s: %w", id, err)
	}
	return row, nil
}

// keepsAnOwner returns ErrLastOwner when row is the account's only owner.
func keepsAnOwner(ctx context.Context, tx *store.Tx, row dbq.User) error {
	if row.Role != RoleOwner {
		return nil
	}
	n, err := tx.CountAccountOwners(ctx, row.AccountID)
	if err != nil {
		return fmt.Errorf("count owners: %w", err)
	}
	if n <= 1 {
		return ErrLastOwner
	}
	return nil
}

// SetUserRole gives a user of the principal's account the role role,
// audited; ErrLastOwner when it would leave the account without an owner.
// The user's sessions take the new role at their next request.
func (u *Users) SetUserRole(ctx context.Context, p *Principal, id, role string, a *AuditEntry) (User, error) {
	if !slices.Contains(Roles, role) {
		var fe denar.FieldErrors
		fe.Add("role", "%q is not a role (owner, staff or viewer)", role)
		return User{}, fe.Err()
	}
	var out User
	err := u.DB.InTx(ctx, func(tx *store.Tx) error {
		row, err := accountUser(ctx, tx, p, id)
		if err != nil {
			return err
		}
		if role != RoleOwner {
			if err := keepsAnOwner(ctx, tx, row); err != nil {
				return err
			}
		}
		if _, err := tx.SetUserRole(ctx, dbq.SetUserRoleParams{ID: id, AccountID: p.AccountID, Role: role}); err != nil {
			return fmt.Errorf("set role of %s: %w", id, err)
		}
		row.Role = role
		out = userOf(row)
		if a != nil {
			a.Target, a.Detail = id, row.Email+" "+role
		}
		return RecordAuditTx(ctx, tx, p, a)
	})
	return out, err
}

// RemoveUser deletes a user of the principal's account and ends their
// sessions, audited (the audit log keeps their address). Nobody removes
// themselves (ErrSelf), and the account's last owner stays (ErrLastOwner).
func (u *Users) RemoveUser(ctx context.Context, p *Principal, id string, a *AuditEntry) error {
	if id == p.CredentialID {
		return ErrSelf
	}
	return u.DB.InTx(ctx, func(tx *store.Tx) error {
		row, err := accountUser(ctx, tx, p, id)
		if err != nil {
			return err
		}
		if err := keepsAnOwner(ctx, tx, row); err != nil {
			return err
		}
		if _, err := tx.DeleteUserSessionsExcept(ctx, dbq.DeleteUserSessionsExceptParams{UserID: id, Keep: ""}); err != nil {
			return fmt.Errorf("end sessions of %s: %w", id, err)
		}
		if _, err := tx.DeleteUser(ctx, dbq.DeleteUserParams{ID: id, AccountID: p.AccountID}); err != nil {
			return fmt.Errorf("remove user %s: %w", id, err)
		}
		if a != nil {
			a.Target, a.Detail = id, row.Email
		}
		return RecordAuditTx(ctx, tx, p, a)
	})
}

// ChangePassword sets the signed-in user's password after checking the
// current one, and ends every other session of the user (session s, the
// one asking, stays), audited. A wrong current password counts against the
// sign-in throttle (ErrWrongPassword, then ErrThrottled), so a session
// left open cannot be used to guess it; a new password shorter than
// MinPasswordLen is a field error of "new".
func (u *Users) ChangePassword(ctx context.Context, s Session, addr, current, next string, a *AuditEntry) error {
	if n := len([]rune(next)); n < MinPasswordLen {
		var fe denar.FieldErrors
		fe.Add("new", "has %d characters; at least %d are required", n, MinPasswordLen)
		return fe.Err()
	}
	email := s.User.Email
	if t, err := u.throttled(ctx, u.DB.Reader(), u.DB.Now(), email, addr); err != nil {
		return err
	} else if t {
		return ErrThrottled
	}
	row, err := u.DB.Reader().GetUser(ctx, s.User.ID)
	if err != nil {
		return fmt.Errorf("user %s: %w", s.User.ID, err)
	}
	ok, err := CheckPassword(row.PasswordHash, current)
	if err != nil {
		return fmt.Errorf("change password of %s: %w", email, err)
	}
	if !ok {
		if err := u.fail(ctx, email, addr); err != nil {
			return err
		}
		return ErrWrongPassword
	}
	hash := HashPassword(next)
	p := s.Principal()
	return u.DB.InTx(ctx, func(tx *store.Tx) error {
		// The hash read above must still be the stored one: two changes at
		// once with the same current password do not both win.
		n, err := tx.SetUserPasswordIf(ctx, dbq.SetUserPasswordIfParams{ID: row.ID, PasswordHash: hash, Previous: row.PasswordHash})
		if err != nil {
			return fmt.Errorf("set password of %s: %w", email, err)
		}
		if n == 0 {
			return ErrWrongPassword
		}
		if _, err := tx.DeleteUserSessionsExcept(ctx, dbq.DeleteUserSessionsExceptParams{UserID: row.ID, Keep: Hash(s.Token)}); err != nil {
			return fmt.Errorf("end other sessions of %s: %w", email, err)
		}
		if a != nil {
			a.Target = row.ID
		}
		return RecordAuditTx(ctx, tx, p, a)
	})
}
