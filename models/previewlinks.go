package models

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Preview links (issue 29 §3, docs/releases.md "Preview links"): a secret
// url that shows one release of one site, read-only, to anyone who has it.
// Only the token's SHA-256 is stored: the token has 256 random bits, so a
// plain hash cannot be reversed by guessing, and the lookup by hash is an
// index probe on the digest, which is then compared again in constant time.

// PreviewLinkMaxTTL and PreviewLinkDefaultTTL bound a link's life.
const (
	PreviewLinkMaxTTL     = 30 * 24 * time.Hour
	PreviewLinkDefaultTTL = 7 * 24 * time.Hour
)

// PreviewLinkRateLimit is a link's requests per minute (the window of
// UseClientToken's rate limit, counted the same way).
const PreviewLinkRateLimit = 600

// PreviewLink is a link's row; its token is never stored.
type PreviewLink struct {
	bun.BaseModel `bun:"table:preview_links"`

	SiteRecord
	ReleaseID  uuid.UUID  `bun:"release_id,type:uuid,notnull"`
	UserID     *uuid.UUID `bun:"user_id,type:uuid"`
	TokenHash  []byte     `bun:"token_hash,notnull"`
	ExpiresAt  time.Time  `bun:"expires_at,notnull"`
	RevokedAt  *time.Time `bun:"revoked_at"`
	LastUsedAt *time.Time `bun:"last_used_at"`
	UsesCount  int64      `bun:"uses_count,notnull"`
	RateLimit  int        `bun:"rate_limit,notnull"`
	// Locale is the locale the link shows the release in (a read through
	// it without locale-tag); nil: the site's default locale.
	Locale *string `bun:"locale"`
}

// PreviewTokenHash is the stored form of a link's token.
func PreviewTokenHash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// newPreviewToken is 32 random bytes, base64url without padding (43
// characters: safe in a URL path).
func newPreviewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// releaseOpen is the lock of the site's release id and whether it is open
// (404 at the release relationship for none of the site's).
func releaseOpen(ctx context.Context, db bun.IDB, siteID, id uuid.UUID) (string, error) {
	var status string
	err := db.NewSelect().Table("releases").Column("status").Where("id = ? AND site_id = ?", id, siteID).For("SHARE").Scan(ctx, &status)
	if IsNoRows(err) {
		return "", RefNotFound("release", "release")
	}
	return status, err
}

// CreatePreviewLink makes a link to the site's open release, by user (nil:
// no person), expiring at expires, showing the release in locale (nil:
// the site's default; the caller judged it one of the site's). It returns
// the token, which is shown once and kept nowhere.
func CreatePreviewLink(ctx context.Context, db bun.IDB, siteID, releaseID uuid.UUID, user *uuid.UUID, expires time.Time, locale *string) (*PreviewLink, string, error) {
	status, err := releaseOpen(ctx, db, siteID, releaseID)
	if err != nil {
		return nil, "", err
	}
	if status != "open" && status != "in-review" { // an open release, or one in review
		return nil, "", &Error{Kind: ErrConflict, Code: "release_not_open", At: Rel("release", PartID),
			Detail: "The release is " + status + ": only an open release can be previewed."}
	}
	token, err := newPreviewToken()
	if err != nil {
		return nil, "", err
	}
	l := &PreviewLink{SiteRecord: NewSiteRecord(siteID), ReleaseID: releaseID, UserID: user, TokenHash: PreviewTokenHash(token),
		ExpiresAt: expires.UTC(), RateLimit: PreviewLinkRateLimit, Locale: locale}
	if _, err := db.NewInsert().Model(l).Exec(ctx); err != nil {
		return nil, "", fmt.Errorf("create preview link: %w", classify(err))
	}
	return l, token, nil
}

// FindPreviewLink is the site's link id (revoked ones are gone: 404).
func FindPreviewLink(ctx context.Context, db bun.IDB, siteID, id uuid.UUID) (*PreviewLink, error) {
	l := new(PreviewLink)
	err := db.NewSelect().Model(l).Where("id = ? AND site_id = ? AND revoked_at IS NULL", id, siteID).Scan(ctx)
	if IsNoRows(err) {
		return nil, NotFound("preview link")
	}
	return l, err
}

