package activities

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/workflows"
)

// PruneWebhookHistory is the activity of the PruneWebhookHistory workflow:
// it deletes the deliveries that ended and the events created more than
// Config.Retention ago (models.PruneWebhookHistory: never a pending
// delivery or its event), in batches of models.WebhookPruneBatch,
// heartbeating the totals after each. Idempotent: a second run finds
// nothing more to delete.
func (w *Webhooks) PruneWebhookHistory(ctx context.Context) (workflows.PrunedWebhookHistory, error) {
	// A zero retention (Webhooks built without its configuration) would
	// delete every finished delivery: refuse it rather than trust the caller.
	if w.Config.Retention < config.MinWebhookRetention {
		return workflows.PrunedWebhookHistory{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("webhook retention %s is below the minimum %s", w.Config.Retention, config.MinWebhookRetention), "BadRetention", nil)
	}
	cutoff := time.Now().Add(-w.Config.Retention)
	heartbeat := func(p models.PrunedWebhookHistory) {
		if activity.IsActivity(ctx) {
			activity.RecordHeartbeat(ctx, p)
		}
	}
	p, err := models.PruneWebhookHistory(ctx, w.DB, cutoff, models.WebhookPruneBatch, heartbeat)
	if (p.Deliveries > 0 || p.Events > 0) && w.Log != nil {
		w.Log.Info("pruned webhook history", "deliveries", p.Deliveries, "events", p.Events, "before", cutoff)
	}
	return p, err
}
