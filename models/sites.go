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
	// ReleaseApprovals is how many valid approvals a release needs before
	// it is published (0–5; 0: no review step; docs/releases.md "Review").
	ReleaseApprovals int       `bun:"release_approvals,notnull"`
	CreatedAt        time.Time `bun:"created_at,notnull,default:current_timestamp"`
	UpdatedAt        time.Time `bun:"updated_at,notnull,default:current_timestamp"`
}

// User is a person who signs in: created in one site (site_id), a member
// of one or more (memberships, models/roles.go).
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

// CreateUser inserts a user of site with an already hashed password, an
// admin of the site (tests and tools that need a user who may do
// everything); CreateMember gives another role.
func CreateUser(ctx context.Context, db bun.IDB, siteID uuid.UUID, email, name, passwordHash string) (*User, error) {
	return CreateMember(ctx, db, siteID, email, name, passwordHash, RoleAdmin, nil)
}

// CreateMember inserts a user of site with an already hashed password and
// their membership of the site, with role narrowed to prefix (nil: the
// whole site), in one transaction.
func CreateMember(ctx context.Context, db bun.IDB, siteID uuid.UUID, email, name, passwordHash string, role Role, prefix *string) (*User, error) {
	u := &User{SiteRecord: NewSiteRecord(siteID), Email: strings.TrimSpace(email), Name: strings.TrimSpace(name), PasswordHash: passwordHash}
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := inserted(ctx, tx, u, "create user "+strconv.Quote(email)); err != nil {
			return err
		}
		_, err := AddMembership(ctx, tx, siteID, u.ID, role, prefix)
		return err
	})
	if err != nil {
		return nil, err
	}
	return u, nil
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
