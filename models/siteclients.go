package models

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Integration clients (docs/auth.md, "Integration tokens"): confidential
// OAuth clients of one site that get tokens with the client_credentials
// grant and act with a role, as themselves, not as a person.

// DefaultRateLimit is an integration client's requests per minute when
// its creator names none.
const DefaultRateLimit = 600

// MaxRateLimit bounds a client's rate limit (the column's check).
const MaxRateLimit = 1000000

// SiteClient is an integration client of a site: its role and rate limit.
// The client itself (id, name, secret hash) is its oauth_clients row.
type SiteClient struct {
	bun.BaseModel `bun:"table:site_clients"`

	SiteRecord
	ClientID  string `bun:"client_id,notnull"`
	Role      Role   `bun:"role,notnull"`
	RateLimit int    `bun:"rate_limit,notnull"`
	// Name is the oauth_clients row's (read with the row, never written here).
	Name string `bun:"name,scanonly"`
}

// siteClientQuery reads site clients with their client's name (not the
// rate limit's count).
func siteClientQuery(db bun.IDB, rows any) *bun.SelectQuery {
	return db.NewSelect().Model(rows).
		ColumnExpr("?TableAlias.id, ?TableAlias.site_id, ?TableAlias.created_at, ?TableAlias.updated_at, ?TableAlias.client_id, ?TableAlias.role, ?TableAlias.rate_limit").
		ColumnExpr("(SELECT c.name FROM oauth_clients c WHERE c.id = ?TableAlias.client_id) AS name")
}

// CreateSiteClient makes a confidential client named name for site with
// role and rateLimit (requests per minute, 0: DefaultRateLimit), in db (a
// transaction: the oauth_clients row and the site's row go together). The
// secret is returned in clear text for the one time it is shown; only its
// HMAC under secretKey is stored, as every client secret is.
func CreateSiteClient(ctx context.Context, db bun.IDB, secretKey []byte, siteID uuid.UUID, name string, role Role, rateLimit int) (*SiteClient, string, error) {
	if !ValidRole(string(role)) {
		return nil, "", Invalid("role", "invalid_role", "role must be one of viewer, author, editor, admin.")
	}
	if rateLimit == 0 {
		rateLimit = DefaultRateLimit
	}
	if rateLimit < 1 || rateLimit > MaxRateLimit {
		return nil, "", Invalid("rate-limit", "invalid_rate_limit", fmt.Sprintf("rate-limit must be a whole number of requests per minute from 1 to %d.", MaxRateLimit))
	}
	id, secret, err := NewOAuthClient(ctx, db, secretKey, name, true, nil)
	if err != nil {
		return nil, "", err
	}
	sc := &SiteClient{SiteRecord: NewSiteRecord(siteID), ClientID: id, Role: role, RateLimit: rateLimit}
	if _, err := db.NewInsert().Model(sc).Exec(ctx); err != nil {
		return nil, "", fmt.Errorf("create site client %q: %w", name, classify(err))
	}
	sc.Name = name
	return sc, secret, nil
}

// FindSiteClient finds the site's integration client id.
func FindSiteClient(ctx context.Context, db bun.IDB, siteID, id uuid.UUID) (*SiteClient, error) {
	sc := new(SiteClient)
	err := siteClientQuery(db, sc).Where("?TableAlias.id = ? AND ?TableAlias.site_id = ?", id, siteID).Scan(ctx)
	if IsNoRows(err) {
		return nil, NotFound("OAuth client")
	}
	if err != nil {
		return nil, fmt.Errorf("find site client %s: %w", id, err)
	}
	return sc, nil
}

// SiteClientsByIDs reads the site's integration clients ids.
func SiteClientsByIDs(ctx context.Context, db bun.IDB, siteID uuid.UUID, ids []uuid.UUID) ([]SiteClient, error) {
	var rows []SiteClient
	if len(ids) == 0 {
		return rows, nil
	}
	err := siteClientQuery(db, &rows).Where("?TableAlias.site_id = ? AND ?TableAlias.id IN (?)", siteID, bun.In(Unique(ids))).
		OrderExpr("?TableAlias.created_at, ?TableAlias.id").Scan(ctx)
	return rows, err
}

// ListSiteClients loads one page of the site's integration clients.
func ListSiteClients(ctx context.Context, db bun.IDB, siteID uuid.UUID, page Page) ([]SiteClient, int64, error) {
	var rows []SiteClient
	total, err := page(siteClientQuery(db, &rows).Where("?TableAlias.site_id = ?", siteID)).ScanAndCount(ctx)
	return rows, total, err
}

// SiteClientByClientID finds the integration client whose OAuth client id
// is clientID (sql.ErrNoRows, IsNoRows, for a client that is none: a
// first-party or code-flow client).
func SiteClientByClientID(ctx context.Context, db bun.IDB, clientID string) (*SiteClient, error) {
	sc := new(SiteClient)
	if err := db.NewSelect().Model(sc).Where("client_id = ?", clientID).Scan(ctx); err != nil {
		return nil, err
	}
	return sc, nil
}

