package models

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// OAuthPruneBatch bounds the rows one pruning statement deletes: each
// statement is its own short transaction, whatever the backlog.
const OAuthPruneBatch = 5000

// PrunedOAuth counts what PruneExpiredOAuth deleted, per table.
type PrunedOAuth struct {
	AuthRequests   int `json:"auth_requests"`   // oauth_auth_requests (their codes with them)
	AccessTokens   int `json:"access_tokens"`   // oauth_access_tokens
	RefreshTokens  int `json:"refresh_tokens"`  // oauth_refresh_tokens
	LoginAttempts  int `json:"login_attempts"`  // oauth_login_attempts
	ThrottleCounts int `json:"throttle_counts"` // oauth_login_failures
	SigningKeys    int `json:"signing_keys"`    // oauth_signing_keys
	PasswordSetups int `json:"password_setups"` // password_setups
}

// PruneExpiredOAuth deletes the OAuth provider's rows that expired before
// cutoff, batch rows per statement, looping until none is left (docs/auth.md,
// "Expired rows"):
//
//   - authorization requests (with their codes), access tokens, refresh
//     tokens and sign-in attempts whose expires_at is before cutoff;
//   - throttle counts (oauth_login_failures) no longer counting anything:
//     their lock ended before cutoff, or they have none and their window
//     (window long) started before cutoff minus window;
//   - signing keys dropped from the JWKS before cutoff (their tokens have
//     all expired);
//   - password setup links (password_setups, docs/auth.md "Managing the
//     team") that expired before cutoff, used or not.
//
// Each of these already counts as absent everywhere it is read (an expired
// code or token is refused, a stale count is reset), so deleting it changes
// no answer: it only stops the tables growing. The caller chooses cutoff
// a little before now, for clocks that disagree. Rows another transaction
// holds locked are skipped until the next run; running it twice, or at
// once on two workers, is harmless. progress, if not nil, is called after
// every statement with the totals so far.
func PruneExpiredOAuth(ctx context.Context, db bun.IDB, cutoff time.Time, window time.Duration, batch int,
	progress func(PrunedOAuth)) (PrunedOAuth, error) {
	var done PrunedOAuth
	if batch <= 0 || window <= 0 {
		return done, fmt.Errorf("prune expired OAuth rows: batch %d and window %s must be positive", batch, window)
	}
	args := []any{cutoff, batch, window.Seconds()}
	steps := []PruneStep{
		{What: "expired OAuth authorization requests", Count: &done.AuthRequests, Args: args, Query: `DELETE FROM oauth_auth_requests WHERE id IN (
			SELECT id FROM oauth_auth_requests WHERE expires_at < ?0
			ORDER BY expires_at LIMIT ?1 FOR UPDATE SKIP LOCKED)`},
		{What: "expired OAuth access tokens", Count: &done.AccessTokens, Args: args, Query: `DELETE FROM oauth_access_tokens WHERE id IN (
			SELECT id FROM oauth_access_tokens WHERE expires_at < ?0
			ORDER BY expires_at LIMIT ?1 FOR UPDATE SKIP LOCKED)`},
		{What: "expired OAuth refresh tokens", Count: &done.RefreshTokens, Args: args, Query: `DELETE FROM oauth_refresh_tokens WHERE id IN (
			SELECT id FROM oauth_refresh_tokens WHERE expires_at < ?0
			ORDER BY expires_at LIMIT ?1 FOR UPDATE SKIP LOCKED)`},
		{What: "expired OAuth sign-in attempts", Count: &done.LoginAttempts, Args: args, Query: `DELETE FROM oauth_login_attempts WHERE (id, key) IN (
			SELECT id, key FROM oauth_login_attempts WHERE expires_at < ?0
			LIMIT ?1 FOR UPDATE SKIP LOCKED)`},
		// The throttle's own reset rules (api/oauth/throttle.go fail,
		// reserve, locked) treat these rows as no row at all.
		{What: "expired OAuth throttle counts", Count: &done.ThrottleCounts, Args: args, Query: `DELETE FROM oauth_login_failures WHERE key IN (
			SELECT key FROM oauth_login_failures
			WHERE locked_until < ?0 OR (locked_until IS NULL AND window_start < ?0::timestamptz - make_interval(secs => ?2))
			LIMIT ?1 FOR UPDATE SKIP LOCKED)`},
		{What: "expired OAuth signing keys", Count: &done.SigningKeys, Args: args, Query: `DELETE FROM oauth_signing_keys WHERE id IN (
			SELECT id FROM oauth_signing_keys WHERE drop_at < ?0
			LIMIT ?1 FOR UPDATE SKIP LOCKED)`},
		// An expired link is refused (410) whether its row is there or not.
		{What: "expired OAuth password setups", Count: &done.PasswordSetups, Args: args, Query: `DELETE FROM password_setups WHERE id IN (
			SELECT id FROM password_setups WHERE expires_at < ?0
			LIMIT ?1 FOR UPDATE SKIP LOCKED)`},
	}
	err := PruneInBatches(ctx, db, batch, steps, func() {
		if progress != nil {
			progress(done)
		}
	})
	return done, err
}
