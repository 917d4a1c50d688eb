package drafts_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
)

// comment writes a comment on typ/id as CreateComment does in a request.
func (w *engineWorld) comment(typ string, id uuid.UUID) uuid.UUID {
	w.t.Helper()
	c := &models.Comment{SiteRecord: models.NewSiteRecord(w.site), ItemType: typ, ItemID: id, UserID: &w.user, Body: "note"}
	w.tx(func(ctx context.Context, tx bun.Tx) error { return models.CreateComment(ctx, tx, c) })
	return c.ID
}

func (w *engineWorld) commentExists(id uuid.UUID) bool {
	w.t.Helper()
	ok, err := w.db.NewSelect().Table("comments").Where("id = ?", id).Exists(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	return ok
}

// A comment goes with its item, in the transaction that removes it: a
// draft's when the draft is published or reverted, a record's when its
// create is reverted before it was ever published (no trash keeps it) or
// when the trash purge takes it; a record whose deletion is published keeps
// its comments while it is in the trash. Its item linkage named an id that
// answered null.
func TestCommentsGoWithTheirItems(t *testing.T) {
	t.Parallel()
	w := newEngineWorld(t)
	ctx := context.Background()

	w.create(drafts.Pages, "Never", "")
	onNeverDraft, onNever := w.comment("drafts", w.draft("Never").ID), w.comment("pages", w.ids["Never"])
	w.revert("Never")
	if w.commentExists(onNeverDraft) || w.commentExists(onNever) {
		t.Errorf("comments of a reverted create (draft %v, page %v) outlived it", w.commentExists(onNeverDraft), w.commentExists(onNever))
	}

	w.create(drafts.Pages, "Live", "")
	onDraft, onPage := w.comment("drafts", w.draft("Live").ID), w.comment("pages", w.ids["Live"])
	w.publish("Live")
	if w.commentExists(onDraft) || !w.commentExists(onPage) {
		t.Errorf("after the publish: draft's comment %v (want gone), page's %v (want kept)", w.commentExists(onDraft), w.commentExists(onPage))
	}
	w.remove("Live")
	w.publish("Live")
	if !w.commentExists(onPage) {
		t.Error("a trashed page lost its comment (a restore brings it back under its id)")
	}
	r := drafts.HistoryRetention{TrashCutoff: time.Now().Add(time.Hour), VersionCutoff: time.Now().Add(-time.Hour), Keep: 1}
	if _, err := drafts.PruneHistory(ctx, w.db, r, 100, nil); err != nil {
		t.Fatal(err)
	}
	if w.commentExists(onPage) {
		t.Error("a page purged from the trash kept its comment")
	}
}

// CreateComment locks its item FOR KEY SHARE: a revert of the draft
// commented on meanwhile waits for the comment's commit, then takes the
// comment with it (read-then-write without a lock left a comment on a gone
// draft).
func TestCommentLocksItsItem(t *testing.T) {
	t.Parallel()
	w := newEngineWorld(t)
	ctx := context.Background()
	w.create(drafts.Pages, "P", "")
	d := w.draft("P")
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck // committed below
	c := &models.Comment{SiteRecord: models.NewSiteRecord(w.site), ItemType: "drafts", ItemID: d.ID, UserID: &w.user, Body: "note"}
	if err := models.CreateComment(ctx, tx, c); err != nil {
		t.Fatal(err)
	}
	reverted := make(chan error, 1)
	go func() {
		reverted <- w.db.RunInTx(ctx, nil, func(ctx context.Context, rtx bun.Tx) error { return w.e.Revert(ctx, rtx, w.site, d.ID) })
	}()
	select {
	case err := <-reverted:
		t.Fatalf("the revert did not wait for the comment on its draft: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-reverted; err != nil {
		t.Fatal(err)
	}
	if w.commentExists(c.ID) {
		t.Error("a comment written while its draft was reverted outlived it")
	}
}
