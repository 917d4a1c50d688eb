package drafts_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
	"github.com/pressroom/pressroom/testsupport"
)

// PruneHistory purges the trash past its cut-off (every version of a
// trashed record, not a young one's, nor one a draft refers to) and the
// versions past theirs beyond the newest Keep of each record; a second run
// finds nothing.
func TestPruneHistory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testsupport.NewDatabase(t)
	site, err := models.CreateSite(ctx, db, "Demo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	rev := uuid.New()
	if _, err := db.NewRaw(`INSERT INTO revisions (id, site_id, status, draft_ids) VALUES (?, ?, 'published', '{}')`, rev, site.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	// versions writes a version of item per event, an hour apart, the
	// last at end.
	versions := func(item uuid.UUID, end time.Time, events ...string) {
		for i, ev := range events {
			at := end.Add(-time.Duration(len(events)-1-i) * time.Hour)
			if _, err := db.NewRaw(`INSERT INTO versions (id, site_id, revision_id, item_type, item_id, event, object_changes, created_at)
				VALUES (?, ?, ?, 'pages', ?, ?, '{}', ?)`, uuid.New(), site.ID, rev, item, ev, at).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	oldTrash, youngTrash, heldTrash, busy, short := uuid.New(), uuid.New(), uuid.New(), uuid.New(), uuid.New()
	versions(oldTrash, now.Add(-40*24*time.Hour), "create", "update", "delete")
	versions(youngTrash, now.Add(-time.Hour), "create", "delete")
	versions(heldTrash, now.Add(-40*24*time.Hour), "create", "delete")
	versions(busy, now.Add(-400*24*time.Hour), "create", "update", "update", "update", "update")
	versions(short, now.Add(-400*24*time.Hour), "create", "update")
	// A pending draft (a restore's create) refers to heldTrash.
	if _, err := db.NewRaw(`INSERT INTO drafts (id, site_id, item_type, item_id, event, drafted, object_changes)
		VALUES (?, ?, 'pages', ?, 'create', '{}', '{}')`, uuid.New(), site.ID, heldTrash).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	r := drafts.HistoryRetention{TrashCutoff: now.Add(-30 * 24 * time.Hour), VersionCutoff: now.Add(-365 * 24 * time.Hour), Keep: 3}
	calls := 0
	got, err := drafts.PruneHistory(ctx, db, r, 1, func(drafts.PrunedHistory) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if want := (drafts.PrunedHistory{Trashed: 3, Versions: 2}); got != want {
		t.Errorf("pruned %+v, want %+v", got, want)
	}
	if calls < 5 { // batches of one: one statement per row, and a short one per step
		t.Errorf("progress called %d times", calls)
	}
	left := map[uuid.UUID]int{}
	for _, id := range []uuid.UUID{oldTrash, youngTrash, heldTrash, busy, short} {
		n, err := db.NewSelect().Table("versions").Where("item_id = ?", id).Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		left[id] = int(n)
	}
	if left[oldTrash] != 0 || left[youngTrash] != 2 || left[heldTrash] != 2 || left[busy] != 3 || left[short] != 2 {
		t.Errorf("versions left: old trash %d, young trash %d, held trash %d, busy %d, short %d; want 0, 2, 2, 3, 2",
			left[oldTrash], left[youngTrash], left[heldTrash], left[busy], left[short])
	}
	again, err := drafts.PruneHistory(ctx, db, r, 100, nil)
	if err != nil || again != (drafts.PrunedHistory{}) {
		t.Errorf("second run pruned %+v (%v), want nothing", again, err)
	}
	if _, err := drafts.PruneHistory(ctx, db, drafts.HistoryRetention{Keep: 0}, 100, nil); err == nil {
		t.Error("keep 0 accepted")
	}
}