// PreviewLinksByIDs are the site's links with those ids (not revoked).
func PreviewLinksByIDs(ctx context.Context, db bun.IDB, siteID uuid.UUID, ids []uuid.UUID) ([]PreviewLink, error) {
	var rows []PreviewLink
	if len(ids) == 0 {
		return rows, nil
	}
	err := db.NewSelect().Model(&rows).Where("site_id = ? AND id IN (?) AND revoked_at IS NULL", siteID, bun.In(Unique(ids))).OrderExpr("created_at, id").Scan(ctx)
	return rows, err
}

// ListPreviewLinks is one page of the site's links that are not revoked.
func ListPreviewLinks(ctx context.Context, db bun.IDB, siteID uuid.UUID, page Page) ([]PreviewLink, int64, error) {
	return List[PreviewLink](ctx, db, page, "site_id = ? AND revoked_at IS NULL", siteID)
}

// RevokePreviewLink revokes the site's link id at once: the next request
// through it, on any replica, reads the row and is refused.
func RevokePreviewLink(ctx context.Context, db bun.IDB, siteID, id uuid.UUID) error {
	res, err := db.NewUpdate().Model((*PreviewLink)(nil)).Set("revoked_at = now(), updated_at = now()").
		Where("id = ? AND site_id = ? AND revoked_at IS NULL", id, siteID).Exec(ctx)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return NotFound("preview link")
	}
	return nil
}

// PreviewLinkUse is what a request through a link reads: the link, its
// release's status, and the link's rate limit with this request counted
// (the same fixed minute as an integration client's, ClientTokenUse).
type PreviewLinkUse struct {
	ID, SiteID, ReleaseID uuid.UUID
	ReleaseStatus         string
	// Locale is the link's locale ("": the site's default).
	Locale           string
	Revoked, Expired bool
	Usage            ClientTokenUse
}

// usePreviewLinkQuery finds a link by its token's hash and counts the
// request (uses, last use, and the rate limit's minute, by the same SQL
// as useClientTokenQuery) in one statement, on every request: a revoked
// link is refused by the next request on every replica.
const usePreviewLinkQuery = `UPDATE preview_links l SET ` + rateWindowSet + `,
    uses_count = l.uses_count + 1, last_used_at = now()
FROM releases r, sites s
WHERE l.token_hash = $1 AND r.id = l.release_id AND r.site_id = l.site_id AND s.id = l.site_id
RETURNING l.token_hash, l.id, l.site_id, l.release_id, r.status, l.revoked_at IS NOT NULL, l.expires_at <= now(),
    l.rate_limit, l.window_count, ` + rateWindowReset + `, ` + localeColumnsSQL + `, coalesce(l.locale, '')`

// UsePreviewLink is the link whose token is token, this request counted;
// ok is false for none.
func UsePreviewLink(ctx context.Context, db bun.IDB, token string) (u PreviewLinkUse, ok bool, err error) {
	want := PreviewTokenHash(token)
	var got []byte
	var ls localeColumns
	err = ScanPrepared(ctx, db, usePreviewLinkQuery, []any{want},
		&got, &u.ID, &u.SiteID, &u.ReleaseID, &u.ReleaseStatus, &u.Revoked, &u.Expired, &u.Usage.Limit, &u.Usage.Used, &u.Usage.ResetSeconds,
		&ls.list, &ls.base, &ls.chains, &u.Locale)
	if IsNoRows(err) {
		return PreviewLinkUse{}, false, nil
	}
	if err == nil {
		u.Usage.Locales, err = ls.parse()
	}
	if err != nil {
		return PreviewLinkUse{}, false, err
	}
	// The index found the row by the whole digest; the digest is compared
	// again in constant time, so no code path compares it byte by byte.
	if subtle.ConstantTimeCompare(got, want) != 1 {
		return PreviewLinkUse{}, false, nil
	}
	u.Usage.Live = true
	return u, true, nil
}
