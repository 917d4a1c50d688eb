package drafts_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
	"github.com/pressroom/pressroom/testsupport"
)

// trashFixture is a site whose page parent and its two subpages were
// deleted 40 days ago by one revision (three delete versions, after a
// create each in an earlier one): all three in the trash past a 30-day
// retention.
type trashFixture struct {
	db                     *bun.DB
	site                   uuid.UUID
	parent, child1, child2 uuid.UUID
	parentDelete           uuid.UUID
	retention              drafts.HistoryRetention
}

func newTrashFixture(t *testing.T) *trashFixture {
	t.Helper()
	ctx := context.Background()
	db := testsupport.NewDatabase(t)
	site, err := models.CreateSite(ctx, db, "Demo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	f := &trashFixture{db: db.DB, site: site.ID, parent: uuid.New(), child1: uuid.New(), child2: uuid.New(), parentDelete: uuid.New()}
	now := time.Now()
	f.retention = drafts.HistoryRetention{TrashCutoff: now.Add(-30 * 24 * time.Hour), VersionCutoff: now.Add(-3650 * 24 * time.Hour), Keep: 3}
	created, deleted := uuid.New(), uuid.New()
	for _, rev := range []uuid.UUID{created, deleted} {
		if _, err := db.NewRaw(`INSERT INTO revisions (id, site_id, status, draft_ids, versions_count) VALUES (?, ?, 'published', '{}', 3)`, rev, site.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	at := now.Add(-41 * 24 * time.Hour)
	// The children's deletes come first (a purge batch of one takes a
	// child before its parent).
	for i, item := range []uuid.UUID{f.child1, f.child2, f.parent} {
		ms := time.Duration(i) * time.Millisecond
		del := uuid.New()
		if item == f.parent {
			del = f.parentDelete
		}
		for _, v := range []struct {
			id    uuid.UUID
			rev   uuid.UUID
			event string
			at    time.Time
		}{{uuid.New(), created, "create", at.Add(ms)}, {del, deleted, "delete", at.Add(24*time.Hour + ms)}} {
			if _, err := db.NewRaw(`INSERT INTO versions (id, site_id, revision_id, item_type, item_id, event, object_changes, snapshot, created_at)
				VALUES (?, ?, ?, 'pages', ?, ?, '{}', '{}', ?)`, v.id, site.ID, v.rev, item, v.event, v.at).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	return f
}

func (f *trashFixture) versionsOf(t *testing.T, item uuid.UUID) int {
	t.Helper()
	n, err := f.db.NewSelect().Table("versions").Where("item_id = ?", item).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// A restore holds its record's versions locked (LockVersion,
// LockStateEnd) in its transaction while it drafts the record back: the
// purge, on another connection meanwhile, skips the record and the
// children deleted with it; once the restore commits its draft refers to
// them, and the purge leaves them. Before the fix the purge judged "no
// draft" at its snapshot and deleted the versions under the restore.
func TestTrashPurgeSkipsARestoreInProgress(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newTrashFixture(t)
	restore, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer restore.Rollback() //nolint:errcheck // committed below
	v, err := drafts.LockVersion(ctx, restore, f.site, f.parentDelete, "pages", f.parent)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drafts.LockStateEnd(ctx, restore, v); err != nil {
		t.Fatal(err)
	}
	if _, err := restore.NewRaw(`INSERT INTO drafts (id, site_id, item_type, item_id, event, drafted, object_changes)
		VALUES (?, ?, 'pages', ?, 'create', '{}', '{}')`, uuid.New(), f.site, f.parent).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	// The purge, on the pool's other connections, while the restore is open.
	done := make(chan error, 1)
	var got drafts.PrunedHistory
	go func() {
		var err error
		got, err = drafts.PruneHistory(ctx, f.db, f.retention, 1, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the purge waited for the restore: it should skip the locked records")
	}
	if got.Trashed != 0 {
		t.Errorf("purged %d versions while the restore held them, want 0", got.Trashed)
	}
	if err := restore.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := drafts.PruneHistory(ctx, f.db, f.retention, 1, nil); err != nil {
		t.Fatal(err)
	}
	if p, c1, c2 := f.versionsOf(t, f.parent), f.versionsOf(t, f.child1), f.versionsOf(t, f.child2); p != 2 || c1 != 0 || c2 != 0 {
		// The children are purged once the restore has committed: its draft
		// refers to the parent only (a real restore drafts them too).
		t.Errorf("versions left: parent %d, children %d %d; want 2, 0, 0", p, c1, c2)
	}
}

// A purge batch takes whole records: a child's versions all at once, never
// some of them. A restore of the parent after a batch took one child of
// the revision that deleted them is 409 history_incomplete (it would
// bring the page back without it); a restore after the purge took the
// parent finds its version gone (404).
func TestTrashPurgeWholeRecordsAndIncompleteRestore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newTrashFixture(t)
	batches := 0
	var afterFirst error
	_, err := drafts.PruneHistory(ctx, f.db, f.retention, 1, func(p drafts.PrunedHistory) {
		batches++
		if batches != 1 {
			return
		}
		if c1, c2, p := f.versionsOf(t, f.child1), f.versionsOf(t, f.child2), f.versionsOf(t, f.parent); c1 != 0 || c2 != 2 || p != 2 {
			t.Errorf("after one batch: child1 %d, child2 %d, parent %d versions; want 0, 2, 2", c1, c2, p)
		}
		afterFirst = f.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			v, err := drafts.LockVersion(ctx, tx, f.site, f.parentDelete, "pages", f.parent)
			if err != nil {
				return err
			}
			_, err = drafts.LockStateEnd(ctx, tx, v)
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	var me *models.Error
	if !errors.As(afterFirst, &me) || me.Code != "history_incomplete" || me.Kind != models.ErrConflict {
		t.Errorf("restore after a partial purge: %v, want 409 history_incomplete", afterFirst)
	}
	_, err = drafts.LockVersion(ctx, f.db, f.site, f.parentDelete, "pages", f.parent)
	if !errors.As(err, &me) || me.Kind != models.ErrNotFound {
		t.Errorf("restore after the purge: %v, want 404", err)
	}
}

// Two restores of one deleted page at once both draft its create under
// its id: the second waits on the first's row, and once the first commits
// it is 409 already_restored (it was a raw pages_pkey violation, a 500).
func TestTrashConcurrentRestoresOfOneRecord(t *testing.T) {
	t.Parallel()
	w := newEngineWorld(t)
	ctx := context.Background()
	id := uuid.New()
	values := drafts.Change{"page_type": "page", "slug": "back", "title": "Back",
		"search_engine_indexable": true, "search_engine_followable": true}
	first, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Rollback() //nolint:errcheck // committed below
	if _, err := w.e.CreateAs(ctx, first, drafts.Pages, w.site, w.user, id, values); err != nil {
		t.Fatal(err)
	}
	second := make(chan error, 1)
	go func() {
		second <- w.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			_, err := w.e.CreateAs(ctx, tx, drafts.Pages, w.site, w.user, id, values)
			return err
		})
	}()
	select {
	case err := <-second:
		t.Fatalf("the second restore did not wait for the first: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := first.Commit(); err != nil {
		t.Fatal(err)
	}
	err = <-second
	var me *models.Error
	if !errors.As(err, &me) || me.Code != "already_restored" || me.Kind != models.ErrConflict || me.Meta["id"] != id.String() {
		t.Errorf("second restore: %v, want 409 already_restored naming the page", err)
	}
}

// Two restores of one trashed record wait for each other on LockVersion:
// the second drafts only once the first has committed (and then finds the
// record back with its draft: draft_pending), where both drafted its
// create at once and the second answered a page's path_taken by itself.
func TestTrashRestoresOfOneRecordWaitForEachOther(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newTrashFixture(t)
	first, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Rollback() //nolint:errcheck // committed below
	if _, err := drafts.LockVersion(ctx, first, f.site, f.parentDelete, "pages", f.parent); err != nil {
		t.Fatal(err)
	}
	second := make(chan error, 1)
	go func() {
		second <- f.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			_, err := drafts.LockVersion(ctx, tx, f.site, f.parentDelete, "pages", f.parent)
			return err
		})
	}()
	select {
	case err := <-second:
		t.Fatalf("the second restore did not wait for the first: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := first.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
}
