package models

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Site is a tenant: one website whose theme and content Pressroom manages.
type Site struct {
	bun.BaseModel `bun:"table:sites"`

	ID            uuid.UUID `bun:"id,pk,type:uuid"`
	Title         string    `bun:"title,notnull"`
	SubdomainSlug string    `bun:"subdomain_slug,notnull"`
	CreatedAt     time.Time `bun:"created_at,notnull,default:current_timestamp"`
	UpdatedAt     time.Time `bun:"updated_at,notnull,default:current_timestamp"`
}

// User is an editor of one site.
type User struct {
	bun.BaseModel `bun:"table:users"`

	SiteRecord
	Email        string `bun:"email,notnull"`
	Name         string `bun:"name,notnull"`
	PasswordHash string `bun:"password_hash,notnull"`
}

// CreateSite inserts a site.
func CreateSite(ctx context.Context, db bun.IDB, title, slug string) (*Site, error) {
	now := time.Now().UTC()
	s := &Site{ID: uuid.New(), Title: strings.TrimSpace(title), SubdomainSlug: strings.ToLower(strings.TrimSpace(slug)), CreatedAt: now, UpdatedAt: now}
	return inserted(ctx, db, s, "create site "+strconv.Quote(slug))
}

// SiteBySlug finds a site by its subdomain slug.
func SiteBySlug(ctx context.Context, db bun.IDB, slug string) (*Site, error) {
	s := new(Site)
	if err := db.NewSelect().Model(s).Where("subdomain_slug = ?", strings.ToLower(slug)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("find site %q: %w", slug, err)
	}
	return s, nil
}

// CreateUser inserts a user of site with an already hashed password.
func CreateUser(ctx context.Context, db bun.IDB, siteID uuid.UUID, email, name, passwordHash string) (*User, error) {
	u := &User{SiteRecord: NewSiteRecord(siteID), Email: strings.TrimSpace(email), Name: strings.TrimSpace(name), PasswordHash: passwordHash}
	return inserted(ctx, db, u, "create user "+strconv.Quote(email))
}

// inserted inserts m and returns it; a taken unique value is ErrConflict,
// wrapped with what the caller was doing.
func inserted[T any](ctx context.Context, db bun.IDB, m *T, doing string) (*T, error) {
	if _, err := db.NewInsert().Model(m).Exec(ctx); err != nil {
		return nil, fmt.Errorf("%s: %w", doing, classify(err))
	}
	return m, nil
}

// UserByEmail finds a user by e-mail, case-insensitively.
func UserByEmail(ctx context.Context, db bun.IDB, email string) (*User, error) {
	u := new(User)
	if err := db.NewSelect().Model(u).Where("lower(email) = lower(?)", strings.TrimSpace(email)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("find user: %w", err)
	}
	return u, nil
}

// classify turns a unique violation into ErrConflict and passes the rest through.
func classify(err error) error {
	if IsUniqueViolation(err, "") {
		return fmt.Errorf("%w: %v", ErrConflict, err)
	}
	return err
}

// IsConflict tells whether err is a unique violation.
func IsConflict(err error) bool { return errors.Is(classify(err), ErrConflict) }
