package models

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// The team of a site (docs/auth.md, "Managing the team"): its memberships
// with their users' e-mail and name, the changes an admin makes, and the
// one-time password setups of the users an admin creates.

// Member is a membership of a site with its user's e-mail and name: one
// record of GET /memberships.
type Member struct {
	bun.BaseModel `bun:"table:memberships,alias:m"`

	ID         uuid.UUID `bun:"id"`
	SiteID     uuid.UUID `bun:"site_id"`
	UserID     uuid.UUID `bun:"user_id"`
	Role       Role      `bun:"role"`
	PathPrefix *string   `bun:"path_prefix"`
	CreatedAt  time.Time `bun:"created_at"`
	UpdatedAt  time.Time `bun:"updated_at"`
	Email      string    `bun:"email,scanonly"`
	Name       string    `bun:"name,scanonly"`
}

// memberQuery selects the site's members with their users.
func memberQuery(db bun.IDB, siteID uuid.UUID, rows *[]Member) *bun.SelectQuery {
	return db.NewSelect().Model(rows).Join("JOIN users AS u ON u.id = m.user_id").
		ColumnExpr("m.id, m.site_id, m.user_id, m.role, m.path_prefix, m.created_at, m.updated_at, u.email, u.name").
		Where("m.site_id = ?", siteID)
}

// ListMembers loads one page of the site's members (page's order: the
// api's sorts name m.* columns), and how many there are.
func ListMembers(ctx context.Context, db bun.IDB, siteID uuid.UUID, page Page) ([]Member, int64, error) {
	var rows []Member
	total, err := page(memberQuery(db, siteID, &rows)).ScanAndCount(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("list members of %s: %w", siteID, err)
	}
	return rows, total, nil
}

// MembersByIDs loads the site's members with the given ids, oldest first.
func MembersByIDs(ctx context.Context, db bun.IDB, siteID uuid.UUID, ids []uuid.UUID) ([]Member, error) {
	rows := []Member{}
	if len(ids) == 0 {
		return rows, nil
	}
	err := memberQuery(db, siteID, &rows).Where("m.id IN (?)", bun.In(Unique(ids))).OrderExpr("m.created_at, m.id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("members of %s by id: %w", siteID, err)
	}
	return rows, nil
}

// FindMember finds the site's member with that id (NotFound otherwise).
func FindMember(ctx context.Context, db bun.IDB, siteID, id uuid.UUID) (*Member, error) {
	rows, err := MembersByIDs(ctx, db, siteID, []uuid.UUID{id})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, NotFound("membership")
	}
	return &rows[0], nil
}

// NewMember is what an admin's POST /memberships asks for.
type NewMember struct {
	Email, Name string
	Role        Role
	PathPrefix  *string
	// PasswordHash is the password hash a user created here gets: one
	// that matches no password, until the setup link sets one.
	PasswordHash string
}

// alreadyMember is the answer to a second membership of one user in a site.
func alreadyMember() *Error {
	return &Error{Kind: ErrConflict, Code: "already_member", At: Attr("email"), Detail: "A member of this site already has that email."}
}

// lastAdmin is the answer to a change that would leave the site without an admin.
func lastAdmin() *Error {
	return &Error{Kind: ErrConflict, Code: "last_admin", Detail: "This is the site's last admin: make another member admin first."}
}

// AddMember adds the user with m's e-mail to site, creating the user when
// there is none (created true): in tx, the caller's transaction. The same
// e-mail twice in a site is ErrConflict (already_member), by the unique
// index memberships_user_site_key.
func AddMember(ctx context.Context, tx bun.Tx, siteID uuid.UUID, m NewMember) (member *Member, created bool, err error) {
	email := strings.TrimSpace(m.Email)
	u := new(User)
	err = tx.NewSelect().Model(u).Where("lower(email) = lower(?)", email).For("UPDATE").Scan(ctx)
	switch {
	case IsNoRows(err):
		u = &User{SiteRecord: NewSiteRecord(siteID), Email: email, Name: strings.TrimSpace(m.Name), PasswordHash: m.PasswordHash}
		if _, err := inserted(ctx, tx, u, "create user"); err != nil {
			return nil, false, err
		}
		created = true
	case err != nil:
		return nil, false, fmt.Errorf("find user by email: %w", err)
	}
	row := &Membership{SiteRecord: NewSiteRecord(siteID), UserID: u.ID, Role: m.Role, PathPrefix: m.PathPrefix}
	if _, err := tx.NewInsert().Model(row).Exec(ctx); err != nil {
		if IsUniqueViolation(err, "memberships_user_site_key") {
			return nil, false, alreadyMember()
		}
		return nil, false, fmt.Errorf("add membership: %w", err)
	}
	return &Member{ID: row.ID, SiteID: siteID, UserID: u.ID, Role: row.Role, PathPrefix: row.PathPrefix,
		CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt, Email: u.Email, Name: u.Name}, created, nil
}