// ActiveClientAccessToken reads the integration client clientID's access
// token id (text, as the provider library passes it) and the client, while
// the token is unrevoked and unexpired and the client exists; an error
// (sql.ErrNoRows when it is not active) otherwise.
func ActiveClientAccessToken(ctx context.Context, db bun.IDB, id, clientID string) (*OAuthAccessToken, *SiteClient, error) {
	row := new(OAuthAccessToken)
	err := db.NewSelect().Model(row).
		Where("id::text = ? AND client_id = ? AND user_id IS NULL AND revoked_at IS NULL AND expires_at > now()", id, clientID).Scan(ctx)
	if err != nil {
		return nil, nil, err
	}
	sc := new(SiteClient)
	if err := siteClientQuery(db, sc).Where("?TableAlias.client_id = ? AND ?TableAlias.site_id = ?", clientID, row.SiteID).Scan(ctx); err != nil {
		return nil, nil, err
	}
	return row, sc, nil
}

// SiteClientOf finds the site's integration client whose OAuth client id
// is clientID, with its name (models.NotFound otherwise).
func SiteClientOf(ctx context.Context, db bun.IDB, siteID uuid.UUID, clientID string) (*SiteClient, error) {
	sc := new(SiteClient)
	err := siteClientQuery(db, sc).Where("?TableAlias.client_id = ? AND ?TableAlias.site_id = ?", clientID, siteID).Scan(ctx)
	if IsNoRows(err) {
		return nil, NotFound("OAuth client")
	}
	if err != nil {
		return nil, fmt.Errorf("find site client %s: %w", clientID, err)
	}
	return sc, nil
}

// DeleteSiteClient deletes the site's integration client id: its OAuth
// client, and with it (ON DELETE CASCADE) its site row and every token it
// holds, so its next request is refused.
func DeleteSiteClient(ctx context.Context, db bun.IDB, siteID, id uuid.UUID) error {
	res, err := db.NewDelete().Model((*OAuthClient)(nil)).
		Where("id = (SELECT client_id FROM site_clients WHERE id = ? AND site_id = ?)", id, siteID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("delete site client %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return NotFound("OAuth client")
	}
	return nil
}

// ClientTokenUse is what one request with an integration client's token
// reads: the client's role and rate limit, and its use of the current
// minute, this request counted.
type ClientTokenUse struct {
	Role  Role
	Limit int
	// Used is the requests of the current minute, this one included;
	// ResetSeconds the whole seconds until the minute ends (at least 1).
	Used, ResetSeconds int
	// Live is false for a revoked or unknown token, or a deleted client.
	Live bool
	// Locales are the site's locales (read with the token).
	Locales SiteLocales
}

// useClientTokenQuery checks the token and counts the request against its
// client's current minute (the database's clock, so every replica counts
// the same minute) in one statement. The UPDATE holds the client's row for
// the rest of the statement only: one client's requests queue behind each
// other for that long, nobody else's do.
const useClientTokenQuery = `UPDATE site_clients c SET ` + rateWindowSet + `
FROM sites s
WHERE c.client_id = $2 AND c.site_id = $3 AND s.id = c.site_id AND EXISTS (
    SELECT 1 FROM oauth_access_tokens t
    WHERE t.id = $1 AND t.client_id = $2 AND t.site_id = $3 AND t.user_id IS NULL AND t.revoked_at IS NULL)
RETURNING c.role, c.rate_limit, c.window_count, ` + rateWindowReset + `, ` + localeColumnsSQL

// rateWindowSet counts a request in its row's fixed minute (columns
// window_start and window_count, the database's clock, so every replica
// counts the same minute): the one rate limit of integration clients and
// preview links. rateWindowReset is the whole seconds until the minute
// ends (at least 1).
const (
	rateWindowSet = `window_count = CASE WHEN window_start = date_trunc('minute', now()) THEN window_count + 1 ELSE 1 END,
    window_start = date_trunc('minute', now())`
	rateWindowReset = `greatest(1, ceil(extract(epoch FROM window_start + interval '1 minute' - clock_timestamp())))::int`
)

// UseClientToken checks the integration client's access token id of site
// and counts the request against the client's rate limit (a prepared
// statement: every request with a client token runs it).
func UseClientToken(ctx context.Context, db bun.IDB, id uuid.UUID, clientID string, siteID uuid.UUID) (ClientTokenUse, error) {
	var u ClientTokenUse
	var role string
	var ls localeColumns
	err := ScanPrepared(ctx, db, useClientTokenQuery, []any{UUIDParam(id), clientID, UUIDParam(siteID)},
		&role, &u.Limit, &u.Used, &u.ResetSeconds, &ls.list, &ls.base, &ls.chains)
	if IsNoRows(err) {
		return ClientTokenUse{}, nil
	}
	if err == nil {
		u.Locales, err = ls.parse()
	}
	u.Role, u.Live = Role(role), err == nil
	return u, err
}

// Person is the user id a record made by a principal names: nil for
// uuid.Nil, the user of an integration client's principal (no person).
func Person(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}
