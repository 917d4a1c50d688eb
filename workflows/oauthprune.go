package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/pressroom/pressroom/models"
)

// OAuthPruneScheduleID names the schedule that runs PruneExpiredOAuth (one
// per task queue, like the webhook schedules: "<id>-<task queue>").
const OAuthPruneScheduleID = "pressroom-prune-oauth"

// OAuthPruneEvery is how often the schedule prunes: authorization requests
// live ten minutes and access tokens two hours, so hourly runs keep the
// expired rows to about an hour's worth and each run's work small.
const OAuthPruneEvery = time.Hour

// pruneOAuthActivity is activities.OAuthPrune.PruneExpiredOAuth.
const pruneOAuthActivity = "PruneExpiredOAuth"

// PrunedOAuth is what PruneExpiredOAuth deleted, per table (the store's
// count, models.PruneExpiredOAuth): the Temporal UI shows it as each run's
// result.
type PrunedOAuth = models.PrunedOAuth

// PruneExpiredOAuth deletes the OAuth provider's expired rows:
// authorization requests and their codes, access and refresh tokens, stale
// throttle rows, dropped signing keys (docs/auth.md, "Expired rows"). The
// activity reads the clock and the throttle window itself, so this stays
// deterministic. It deletes in bounded batches and heartbeats between
// them; a retry, or the next run, goes on where it stopped.
func PruneExpiredOAuth(ctx workflow.Context) (PrunedOAuth, error) {
	return runScheduled[PrunedOAuth](ctx, pruneOAuthActivity, 30*time.Minute)
}
