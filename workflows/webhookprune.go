package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/pressroom/pressroom/models"
)

// WebhookPruneScheduleID names the schedule that runs PruneWebhookHistory
// (one per webhook task queue, like the sweep's: "<id>-<task queue>").
const WebhookPruneScheduleID = "pressroom-prune-webhook-history"

// WebhookPruneEvery is how often the schedule prunes. Retention is counted
// in days (PRESSROOM_WEBHOOK_RETENTION, 24h at least), so rows outlive it
// by an hour at most; hourly runs keep each run's work small.
const WebhookPruneEvery = time.Hour

// pruneWebhookActivity is activities.Webhooks.PruneWebhookHistory.
const pruneWebhookActivity = "PruneWebhookHistory"

// PrunedWebhookHistory is what PruneWebhookHistory deleted (the store's
// count, models.PruneWebhookHistory): the Temporal UI shows it as each
// run's result.
type PrunedWebhookHistory = models.PrunedWebhookHistory

// PruneWebhookHistory deletes webhook deliveries that ended and events
// older than the retention (docs/webhooks.md, "Retention"). The activity
// reads the retention from its worker's configuration and the clock, so
// this stays deterministic and a changed variable applies from the next
// run without touching the schedule. It deletes in bounded batches and
// heartbeats between them; a retry, or the next run, goes on where it
// stopped.
func PruneWebhookHistory(ctx workflow.Context) (PrunedWebhookHistory, error) {
	// A first run over a large backlog deletes for a while; each batch
	// commits, so a timeout loses nothing done.
	return runScheduled[PrunedWebhookHistory](ctx, pruneWebhookActivity, 30*time.Minute)
}
