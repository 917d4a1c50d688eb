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
	"github.com/pressroom/pressroom/models/drafts"
	"github.com/pressroom/pressroom/workflows"
)

// HistoryPrune holds what the PruneHistory activity needs.
type HistoryPrune struct {
	DB        *bun.DB
	Retention config.HistoryRetention
	Log       *slog.Logger
}

// PruneHistory is the activity of the PruneHistory workflow: it purges the
// records trashed more than Retention.Trash ago and the versions older
// than Retention.Versions beyond the newest Retention.Keep of each record
// (drafts.PruneHistory), in batches of drafts.HistoryPruneBatch,
// heartbeating after each. Idempotent: a second run finds nothing more.
func (a *HistoryPrune) PruneHistory(ctx context.Context) (workflows.PrunedHistory, error) {
	// A zero retention (built without its configuration) would purge the
	// whole trash and history: refuse it rather than trust the caller.
	r := a.Retention
	if r.Trash < config.MinHistoryRetention || r.Versions < config.MinHistoryRetention || r.Keep < 1 {
		return workflows.PrunedHistory{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("history retention %+v is below the minimum %s (keep at least 1)", r, config.MinHistoryRetention), "BadRetention", nil)
	}
	now := time.Now()
	keep := drafts.HistoryRetention{TrashCutoff: now.Add(-r.Trash), VersionCutoff: now.Add(-r.Versions), Keep: r.Keep}
	heartbeat := func(p drafts.PrunedHistory) {
		if activity.IsActivity(ctx) {
			activity.RecordHeartbeat(ctx, p)
		}
	}
	p, err := drafts.PruneHistory(ctx, a.DB, keep, drafts.HistoryPruneBatch, heartbeat)
	if (p.Trashed > 0 || p.Versions > 0) && a.Log != nil {
		a.Log.Info("pruned history", "trashed", p.Trashed, "versions", p.Versions)
	}
	return p, err
}