// lockAdmins locks the site's admin memberships, in the order of their
// ids, and returns their ids: every change that could take the site's
// last admin away runs after it, so two of them cannot both pass.
func lockAdmins(ctx context.Context, tx bun.Tx, siteID uuid.UUID) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	err := tx.NewSelect().Model((*Membership)(nil)).Column("id").Where("site_id = ? AND role = ?", siteID, RoleAdmin).
		OrderExpr("id").For("UPDATE").Scan(ctx, &ids)
	if err != nil {
		return nil, fmt.Errorf("lock admins of %s: %w", siteID, err)
	}
	return ids, nil
}

// keepsAnAdmin refuses (last_admin) a change that takes admin away from
// member id when it is the only admin of admins.
func keepsAnAdmin(admins []uuid.UUID, id uuid.UUID) error {
	if len(admins) == 1 && admins[0] == id {
		return lastAdmin()
	}
	return nil
}

// ChangeMember sets the role and path prefix of the site's member id, in
// tx; demoting the site's last admin is ErrConflict (last_admin).
func ChangeMember(ctx context.Context, tx bun.Tx, siteID, id uuid.UUID, role Role, prefix *string) error {
	admins, err := lockAdmins(ctx, tx, siteID)
	if err != nil {
		return err
	}
	if role != RoleAdmin {
		if err := keepsAnAdmin(admins, id); err != nil {
			return err
		}
	}
	res, err := tx.NewUpdate().Model((*Membership)(nil)).Set("role = ?, path_prefix = ?, updated_at = ?", role, prefix, time.Now().UTC()).
		Where("site_id = ? AND id = ?", siteID, id).Exec(ctx)
	if err != nil {
		return memberChangeError(err, "change membership "+id.String())
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return NotFound("membership")
	}
	return nil
}

// RemoveMember deletes the site's member id and revokes the member's
// tokens of the site, in tx; removing the site's last admin is
// ErrConflict (last_admin).
func RemoveMember(ctx context.Context, tx bun.Tx, siteID, id uuid.UUID) error {
	admins, err := lockAdmins(ctx, tx, siteID)
	if err != nil {
		return err
	}
	if err := keepsAnAdmin(admins, id); err != nil {
		return err
	}
	var userID uuid.UUID
	err = tx.NewDelete().Model((*Membership)(nil)).Where("site_id = ? AND id = ?", siteID, id).Returning("user_id").Scan(ctx, &userID)
	if IsNoRows(err) {
		return NotFound("membership")
	}
	if err != nil {
		return memberChangeError(err, "remove membership "+id.String())
	}
	return revokeSiteTokens(ctx, tx, siteID, userID)
}

