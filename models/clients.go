package models

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/auth"
)

// OAuthClient is an application allowed to obtain tokens. Only a hash of a
// confidential client's secret is stored.
type OAuthClient struct {
	bun.BaseModel `bun:"table:oauth_clients"`

	ID           string    `bun:"id,pk"`
	Name         string    `bun:"name,notnull"`
	SecretHash   *string   `bun:"secret_hash"`
	Confidential bool      `bun:"confidential,notnull"`
	RedirectURIs []string  `bun:"redirect_uris,array,notnull"`
	CreatedAt    time.Time `bun:"created_at,notnull,default:current_timestamp"`
}

// CreateOAuthClient inserts c.
func CreateOAuthClient(ctx context.Context, db bun.IDB, c *OAuthClient) error {
	if c.CreatedAt.IsZero() {
		c.CreatedAt = time.Now().UTC()
	}
	if c.RedirectURIs == nil {
		c.RedirectURIs = []string{}
	}
	if _, err := db.NewInsert().Model(c).Exec(ctx); err != nil {
		return fmt.Errorf("create oauth client %q: %w", c.Name, classify(err))
	}
	return nil
}

// NewOAuthClient creates a client with a fresh random id and, when
// confidential, a random secret; it returns both, the secret in clear text
// for the one time it is shown. The secret is stored as an HMAC under
// secretKey (the server's PRESSROOM_CLIENT_SECRET_KEY).
func NewOAuthClient(ctx context.Context, db bun.IDB, secretKey []byte, name string, confidential bool, redirectURIs []string) (id, secret string, err error) {
	id, err = auth.RandomSecret(16)
	if err != nil {
		return "", "", err
	}
	c := &OAuthClient{ID: id, Name: name, Confidential: confidential, RedirectURIs: redirectURIs}
	if confidential {
		if secret, err = auth.RandomSecret(32); err != nil {
			return "", "", err
		}
		hash := auth.HashClientSecret(secretKey, secret)
		c.SecretHash = &hash
	}
	if err := CreateOAuthClient(ctx, db, c); err != nil {
		return "", "", err
	}
	return id, secret, nil
}

// FindOAuthClient reads the client id into row; sql.ErrNoRows (IsNoRows)
// when there is none.
func FindOAuthClient(ctx context.Context, db bun.IDB, id string, row *OAuthClient) error {
	return db.NewSelect().Model(row).Where("id = ?", id).Scan(ctx)
}

// RehashClientSecret replaces the client id's secret hash old with fresh,
// only if nobody changed it meanwhile.
func RehashClientSecret(ctx context.Context, db bun.IDB, id, old, fresh string) error {
	if _, err := db.NewUpdate().Model((*OAuthClient)(nil)).Set("secret_hash = ?", fresh).
		Where("id = ? AND secret_hash = ?", id, old).Exec(ctx); err != nil {
		return fmt.Errorf("rehash client secret: %w", err)
	}
	return nil
}
