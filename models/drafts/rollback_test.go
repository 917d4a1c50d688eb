package drafts_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

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

// publishInLocale records what publishing a locale draft of the named
// page does (part 2 of docs/plans/locales.md publishes them; this test
// needs only its outcome): the page's translations take values, and a
// published revision holds one version of locale tag, its object-changes
// keyed "title@de". It returns the revision's id.
func (w *engineWorld) publishInLocale(name, tag string, values map[string]string) uuid.UUID {
	w.t.Helper()
	rev := &drafts.Revision{SiteRecord: models.NewSiteRecord(w.site), UserID: &w.user, Status: drafts.Published, DraftIDs: []uuid.UUID{}, VersionsCount: 1}
	w.tx(func(ctx context.Context, tx bun.Tx) error {
		var before []byte
		if err := tx.NewRaw("SELECT to_jsonb(t) FROM pages t WHERE id = ? FOR UPDATE", w.ids[name]).Scan(ctx, &before); err != nil {
			return err
		}
		oc := map[string]any{}
		old := w.row(name)
		for k, v := range values {
			oc[k+"@"+tag] = []any{old[k+"@"+tag], v}
			if _, err := tx.NewRaw("UPDATE pages SET translations = translations || jsonb_build_object(?::text, ?::text), version = version + 1 WHERE id = ?",
				k+"@"+tag, v, w.ids[name]).Exec(ctx); err != nil {
				return err
			}
		}
		var after []byte
		if err := tx.NewRaw("SELECT to_jsonb(t) FROM pages t WHERE id = ?", w.ids[name]).Scan(ctx, &after); err != nil {
			return err
		}
		if _, err := tx.NewInsert().Model(rev).Exec(ctx); err != nil {
			return err
		}
		v := &drafts.Version{SiteRow: models.SiteRow{ID: uuid.New(), SiteID: w.site, CreatedAt: time.Now().UTC()}, RevisionID: rev.ID,
			ItemType: "pages", ItemID: w.ids[name], Event: drafts.EventUpdate, ObjectChanges: oc, Snapshot: before, State: after, UserID: &w.user, Locale: tag}
		_, err := tx.NewInsert().Model(v).Exec(ctx)
		return err
	})
	return rev.ID
}

// revertRevision reverts the revision target (force as given) and returns
// the versions the revert wrote.
func (w *engineWorld) revertRevision(target uuid.UUID, force bool) ([]drafts.Version, error) {
	w.t.Helper()
	ctx := context.Background()
	rev := &drafts.Revision{SiteRecord: models.NewSiteRecord(w.site), UserID: &w.user, Status: drafts.Publishing, DraftIDs: []uuid.UUID{}}
	err := w.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return w.e.RevertRevision(ctx, tx, rev, target, force) })
	if err != nil {
		return nil, err
	}
	var vs []drafts.Version
	err = w.db.NewSelect().Model(&vs).Where("revision_id = ?", rev.ID).Order("created_at").Scan(ctx)
	return vs, err
}

// lastRevision is the revision of the named record's newest version.
func (w *engineWorld) lastRevision(name string) uuid.UUID {
	w.t.Helper()
	var id uuid.UUID
	if err := w.db.NewRaw(`SELECT revision_id FROM versions WHERE item_id = ? ORDER BY created_at DESC LIMIT 1`, w.ids[name]).Scan(context.Background(), &id); err != nil {
		w.t.Fatal(err)
	}
	return id
}

