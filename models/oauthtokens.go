package models

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// The OAuth provider's refresh token store (api/oauth issues and checks
// the tokens).

// OAuthRefreshToken is a stored refresh token (its hash) of a chain of
// rotations; a spent one keeps the sealed response of its grace.
type OAuthRefreshToken struct {
	bun.BaseModel `bun:"table:oauth_refresh_tokens"`

	ID            uuid.UUID  `bun:"id,pk,type:uuid"`
	ChainID       uuid.UUID  `bun:"chain_id,type:uuid,notnull"`
	TokenHash     string     `bun:"token_hash,notnull"`
	SiteID        uuid.UUID  `bun:"site_id,type:uuid,notnull"`
	UserID        uuid.UUID  `bun:"user_id,type:uuid,notnull"`
	ClientID      string     `bun:"client_id,notnull"`
	Scopes        []string   `bun:"scopes,array,notnull"`
	AuthTime      time.Time  `bun:"auth_time,notnull"`
	CreatedAt     time.Time  `bun:"created_at,notnull"`
	ExpiresAt     time.Time  `bun:"expires_at,notnull"`
	SpentAt       *time.Time `bun:"spent_at"`
	RevokedAt     *time.Time `bun:"revoked_at"`
	GraceResponse []byte     `bun:"grace_response"`
}

// RecordRefreshToken stores a new refresh token.
func RecordRefreshToken(ctx context.Context, db bun.IDB, t *OAuthRefreshToken) error {
	if _, err := db.NewInsert().Model(t).Exec(ctx); err != nil {
		return fmt.Errorf("record refresh token: %w", err)
	}
	return nil
}

// SpendRefreshToken marks t spent, keeping sealed, the response it was
// spent for, for its grace; and ends the grace of every other token of its
// chain (a client that used t's successor did not lose that response).
func SpendRefreshToken(ctx context.Context, db bun.IDB, t *OAuthRefreshToken, sealed []byte) error {
	if _, err := db.NewUpdate().Model(t).Set("spent_at = now(), grace_response = ?", sealed).WherePK().Exec(ctx); err != nil {
		return fmt.Errorf("spend refresh token: %w", err)
	}
	if _, err := db.NewUpdate().Model((*OAuthRefreshToken)(nil)).Set("grace_response = NULL").
		Where("chain_id = ? AND id <> ? AND grace_response IS NOT NULL", t.ChainID, t.ID).Exec(ctx); err != nil {
		return fmt.Errorf("end refresh grace: %w", err)
	}
	return nil
}

// LockRefreshToken reads, in tx, the refresh token whose hash is
// tokenHash, locking it: two uses of one token are serialised, the second
// sees it spent. sql.ErrNoRows (IsNoRows) when there is none.
func LockRefreshToken(ctx context.Context, tx bun.IDB, tokenHash string) (*OAuthRefreshToken, error) {
	row := new(OAuthRefreshToken)
	if err := tx.NewSelect().Model(row).Where("token_hash = ?", tokenHash).For("UPDATE").Scan(ctx); err != nil {
		return nil, err
	}
	return row, nil
}

// OAuthAccessToken is an issued access token (the JWT's jti and whom it is
// for); the JWT itself is not stored.
type OAuthAccessToken struct {
	bun.BaseModel `bun:"table:oauth_access_tokens"`

	ID        uuid.UUID  `bun:"id,pk,type:uuid"`
	ChainID   *uuid.UUID `bun:"chain_id,type:uuid"`
	SiteID    uuid.UUID  `bun:"site_id,type:uuid,notnull"`
	UserID    uuid.UUID  `bun:"user_id,type:uuid,nullzero"` // uuid.Nil (NULL): an integration client's
	ClientID  string     `bun:"client_id,notnull"`
	CreatedAt time.Time  `bun:"created_at,notnull"`
	ExpiresAt time.Time  `bun:"expires_at,notnull"`
	RevokedAt *time.Time `bun:"revoked_at"`
}

// RecordAccessToken stores a new access token.
func RecordAccessToken(ctx context.Context, db bun.IDB, t *OAuthAccessToken) error {
	if _, err := db.NewInsert().Model(t).Exec(ctx); err != nil {
		return fmt.Errorf("record access token: %w", err)
	}
	return nil
}

// RefreshTokenByHash returns the refresh token whose hash is tokenHash;
// with clientID not empty, only one issued to that client. sql.ErrNoRows
// (IsNoRows) when there is none.
func RefreshTokenByHash(ctx context.Context, db bun.IDB, tokenHash, clientID string) (*OAuthRefreshToken, error) {
	row := new(OAuthRefreshToken)
	q := db.NewSelect().Model(row).Where("token_hash = ?", tokenHash)
	if clientID != "" {
		q = q.Where("client_id = ?", clientID)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, err
	}
	return row, nil
}

