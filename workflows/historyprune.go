package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/pressroom/pressroom/models/drafts"
)

// HistoryPruneScheduleID names the schedule that runs PruneHistory (one
// per task queue: "<id>-<task queue>").
const HistoryPruneScheduleID = "pressroom-prune-history"

// HistoryPruneEvery is how often the schedule purges the trash and prunes
// old versions: retentions are counted in days (an hour at least), so
// records outlive theirs by an hour at most.
const HistoryPruneEvery = time.Hour

// pruneHistoryActivity is activities.HistoryPrune.PruneHistory.
const pruneHistoryActivity = "PruneHistory"

// PrunedHistory is what PruneHistory deleted (drafts.PruneHistory's count).
type PrunedHistory = drafts.PrunedHistory

// PruneHistory purges the trash past PRESSROOM_TRASH_RETENTION and the
// versions past PRESSROOM_VERSION_RETENTION, keeping the newest
// PRESSROOM_VERSION_KEEP of each record and every record a draft refers
// to (docs/history.md, "Bounded history"). The activity reads the
// retentions and the clock, so this stays deterministic; it deletes in
// bounded batches, heartbeating between them.
func PruneHistory(ctx workflow.Context) (PrunedHistory, error) {
	return runScheduled[PrunedHistory](ctx, pruneHistoryActivity, 30*time.Minute)
}