// A rollback of a locale's revision restores that locale's values only,
// writes its version in that locale, and is judged per locale: a later
// revision or a pending draft of another locale is no conflict, one of
// the same locale is (docs/plans/locales.md §2.6).
func TestRollbackRestoresOnlyItsLocale(t *testing.T) {
	t.Parallel()
	w := newEngineWorld(t)
	ctx := context.Background()
	if _, err := w.db.NewRaw(`UPDATE sites SET locales = '{en,de,fr}', locale_chains = '{"en":["en"],"de":["de","en"],"fr":["fr","en"]}' WHERE id = ?`, w.site).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	w.create(drafts.Pages, "A", "")
	w.publish("A")
	german1 := w.publishInLocale("A", "de", map[string]string{"title": "Über A", "slug": "ueber-a"})
	w.update("A", drafts.Change{"title": "A2"})
	w.publish("A")
	english := w.lastRevision("A")
	german2 := w.publishInLocale("A", "de", map[string]string{"title": "Über A2"})
	w.publishInLocale("A", "fr", map[string]string{"title": "Le A"})

	// The English revision: German and French revisions since are no
	// conflict, and neither locale moves.
	plan, err := w.e.PlanRevert(ctx, w.db, w.site, english, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Conflicts) != 0 || len(plan.Steps) != 1 {
		t.Fatalf("plan of the English revert: conflicts %v, steps %d; want none and 1", plan.Conflicts, len(plan.Steps))
	}
	vs, err := w.revertRevision(english, false)
	if err != nil {
		t.Fatal(err)
	}
	row := w.row("A")
	if row["title"] != "A" || row["title@de"] != "Über A2" || row["slug@de"] != "ueber-a" || row["title@fr"] != "Le A" {
		t.Errorf("after the English revert: title %v, title@de %v, slug@de %v, title@fr %v; want A, Über A2, ueber-a, Le A",
			row["title"], row["title@de"], row["slug@de"], row["title@fr"])
	}
	if len(vs) != 1 || vs[0].Locale != "" || fmt.Sprint(vs[0].ObjectChanges) != "map[title:[A2 A]]" {
		t.Errorf("the English revert's versions = %+v, want one shared, title [A2 A]", vs)
	}

	// The second German revision: German only, back to the first's title.
	vs, err = w.revertRevision(german2, false)
	if err != nil {
		t.Fatal(err)
	}
	row = w.row("A")
	if row["title"] != "A" || row["title@de"] != "Über A" || row["slug@de"] != "ueber-a" || row["title@fr"] != "Le A" {
		t.Errorf("after the German revert: title %v, title@de %v, slug@de %v, title@fr %v; want A, Über A, ueber-a, Le A",
			row["title"], row["title@de"], row["slug@de"], row["title@fr"])
	}
	if len(vs) != 1 || vs[0].Locale != "de" || fmt.Sprint(vs[0].ObjectChanges) != "map[title@de:[Über A2 Über A]]" {
		t.Errorf("the German revert's versions = %+v, want one in de, title@de [Über A2 Über A]", vs)
	}

	// The first German revision: the German revert since is a conflict
	// (without force); a pending German draft always is, a pending French
	// one is not.
	plan, err = w.e.PlanRevert(ctx, w.db, w.site, german1, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Conflicts) != 1 || plan.Conflicts[0].Code != "revert_conflict" {
		t.Errorf("plan of the first German revert: conflicts %v, want one revert_conflict (a later German revision)", plan.Conflicts)
	}
	pending := func(tag string) uuid.UUID {
		id := uuid.New()
		if _, err := w.db.NewRaw(`INSERT INTO drafts (id, site_id, item_type, item_id, event, locale, drafted, object_changes, user_id, created_at, updated_at, version)
VALUES (?, ?, 'pages', ?, 'update', ?, jsonb_build_object('title@' || ?::text, 'x'), '{}', ?, now(), now(), 1)`, id, w.site, w.ids["A"], tag, tag, w.user).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		return id
	}
	fr := pending("fr")
	plan, err = w.e.PlanRevert(ctx, w.db, w.site, german1, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Conflicts) != 0 {
		t.Errorf("forced plan of the first German revert with a French draft pending: conflicts %v, want none", plan.Conflicts)
	}
	pending("de")
	plan, err = w.e.PlanRevert(ctx, w.db, w.site, german1, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Conflicts) != 1 || plan.Conflicts[0].Code != "revert_conflict" {
		t.Errorf("forced plan with a German draft pending: conflicts %v, want one revert_conflict", plan.Conflicts)
	}
	if _, err := w.db.NewRaw("DELETE FROM drafts WHERE item_id = ? AND locale = 'de'", w.ids["A"]).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	// Forced: the German values go back to none (the keys are gone: the
	// read falls back), the French draft and values stay.
	if _, err := w.revertRevision(german1, true); err != nil {
		t.Fatal(err)
	}
	row = w.row("A")
	_, hasTitle := row["title@de"]
	_, hasSlug := row["slug@de"]
	if hasTitle || hasSlug || row["title"] != "A" || row["title@fr"] != "Le A" {
		t.Errorf("after the forced first German revert: %v; want no German values, title A, title@fr Le A", row)
	}
	var left int
	if err := w.db.NewRaw("SELECT count(*) FROM drafts WHERE id = ?", fr).Scan(ctx, &left); err != nil || left != 1 {
		t.Errorf("the French draft after the German revert: %d (%v), want kept", left, err)
	}
}
