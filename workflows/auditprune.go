package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/pressroom/pressroom/models"
)

// AuditPruneScheduleID names the schedule that runs PruneAuditEvents (one
// per task queue: "<id>-<task queue>").
const AuditPruneScheduleID = "pressroom-prune-audit-events"

// AuditPruneEvery is how often the schedule prunes: retention is counted
// in days, so rows outlive it by an hour at most.
const AuditPruneEvery = time.Hour

// pruneAuditActivity is activities.AuditPrune.PruneAuditEvents.
const pruneAuditActivity = "PruneAuditEvents"

// PrunedAuditEvents is what PruneAuditEvents deleted.
type PrunedAuditEvents = models.PrunedAuditEvents

// PruneAuditEvents deletes the audit events older than the retention
// (docs/audit.md, "Retention"). The activity reads the retention from its
// worker's configuration and the clock, so this stays deterministic and a
// changed variable applies from the next run. It deletes in bounded
// batches, each committed, heartbeating between them.
func PruneAuditEvents(ctx workflow.Context) (PrunedAuditEvents, error) {
	return runScheduled[PrunedAuditEvents](ctx, pruneAuditActivity, 30*time.Minute)
}
