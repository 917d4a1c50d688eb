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
