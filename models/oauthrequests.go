package models

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// The OAuth provider's sign-in requests store (api/oauth/authrequests.go
// adapts them to the provider library).

// OAuthAuthRequest is a stored authorization request: its client and
// PKCE challenge, then who signed in and the hash of the code issued.
type OAuthAuthRequest struct {
	bun.BaseModel `bun:"table:oauth_auth_requests"`

	ID                  uuid.UUID  `bun:"id,pk,type:uuid"`
	ClientID            string     `bun:"client_id,notnull"`
	RedirectURI         string     `bun:"redirect_uri,notnull"`
	State               string     `bun:"state,notnull"`
	Nonce               string     `bun:"nonce,notnull"`
	Scopes              []string   `bun:"scopes,array,notnull"`
	ResponseType        string     `bun:"response_type,notnull"`
	CodeChallenge       string     `bun:"code_challenge,notnull"`
	CodeChallengeMethod string     `bun:"code_challenge_method,notnull"`
	UserID              *uuid.UUID `bun:"user_id,type:uuid"`
	SiteID              *uuid.UUID `bun:"site_id,type:uuid"`
	AuthTime            *time.Time `bun:"auth_time"`
	CodeHash            *string    `bun:"code_hash"`
	BrowserHash         string     `bun:"browser_hash,notnull"` // hashToken of the binding cookie's nonce
	CreatedAt           time.Time  `bun:"created_at,notnull"`
	ExpiresAt           time.Time  `bun:"expires_at,notnull"`
}

// SaveAuthRequest stores a new request.
func SaveAuthRequest(ctx context.Context, db bun.IDB, row *OAuthAuthRequest) error {
	if _, err := db.NewInsert().Model(row).Exec(ctx); err != nil {
		return fmt.Errorf("save auth request: %w", err)
	}
	return nil
}

// AuthRequestByID returns the unexpired request id.
func AuthRequestByID(ctx context.Context, db bun.IDB, id uuid.UUID) (*OAuthAuthRequest, error) {
	row := new(OAuthAuthRequest)
	err := db.NewSelect().Model(row).Where("id = ? AND expires_at > now()", id).Scan(ctx)
	return row, err
}

// AuthRequestByCodeHash returns the unexpired request whose code hashes to
// codeHash.
func AuthRequestByCodeHash(ctx context.Context, db bun.IDB, codeHash string) (*OAuthAuthRequest, error) {
	row := new(OAuthAuthRequest)
	err := db.NewSelect().Model(row).Where("code_hash = ? AND expires_at > now()", codeHash).Scan(ctx)
	return row, err
}

// SaveAuthCodeHash records the code of the completed, unexpired request
// id, unless it has one: false when nothing was recorded.
func SaveAuthCodeHash(ctx context.Context, db bun.IDB, id uuid.UUID, codeHash string) (bool, error) {
	res, err := db.NewUpdate().Model((*OAuthAuthRequest)(nil)).Set("code_hash = ?", codeHash).
		Where("id = ? AND code_hash IS NULL AND user_id IS NOT NULL AND expires_at > now()", id).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("save auth code: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// DeleteAuthRequest deletes the request id.
func DeleteAuthRequest(ctx context.Context, db bun.IDB, id string) error {
	_, err := db.NewDelete().Model((*OAuthAuthRequest)(nil)).Where("id = ?", id).Exec(ctx)
	return err
}

// CompleteAuthRequest records that the user logged in for the unexpired,
// not yet completed request id, in the browser whose binding hashes to
// browserHash: false when nothing was recorded.
func CompleteAuthRequest(ctx context.Context, db bun.IDB, id uuid.UUID, browserHash string, userID, siteID uuid.UUID) (bool, error) {
	res, err := db.NewUpdate().Model((*OAuthAuthRequest)(nil)).
		Set("user_id = ?, site_id = ?, auth_time = now()", userID, siteID).
		Where("id = ? AND expires_at > now() AND user_id IS NULL AND browser_hash = ? AND browser_hash <> ''", id, browserHash).Exec(ctx)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// LockAuthCode reads, in tx, the request whose code hashes to codeHash,
// locking it until tx ends; sql.ErrNoRows (IsNoRows) when there is none.
func LockAuthCode(ctx context.Context, tx bun.IDB, codeHash string) (*OAuthAuthRequest, error) {
	row := new(OAuthAuthRequest)
	if err := tx.NewSelect().Model(row).Where("code_hash = ?", codeHash).For("UPDATE").Scan(ctx); err != nil {
		return nil, err
	}
	return row, nil
}

// SpendAuthCode deletes the request row, whose code is being exchanged, in
// the exchange's transaction.
func SpendAuthCode(ctx context.Context, tx bun.IDB, row *OAuthAuthRequest) error {
	_, err := tx.NewDelete().Model(row).WherePK().Exec(ctx)
	return err
}