// RefreshTokenOfUser returns the refresh token whose row id is id, of the
// user userID (both as the provider library passes them, text that need
// not be a uuid). sql.ErrNoRows (IsNoRows) when there is none.
func RefreshTokenOfUser(ctx context.Context, db bun.IDB, id, userID string) (*OAuthRefreshToken, error) {
	row := new(OAuthRefreshToken)
	if err := db.NewSelect().Model(row).Where("id::text = ? AND user_id::text = ?", id, userID).Scan(ctx); err != nil {
		return nil, err
	}
	return row, nil
}

// RevokeAccessToken revokes the access token id of the user userID,
// issued to clientID, if it is not revoked yet (none is not an error).
func RevokeAccessToken(ctx context.Context, db bun.IDB, id, userID, clientID string) error {
	if _, err := db.NewUpdate().Model((*OAuthAccessToken)(nil)).Set("revoked_at = now()").
		Where("id::text = ? AND user_id::text = ? AND client_id = ? AND revoked_at IS NULL", id, userID, clientID).Exec(ctx); err != nil {
		return fmt.Errorf("revoke access token: %w", err)
	}
	return nil
}

// RevokeTokenChain revokes every refresh and access token of a login (a
// chain of rotations), ending the refresh tokens' grace.
func RevokeTokenChain(ctx context.Context, db bun.IDB, chain uuid.UUID) error {
	if _, err := db.NewUpdate().Model((*OAuthRefreshToken)(nil)).Set("revoked_at = now(), grace_response = NULL").
		Where("chain_id = ? AND revoked_at IS NULL", chain).Exec(ctx); err != nil {
		return fmt.Errorf("revoke refresh chain: %w", err)
	}
	if _, err := db.NewUpdate().Model((*OAuthAccessToken)(nil)).Set("revoked_at = now()").
		Where("chain_id = ? AND revoked_at IS NULL", chain).Exec(ctx); err != nil {
		return fmt.Errorf("revoke access tokens of chain: %w", err)
	}
	return nil
}

// RevokeUserTokens revokes, in one transaction, every refresh and access
// token of the user issued to clientID.
func RevokeUserTokens(ctx context.Context, db bun.IDB, userID uuid.UUID, clientID string) error {
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewUpdate().Model((*OAuthRefreshToken)(nil)).Set("revoked_at = now()").
			Where("user_id = ? AND client_id = ? AND revoked_at IS NULL", userID, clientID).Exec(ctx); err != nil {
			return err
		}
		_, err := tx.NewUpdate().Model((*OAuthAccessToken)(nil)).Set("revoked_at = now()").
			Where("user_id = ? AND client_id = ? AND revoked_at IS NULL", userID, clientID).Exec(ctx)
		return err
	})
}

// ActiveAccessToken returns the access token id of the user userID (text,
// as the provider library passes them) while it is unrevoked, unexpired
// and its user exists; an error (sql.ErrNoRows when it is not active)
// otherwise.
func ActiveAccessToken(ctx context.Context, db bun.IDB, id, userID string) (*OAuthAccessToken, error) {
	row := new(OAuthAccessToken)
	err := db.NewSelect().Model(row).
		Where("id::text = ? AND user_id::text = ? AND revoked_at IS NULL AND expires_at > now()", id, userID).
		Where("EXISTS (SELECT 1 FROM users u WHERE u.id = ?TableAlias.user_id)").Scan(ctx)
	if err != nil {
		return nil, err
	}
	return row, nil
}

// UserOfActiveToken returns the user userID while the access token id of
// that user is unrevoked and unexpired; an error otherwise.
func UserOfActiveToken(ctx context.Context, db bun.IDB, id, userID string) (*User, error) {
	u := new(User)
	err := db.NewSelect().Model(u).
		Where("?TableAlias.id::text = ?", userID).
		Where("EXISTS (SELECT 1 FROM oauth_access_tokens t WHERE t.id::text = ? AND t.user_id = ?TableAlias.id AND t.revoked_at IS NULL AND t.expires_at > now())", id).
		Scan(ctx)
	if err != nil {
		return nil, err
	}
	return u, nil
}

// SiteOfUser returns the site of the user userID (text, as the provider
// library passes it).
func SiteOfUser(ctx context.Context, db bun.IDB, userID string) (uuid.UUID, error) {
	var siteID uuid.UUID
	if err := db.NewSelect().Table("users").Column("site_id").Where("id::text = ?", userID).Scan(ctx, &siteID); err != nil {
		return uuid.Nil, fmt.Errorf("site of user: %w", err)
	}
	return siteID, nil
}
