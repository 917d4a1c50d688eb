package activities

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/workflows"
)

// AuditPrune holds what the PruneAuditEvents activity needs.
type AuditPrune struct {
	DB *bun.DB
	// Retention is PRESSROOM_AUDIT_RETENTION.
	Retention time.Duration
	Log       *slog.Logger
}

// PruneAuditEvents is the activity of the PruneAuditEvents workflow: it
// deletes the audit events created more than Retention ago
// (models.PruneAuditEvents), in batches of models.AuditPruneBatch,
// heartbeating the total after each. Idempotent: a second run finds
// nothing more to delete.
func (a *AuditPrune) PruneAuditEvents(ctx context.Context) (workflows.PrunedAuditEvents, error) {
	// A zero retention (built without its configuration) would delete the
	// whole trail: refuse it rather than trust the caller.
	if a.Retention < config.MinAuditRetention {
		return workflows.PrunedAuditEvents{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("audit retention %s is below the minimum %s", a.Retention, config.MinAuditRetention), "BadRetention", nil)
	}
	cutoff := time.Now().Add(-a.Retention)
	heartbeat := func(p models.PrunedAuditEvents) {
		if activity.IsActivity(ctx) {
			activity.RecordHeartbeat(ctx, p)
		}
	}
	p, err := models.PruneAuditEvents(ctx, a.DB, cutoff, models.AuditPruneBatch, heartbeat)
	if p.Events > 0 && a.Log != nil {
		a.Log.Info("pruned audit events", "events", p.Events, "before", cutoff)
	}
	return p, err
}