// memberChangeError is the trigger memberships_last_admin's refusal as
// last_admin, and anything else wrapped with what was being done.
func memberChangeError(err error, doing string) error {
	if IsCheckViolation(err, "memberships_last_admin") {
		return lastAdmin()
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// revokeSiteTokens revokes every refresh and access token of user for
// site (a removed member's, in the removal's transaction).
func revokeSiteTokens(ctx context.Context, tx bun.Tx, siteID, userID uuid.UUID) error {
	if _, err := tx.NewUpdate().Model((*OAuthRefreshToken)(nil)).Set("revoked_at = now()").
		Where("user_id = ? AND site_id = ? AND revoked_at IS NULL", userID, siteID).Exec(ctx); err != nil {
		return fmt.Errorf("revoke refresh tokens of %s: %w", userID, err)
	}
	if _, err := tx.NewUpdate().Model((*OAuthAccessToken)(nil)).Set("revoked_at = now()").
		Where("user_id = ? AND site_id = ? AND revoked_at IS NULL", userID, siteID).Exec(ctx); err != nil {
		return fmt.Errorf("revoke access tokens of %s: %w", userID, err)
	}
	return nil
}

// PasswordSetupLifetime is how long a password setup link works.
const PasswordSetupLifetime = 72 * time.Hour

// PasswordSetup is a one-time password setup of a user an admin created:
// only the SHA-256 of its token is stored.
type PasswordSetup struct {
	bun.BaseModel `bun:"table:password_setups"`

	ID        uuid.UUID  `bun:"id,pk,type:uuid"`
	SiteID    uuid.UUID  `bun:"site_id,type:uuid,notnull"`
	UserID    uuid.UUID  `bun:"user_id,type:uuid,notnull"`
	TokenHash string     `bun:"token_hash,notnull"`
	ExpiresAt time.Time  `bun:"expires_at,notnull"`
	UsedAt    *time.Time `bun:"used_at"`
	CreatedAt time.Time  `bun:"created_at,notnull"`
}

// HashSetupToken is what is stored of a setup token.
func HashSetupToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// AddPasswordSetup records a setup of user's password by token, in tx.
func AddPasswordSetup(ctx context.Context, tx bun.Tx, siteID, userID uuid.UUID, token string) error {
	now := time.Now().UTC()
	s := &PasswordSetup{ID: uuid.New(), SiteID: siteID, UserID: userID, TokenHash: HashSetupToken(token),
		ExpiresAt: now.Add(PasswordSetupLifetime), CreatedAt: now}
	_, err := inserted(ctx, tx, s, "add password setup")
	return err
}

// ErrSetupGone: the setup token is unknown, used or expired.
var ErrSetupGone = errors.New("the password setup link is unknown, used or expired")

// PendingPasswordSetup finds the unused, unexpired setup of token, and
// the e-mail of its user (ErrSetupGone otherwise).
func PendingPasswordSetup(ctx context.Context, db bun.IDB, token string) (*PasswordSetup, string, error) {
	s := new(PasswordSetup)
	err := db.NewSelect().Model(s).Where("token_hash = ? AND used_at IS NULL AND expires_at > now()", HashSetupToken(token)).Scan(ctx)
	if IsNoRows(err) {
		return nil, "", ErrSetupGone
	}
	if err != nil {
		return nil, "", fmt.Errorf("find password setup: %w", err)
	}
	u, err := FindUserByID(ctx, db, s.UserID)
	if err != nil {
		return nil, "", err
	}
	return s, u.Email, nil
}

// UsePasswordSetup spends the pending setup of token and sets its user's
// password hash, in one statement each, in tx (ErrSetupGone when the
// setup is not pending: used by a concurrent request, say).
func UsePasswordSetup(ctx context.Context, tx bun.Tx, token, passwordHash string) error {
	var userID uuid.UUID
	err := tx.NewUpdate().Model((*PasswordSetup)(nil)).Set("used_at = now()").
		Where("token_hash = ? AND used_at IS NULL AND expires_at > now()", HashSetupToken(token)).Returning("user_id").Scan(ctx, &userID)
	if IsNoRows(err) {
		return ErrSetupGone
	}
	if err != nil {
		return fmt.Errorf("spend password setup: %w", err)
	}
	if _, err := tx.NewUpdate().Model((*User)(nil)).Set("password_hash = ?, updated_at = now()", passwordHash).
		Where("id = ?", userID).Exec(ctx); err != nil {
		return fmt.Errorf("set password of %s: %w", userID, err)
	}
	return nil
}

// UsersOfSite loads the users with the given ids who were created in the
// site or are members of it, oldest first: the users a site's records and
// memberships point at (GET /users/:id, include=user).
func UsersOfSite(ctx context.Context, db bun.IDB, siteID uuid.UUID, ids []uuid.UUID) ([]User, error) {
	rows := []User{}
	if len(ids) == 0 {
		return rows, nil
	}
	err := db.NewSelect().Model(&rows).Where("?TableAlias.id IN (?)", bun.In(Unique(ids))).
		Where("?TableAlias.site_id = ? OR EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = ?TableAlias.id AND m.site_id = ?)", siteID, siteID).
		OrderExpr("?TableAlias.created_at, ?TableAlias.id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("users of site %s: %w", siteID, err)
	}
	return rows, nil
}
