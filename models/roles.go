package models

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Permission is what a request needs to be served: every route declares
// one where it is registered (api/permissions.go), and each built-in role
// is a fixed set of them (docs/auth.md, "Roles").
type Permission string

// The permissions, from the weakest role's up.
const (
	// PermRead: read everything of the site, drafts included.
	PermRead Permission = "read"
	// PermEdit: create, update and delete drafts of pages, contents and
	// content blocks; revert one's own drafts; publish plans.
	PermEdit Permission = "edit"
	// PermUpload: upload assets.
	PermUpload Permission = "upload"
	// PermRevertAny: revert (DELETE) a draft someone else made.
	PermRevertAny Permission = "revert-any"
	// PermPublish: publish, schedule, move and cancel scheduled revisions,
	// roll back.
	PermPublish Permission = "publish"
	// PermDesign: themes, layouts, theme assets and the site's live theme.
	PermDesign Permission = "design"
	// PermSite: the site itself.
	PermSite Permission = "site"
	// PermWebhooks: the site's webhooks and their deliveries.
	PermWebhooks Permission = "webhooks"
	// PermMemberships: who belongs to the site, with which role.
	PermMemberships Permission = "memberships"
)

// Permissions lists every permission, weakest first.
var Permissions = []Permission{PermRead, PermEdit, PermUpload, PermRevertAny, PermPublish, PermDesign, PermSite, PermWebhooks, PermMemberships}

// Role is a membership's built-in role.
type Role string

// The built-in roles; each holds the permissions of the one before.
const (
	RoleViewer Role = "viewer"
	RoleAuthor Role = "author"
	RoleEditor Role = "editor"
	RoleAdmin  Role = "admin"
)

// Roles lists the built-in roles, weakest first.
var Roles = []Role{RoleViewer, RoleAuthor, RoleEditor, RoleAdmin}

// rolePermissions is each role's own additions to the one before it.
var rolePermissions = map[Role][]Permission{
	RoleViewer: {PermRead},
	RoleAuthor: {PermEdit, PermUpload},
	RoleEditor: {PermRevertAny, PermPublish, PermDesign},
	RoleAdmin:  {PermSite, PermWebhooks, PermMemberships},
}

// ValidRole tells whether r is a built-in role.
func ValidRole(r string) bool { return slices.Contains(Roles, Role(r)) }

// PermissionsOf is every permission of role r (none for an unknown role).
func PermissionsOf(r Role) []Permission {
	var out []Permission
	for _, role := range Roles {
		out = append(out, rolePermissions[role]...)
		if role == r {
			return out
		}
	}
	return nil
}

// Can tells whether role r holds permission p.
func (r Role) Can(p Permission) bool {
	if !ValidRole(string(r)) {
		return false
	}
	for _, role := range Roles {
		if slices.Contains(rolePermissions[role], p) {
			return true
		}
		if role == r {
			return false
		}
	}
	return false
}

// Sectioned tells whether p is narrowed by a membership's path prefix:
// the rights over pages, their contents and blocks. Reads stay site-wide,
// and an admin's prefix is ignored.
func Sectioned(p Permission) bool {
	return p == PermEdit || p == PermRevertAny || p == PermPublish
}

// InSection tells whether a page at path lies in the section prefix (nil:
// the whole site). A prefix ends with "/": "/blog/" holds "/blog" (the
// section's own page) and everything under "/blog/".
func InSection(prefix *string, path string) bool {
	if prefix == nil || *prefix == "/" {
		return true
	}
	return strings.HasPrefix(path, *prefix) || path == strings.TrimSuffix(*prefix, "/")
}

// Membership is a user's role in a site.
type Membership struct {
	bun.BaseModel `bun:"table:memberships"`

	SiteRecord
	UserID     uuid.UUID `bun:"user_id,type:uuid,notnull"`
	Role       Role      `bun:"role,notnull"`
	PathPrefix *string   `bun:"path_prefix"`
}

// SiteMembership is a membership with its site's slug (GET /users/me).
type SiteMembership struct {
	SiteID     uuid.UUID `bun:"site_id"`
	Slug       string    `bun:"subdomain_slug"`
	Role       Role      `bun:"role"`
	PathPrefix *string   `bun:"path_prefix"`
}

// AddMembership makes user a member of site with role.
func AddMembership(ctx context.Context, db bun.IDB, siteID, userID uuid.UUID, role Role, prefix *string) (*Membership, error) {
	if !ValidRole(string(role)) {
		return nil, Invalid("role", "invalid_role", "role must be one of viewer, author, editor, admin.")
	}
	m := &Membership{SiteRecord: NewSiteRecord(siteID), UserID: userID, Role: role, PathPrefix: prefix}
	return inserted(ctx, db, m, "add membership of "+userID.String())
}

