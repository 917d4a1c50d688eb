package models_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/testsupport"
)

// oauthRows writes OAuth rows that expire at given times.
type oauthRows struct {
	t          *testing.T
	db         *testsupport.Database
	site, user uuid.UUID
}

func newOAuthRows(t *testing.T, db *testsupport.Database) *oauthRows {
	t.Helper()
	ctx := context.Background()
	site, err := models.CreateSite(ctx, db, "Prune", "prune")
	if err != nil {
		t.Fatal(err)
	}
	u, err := models.CreateUser(ctx, db, site.ID, "prune@example.test", "Prune", "x")
	if err != nil {
		t.Fatal(err)
	}
	return &oauthRows{t: t, db: db, site: site.ID, user: u.ID}
}

// oauthInserts write one row of each table expiring at ?1 (for
// oauth_login_failures: locked until ?1; for oauth_signing_keys: dropped
// from the JWKS at ?1), keyed ?0.
var oauthInserts = map[string]string{
	"oauth_auth_requests": `INSERT INTO oauth_auth_requests (id, client_id, redirect_uri, response_type, browser_hash, state, expires_at)
		VALUES (?0::uuid, 'pressroom', 'urn:ietf:wg:oauth:2.0:oob', 'code', 'h', repeat('s', 1000), ?1)`,
	"oauth_access_tokens": `INSERT INTO oauth_access_tokens (id, site_id, user_id, client_id, expires_at)
		VALUES (?0::uuid, ?2, ?3, 'pressroom', ?1)`,
	"oauth_refresh_tokens": `INSERT INTO oauth_refresh_tokens (id, chain_id, token_hash, site_id, user_id, client_id, auth_time, expires_at)
		VALUES (?0::uuid, ?0::uuid, ?0, ?2, ?3, 'pressroom', now(), ?1)`,
	"oauth_login_attempts": `INSERT INTO oauth_login_attempts (id, key, expires_at) VALUES (?0::uuid, 'user:' || ?0, ?1)`,
	"oauth_login_failures": `INSERT INTO oauth_login_failures (key, failures, window_start, locked_until)
		VALUES (?0, 20, ?1::timestamptz - interval '1 hour', ?1)`,
	"oauth_signing_keys": `INSERT INTO oauth_signing_keys (id, algorithm, private_pem, retire_at, drop_at)
		VALUES (?0, 'RS256', 'not a key', ?1::timestamptz - interval '1 day', ?1)`,
	"password_setups": `INSERT INTO password_setups (id, site_id, user_id, token_hash, expires_at)
		VALUES (?0::uuid, ?2, ?3, encode(sha256(convert_to(?0, 'UTF8')), 'hex'), ?1)`,
}

// oauthKeys is the key column of each table (the one ?0 fills).
var oauthKeys = map[string]string{
	"oauth_auth_requests": "id", "oauth_access_tokens": "id", "oauth_refresh_tokens": "id",
	"oauth_login_attempts": "id", "oauth_login_failures": "key", "oauth_signing_keys": "id",
	"password_setups": "id",
}

// add writes a row to table expiring at at and returns its key.
func (o *oauthRows) add(table string, at time.Time) string {
	o.t.Helper()
	key := uuid.NewString()
	if _, err := o.db.NewRaw(oauthInserts[table], key, at, o.site, o.user).Exec(context.Background()); err != nil {
		o.t.Fatalf("%s: %v", table, err)
	}
	return key
}

// addCount writes a throttle count without a lock whose window started at start.
func (o *oauthRows) addCount(start time.Time) string {
	o.t.Helper()
	key := "addr:" + uuid.NewString()
	if _, err := o.db.NewRaw(`INSERT INTO oauth_login_failures (key, failures, window_start) VALUES (?, 3, ?)`, key, start).
		Exec(context.Background()); err != nil {
		o.t.Fatal(err)
	}
	return key
}

// left returns which of keys table still holds.
func (o *oauthRows) left(table string, keys ...string) map[string]bool {
	o.t.Helper()
	var found []string
	col := bun.Ident(oauthKeys[table])
	if err := o.db.NewRaw("SELECT ?::text FROM ? WHERE ?::text IN (?)", col, bun.Ident(table), col, bun.In(keys)).
		Scan(context.Background(), &found); err != nil {
		o.t.Fatal(err)
	}
	out := map[string]bool{}
	for _, k := range found {
		out[k] = true
	}
	return out
}

// Rows that expired before the cut-off go from every table, in batches;
// rows expiring after it stay, as do throttle counts still counting or
// locking; a second run deletes nothing.
func TestPruneExpiredOAuth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testsupport.NewDatabase(t)
	o := newOAuthRows(t, db)
	now := time.Now()
	window := 15 * time.Minute
	gone, kept := map[string][]string{}, map[string][]string{}
	for table := range oauthInserts {
		for _, ago := range []time.Duration{time.Hour, time.Minute, 48 * time.Hour} {
			gone[table] = append(gone[table], o.add(table, now.Add(-ago)))
		}
		for _, ahead := range []time.Duration{time.Second, time.Hour} {
			kept[table] = append(kept[table], o.add(table, now.Add(ahead)))
		}
	}
	// Counts without a lock: stale once their window started a window ago.
	counts := "oauth_login_failures"
	gone[counts] = append(gone[counts], o.addCount(now.Add(-window-time.Minute)))
	kept[counts] = append(kept[counts], o.addCount(now.Add(-window+time.Minute)))

	var calls int
	got, err := models.PruneExpiredOAuth(ctx, db, now, window, 2, func(models.PrunedOAuth) { calls++ })
	want := models.PrunedOAuth{AuthRequests: 3, AccessTokens: 3, RefreshTokens: 3, LoginAttempts: 3, ThrottleCounts: 4, SigningKeys: 3, PasswordSetups: 3}
	if err != nil || got != want {
		t.Fatalf("pruned %+v, %v; want %+v", got, err, want)
	}
	// Batches of 2: two statements for 3 rows, three for 4, in 7 tables.
	if calls != 2*6+3 {
		t.Errorf("progress called %d times, want 15 (one per statement)", calls)
	}
	for table := range oauthInserts {
		all := append(append([]string{}, gone[table]...), kept[table]...)
		left := o.left(table, all...)
		for _, k := range gone[table] {
			if left[k] {
				t.Errorf("%s: expired %s is left", table, k)
			}
		}
		for _, k := range kept[table] {
			if !left[k] {
				t.Errorf("%s: live %s was deleted", table, k)
			}
		}
	}
	if again, err := models.PruneExpiredOAuth(ctx, db, now, window, 2, nil); err != nil || again != (models.PrunedOAuth{}) {
		t.Errorf("second run pruned %+v, %v", again, err)
	}
	if _, err := models.PruneExpiredOAuth(ctx, db, now, 0, 2, nil); err == nil {
		t.Error("a zero window was accepted")
	}
}
