package models

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
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
