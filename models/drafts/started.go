package drafts

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
)

// A revision's publish workflow is started after the revision commits
// (docs/architecture.md, "From a commit to a workflow"): POST /revisions
// commits it, then starts the workflow and marks it started; the worker's
// commit sweep starts those a crash between the two left unstarted.

// MarkRevisionStarted records that the revision's publish workflow was
// started (by POST /revisions after the commit, or by the commit sweep). A
// start that Temporal refused is not marked, so the sweep tries it again.
func MarkRevisionStarted(ctx context.Context, db bun.IDB, revisionID uuid.UUID) error {
	if _, err := db.NewUpdate().Model((*Revision)(nil)).Set("started_at = now()").
		Where("id = ? AND started_at IS NULL", revisionID).Exec(ctx); err != nil {
		return fmt.Errorf("mark the revision's workflow started: %w", err)
	}
	return nil
}

// UnstartedRevisions locks, in tx and skipping rows another sweep holds, at
// most limit revisions publishing or scheduled, created before before,
// whose workflow was never started: the commit sweep starts them.
func UnstartedRevisions(ctx context.Context, tx bun.Tx, before time.Time, limit int) ([]Revision, error) {
	var revs []Revision
	err := tx.NewSelect().Model(&revs).
		Where("r.status IN (?, ?) AND r.started_at IS NULL AND r.created_at < ?", Publishing, Scheduled, before).
		OrderExpr("r.created_at").Limit(int64(limit)).For("UPDATE SKIP LOCKED").Scan(ctx)
	if err != nil && !models.IsNoRows(err) {
		return nil, fmt.Errorf("find unstarted revisions: %w", err)
	}
	return revs, nil
}

// RevisionCommitted tells whether the revision exists. Its workflow is
// started after its commit, so it always does, except for a run that an API
// before that change started inside the revision's transaction (a rolling
// upgrade) and that got ahead of the commit, or whose transaction rolled
// back: that run ends without publishing ("not-committed"), and if the
// revision commits after all, the commit sweep starts it again.
func RevisionCommitted(ctx context.Context, db bun.IDB, revisionID uuid.UUID) (bool, error) {
	ok, err := db.NewSelect().Model((*Revision)(nil)).Where("id = ?", revisionID).Exists(ctx)
	if err != nil {
		return false, fmt.Errorf("look for the revision: %w", err)
	}
	return ok, nil
}