// MembershipsOfUser lists the sites user belongs to, oldest first.
func MembershipsOfUser(ctx context.Context, db bun.IDB, userID uuid.UUID) ([]SiteMembership, error) {
	var out []SiteMembership
	err := db.NewSelect().TableExpr("memberships AS m").Join("JOIN sites AS s ON s.id = m.site_id").
		ColumnExpr("m.site_id, s.subdomain_slug, m.role, m.path_prefix").
		Where("m.user_id = ?", userID).OrderExpr("m.created_at, s.subdomain_slug").Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("memberships of user %s: %w", userID, err)
	}
	return out, nil
}

// SetRole changes the role of user in site (pressroom user role, tests).
func SetRole(ctx context.Context, db bun.IDB, siteID, userID uuid.UUID, role Role, prefix *string) error {
	res, err := db.NewUpdate().Model((*Membership)(nil)).Set("role = ?, path_prefix = ?, updated_at = ?", role, prefix, time.Now().UTC()).
		Where("site_id = ? AND user_id = ?", siteID, userID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("set role of %s: %w", userID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return NotFound("membership")
	}
	return nil
}

// AccessTokenMember reads, for the access token id of the user of the
// site, whether it is stored and not revoked, and the user's membership of
// the site, and the site's locales (SiteLocales: validating a request's
// locale-tag costs no query): one statement, which every authenticated
// request runs (a prepared one, ScanPrepared: parsing and planning the
// text cost more than the lookup). live is false for a revoked token and
// for a user who is no longer a member of the site.
func AccessTokenMember(ctx context.Context, db bun.IDB, id, userID, siteID uuid.UUID) (role Role, prefix *string, locales SiteLocales, live bool, err error) {
	var r string
	var ls localeColumns
	err = ScanPrepared(ctx, db, `SELECT m.role, m.path_prefix, `+localeColumnsSQL+` FROM oauth_access_tokens t
JOIN memberships m ON m.user_id = t.user_id AND m.site_id = t.site_id
JOIN sites s ON s.id = t.site_id
WHERE t.id = $1 AND t.user_id = $2 AND t.site_id = $3 AND t.revoked_at IS NULL`,
		[]any{UUIDParam(id), UUIDParam(userID), UUIDParam(siteID)}, &r, &prefix, &ls.list, &ls.base, &ls.chains)
	if IsNoRows(err) {
		return "", nil, SiteLocales{}, false, nil
	}
	if err == nil {
		locales, err = ls.parse()
	}
	return Role(r), prefix, locales, err == nil, err
}

// MemberSite finds the site user signs in to: the one whose slug is slug,
// or with slug "" the user's only site. ok is false when the user belongs
// to no site of that slug; several is true when slug is "" and the user
// belongs to more than one site.
func MemberSite(ctx context.Context, db bun.IDB, userID uuid.UUID, slug string) (siteID uuid.UUID, ok, several bool, err error) {
	q := db.NewSelect().TableExpr("memberships AS m").Join("JOIN sites AS s ON s.id = m.site_id").
		ColumnExpr("m.site_id").Where("m.user_id = ?", userID).Limit(2)
	if slug != "" {
		q = q.Where("s.subdomain_slug = ?", strings.ToLower(slug))
	}
	var ids []uuid.UUID
	if err := q.Scan(ctx, &ids); err != nil {
		return uuid.Nil, false, false, fmt.Errorf("site of user %s (%s): %w", userID, strconv.Quote(slug), err)
	}
	switch len(ids) {
	case 0:
		return uuid.Nil, false, false, nil
	case 1:
		return ids[0], true, false, nil
	}
	return uuid.Nil, false, true, nil
}

// FindUserByID finds a user by id alone: the token's own user (GET
// /users/me), who may have been created in another of their sites.
func FindUserByID(ctx context.Context, db bun.IDB, id uuid.UUID) (*User, error) {
	u := new(User)
	if err := db.NewSelect().Model(u).Where("id = ?", id).Scan(ctx); err != nil {
		if IsNoRows(err) {
			return nil, NotFound("user")
		}
		return nil, fmt.Errorf("find user %s: %w", id, err)
	}
	return u, nil
}

// MembershipOf reads user's membership of site (sql.ErrNoRows, IsNoRows,
// when there is none): the publisher's, in the publishing transaction.
func MembershipOf(ctx context.Context, db bun.IDB, siteID, userID uuid.UUID) (*Membership, error) {
	m := new(Membership)
	if err := db.NewSelect().Model(m).Where("site_id = ? AND user_id = ?", siteID, userID).Scan(ctx); err != nil {
		return nil, err
	}
	return m, nil
}
