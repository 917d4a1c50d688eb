package activities

import (
	"context"
	"log/slog"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/workflows"
)

// OAuthPruneMargin is how long after its expiry a row is kept: the API
// compares expiry times with its own clock (with a few seconds' leeway for
// access tokens), so a worker whose clock runs ahead must not delete a row
// the API still honours.
const OAuthPruneMargin = 5 * time.Minute

// OAuthPrune holds the activity of the PruneExpiredOAuth workflow.
type OAuthPrune struct {
	DB *bun.DB
	// LoginWindow is the sign-in throttle's window
	// (PRESSROOM_LOGIN_WINDOW): a count older than it counts nothing.
	LoginWindow time.Duration
	Log         *slog.Logger
}

// PruneExpiredOAuth deletes the OAuth rows that expired more than
// OAuthPruneMargin ago (models.PruneExpiredOAuth), in batches of
// models.OAuthPruneBatch, heartbeating the totals after each. Idempotent: a
// second run finds nothing more to delete.
func (o *OAuthPrune) PruneExpiredOAuth(ctx context.Context) (workflows.PrunedOAuth, error) {
	// Without its window (an OAuthPrune built without the configuration)
	// the prune would delete throttle counts still counting: refuse.
	if o.LoginWindow <= 0 {
		return workflows.PrunedOAuth{}, temporal.NewNonRetryableApplicationError(
			"the sign-in throttle window is not set", "BadWindow", nil)
	}
	cutoff := time.Now().Add(-OAuthPruneMargin)
	heartbeat := func(p models.PrunedOAuth) {
		if activity.IsActivity(ctx) {
			activity.RecordHeartbeat(ctx, p)
		}
	}
	p, err := models.PruneExpiredOAuth(ctx, o.DB, cutoff, o.LoginWindow, models.OAuthPruneBatch, heartbeat)
	if p != (models.PrunedOAuth{}) && o.Log != nil {
		o.Log.Info("pruned expired OAuth rows", "auth_requests", p.AuthRequests, "access_tokens", p.AccessTokens,
			"refresh_tokens", p.RefreshTokens, "login_attempts", p.LoginAttempts, "throttle_counts", p.ThrottleCounts,
			"signing_keys", p.SigningKeys, "before", cutoff)
	}
	return p, err
}
