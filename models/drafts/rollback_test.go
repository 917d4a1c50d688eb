package drafts_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
)

// A rollback of a revision some of whose versions were pruned is 409
// history_pruned, in the plan and in the revert, and changes nothing: it
// reverted what was left before (a part of the revision undone, 201).
func TestRollbackOfAPartlyPrunedRevision(t *testing.T) {
	t.Parallel()
	w := newEngineWorld(t)
	ctx := context.Background()
	w.create(drafts.Pages, "A", "")
	w.create(drafts.Pages, "B", "")
	w.publish("A", "B")
	w.update("A", drafts.Change{"title": "A2"})
	w.update("B", drafts.Change{"title": "B2"})
	w.publish("A", "B")
	var target uuid.UUID
	if err := w.db.NewRaw(`SELECT revision_id FROM versions WHERE item_id = ? ORDER BY created_at DESC LIMIT 1`, w.ids["A"]).Scan(ctx, &target); err != nil {
		t.Fatal(err)
	}
	// The version retention pruned A's version of the revision.
	if _, err := w.db.NewRaw(`DELETE FROM versions WHERE revision_id = ? AND item_id = ?`, target, w.ids["A"]).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	plan, err := w.e.PlanRevert(ctx, w.db, w.site, target, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Conflicts) != 1 || plan.Conflicts[0].Code != "history_pruned" {
		t.Errorf("plan conflicts = %v, want history_pruned", plan.Conflicts)
	}
	err = w.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		rev := &drafts.Revision{SiteRecord: models.NewSiteRecord(w.site), UserID: &w.user, Status: drafts.Publishing, DraftIDs: []uuid.UUID{}}
		if _, err := tx.NewInsert().Model(rev).Exec(ctx); err != nil {
			return err
		}
		return w.e.RevertRevision(ctx, tx, rev, target, true)
	})
	var me models.Errors
	if !errors.As(err, &me) || len(me) != 1 || me[0].Code != "history_pruned" || me[0].Kind != models.ErrConflict {
		t.Fatalf("revert of a partly pruned revision: %v, want 409 history_pruned", err)
	}
	if got := w.row("B")["title"]; got != "B2" {
		t.Errorf("B's title after the refused revert = %v, want B2", got)
	}
}
