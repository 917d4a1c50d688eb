package models

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// The OAuth provider's signing keys store (api/oauth/keys.go parses and
// caches them).

// SigningKey is a persisted RSA signing key.
type SigningKey struct {
	bun.BaseModel `bun:"table:oauth_signing_keys"`

	ID         string    `bun:"id,pk"`
	Algorithm  string    `bun:"algorithm,notnull"`
	PrivatePEM string    `bun:"private_pem,notnull"`
	CreatedAt  time.Time `bun:"created_at,notnull"`
	RetireAt   time.Time `bun:"retire_at,notnull"`
	DropAt     time.Time `bun:"drop_at,notnull"`
}

// PublishedSigningKeys returns the keys not dropped yet, newest first.
func PublishedSigningKeys(ctx context.Context, db bun.IDB) ([]SigningKey, error) {
	var rows []SigningKey
	if err := db.NewSelect().Model(&rows).Where("drop_at > now()").Order("created_at DESC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load signing keys: %w", err)
	}
	return rows, nil
}

// PublishedSigningKey returns the key id if it is not dropped yet, or nil.
func PublishedSigningKey(ctx context.Context, db bun.IDB, id string) (*SigningKey, error) {
	var rows []SigningKey
	if err := db.NewSelect().Model(&rows).Where("id = ? AND drop_at > now()", id).Limit(1).Scan(ctx); err != nil {
		return nil, fmt.Errorf("look up signing key: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	return &rows[0], nil
}

// AddSigningKey stores k unless an active key (not retired) exists: under
// a transaction lock, so replicas rotating at once make one key.
func AddSigningKey(ctx context.Context, db bun.IDB, k *SigningKey) error {
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtext('pressroom.signing_keys'))"); err != nil {
			return err
		}
		n, err := tx.NewSelect().Model((*SigningKey)(nil)).Where("retire_at > now()").Count(ctx)
		if err != nil || n > 0 {
			return err // another replica made one while we waited
		}
		_, err = tx.NewInsert().Model(k).Exec(ctx)
		return err
	})
}

// RetireSigningKeys retires the active key at once; it stays published.
func RetireSigningKeys(ctx context.Context, db bun.IDB) error {
	_, err := db.NewUpdate().Model((*SigningKey)(nil)).Set("retire_at = now()").Where("retire_at > now()").Exec(ctx)
	return err
}
