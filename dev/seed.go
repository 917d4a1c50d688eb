package dev

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/auth"
	"github.com/pressroom/pressroom/models"
)

// SeedSite is a demo site with one editor.
type SeedSite struct {
	Slug, Title, Email, Password string
}

// DemoClientName names the confidential OAuth client `make dev` creates.
const DemoClientName = "Pressroom dev client"

// DemoSites are the sites `make dev` seeds, with their editors' logins
// overridable by environment variables.
func DemoSites(getenv func(string) string) []SeedSite {
	pick := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	return []SeedSite{
		{Slug: "demo", Title: "Demo site", Email: pick("PRESSROOM_DEMO_EMAIL", "editor@demo.test"), Password: pick("PRESSROOM_DEMO_PASSWORD", "pressroom-dev")},
		{Slug: "other", Title: "Other site", Email: pick("PRESSROOM_OTHER_EMAIL", "editor@other.test"), Password: pick("PRESSROOM_OTHER_PASSWORD", "pressroom-dev")},
	}
}

// SeedResult is what the seed made that a developer needs to see.
type SeedResult struct {
	ClientID, ClientSecret string
}

// Seed makes the demo sites, their editors and a fresh confidential OAuth
// client. It can run on every start: existing sites are kept, editors get
// the configured password again, and the client is replaced so its new
// secret can be printed (only an HMAC of it under clientSecretKey, the
// API's PRESSROOM_CLIENT_SECRET_KEY, is stored).
func Seed(ctx context.Context, db *bun.DB, clientSecretKey []byte, sites []SeedSite) (SeedResult, error) {
	var res SeedResult
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		for _, s := range sites {
			site, err := models.SiteBySlug(ctx, tx, s.Slug)
			if models.IsNoRows(err) {
				site, err = models.CreateSite(ctx, tx, s.Title, s.Slug)
			}
			if err != nil {
				return err
			}
			hash, err := auth.HashPassword(s.Password)
			if err != nil {
				return err
			}
			u, err := models.UserByEmail(ctx, tx, s.Email)
			switch {
			case models.IsNoRows(err):
				_, err = models.CreateUser(ctx, tx, site.ID, s.Email, "Editor of "+s.Title, hash)
			case err == nil && u.SiteID != site.ID:
				err = fmt.Errorf("seed: %s already belongs to another site", s.Email)
			case err == nil:
				_, err = tx.NewUpdate().Model(u).Set("password_hash = ?", hash).WherePK().Exec(ctx)
			}
			if err != nil {
				return err
			}
		}
		if _, err := tx.NewDelete().Model((*models.OAuthClient)(nil)).Where("name = ?", DemoClientName).Exec(ctx); err != nil {
			return fmt.Errorf("replace demo client: %w", err)
		}
		id, secret, err := models.NewOAuthClient(ctx, tx, clientSecretKey, DemoClientName, true, []string{"http://127.0.0.1:8080/oauth/callback"})
		res = SeedResult{ClientID: id, ClientSecret: secret}
		return err
	})
	return res, err
}
