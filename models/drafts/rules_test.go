package drafts_test

// Engine-level tests of the dependency rules (DESIGN.md §4): the
// publication order (pure), and closures, publishing and reverting on a
// real database.

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
	"github.com/pressroom/pressroom/testsupport"
)

func TestMain(m *testing.M) { os.Exit(testsupport.Main(m)) }

func fixedID(b byte) uuid.UUID {
	var id uuid.UUID
	for i := range id {
		id[i] = b
	}
	return id
}

// TestOrderFollowsThePageHierarchy: publication order puts a parent page's
// create before its child page's, and a child page's delete before its
// parent's, whatever the draft ids.
func TestOrderFollowsThePageHierarchy(t *testing.T) {
	parent, child := uuid.New(), uuid.New()
	for _, c := range []struct {
		event        string
		parentDraft  uuid.UUID
		childDraft   uuid.UUID
		parentBefore bool
	}{
		{drafts.EventCreate, fixedID(0xff), fixedID(0x00), true},
		{drafts.EventUpdate, fixedID(0xff), fixedID(0x00), true},
		{drafts.EventDelete, fixedID(0x00), fixedID(0xff), false},
	} {
		ds := []*drafts.Draft{
			{ID: c.parentDraft, ItemType: "pages", ItemID: parent, Event: c.event, Drafted: map[string]any{"parent_id": nil}},
			{ID: c.childDraft, ItemType: "pages", ItemID: child, Event: c.event, Drafted: map[string]any{"parent_id": parent.String()}},
		}
		got := drafts.Order(ds)
		if (got[0].ItemID == parent) != c.parentBefore {
			want := "parent first"
			if !c.parentBefore {
				want = "child first"
			}
			t.Errorf("BUG: Order of a parent page's and its child page's %s drafts = %s, %s; want %s (DESIGN.md §4; models/drafts/publish.go order() sorts within a kind by event and draft id only)",
				c.event, name(got[0], parent), name(got[1], parent), want)
		}
	}
	// Across kinds the order already holds: page, content, block.
	p, k, b := uuid.New(), uuid.New(), uuid.New()
	got := drafts.Order([]*drafts.Draft{
		{ID: fixedID(0x01), ItemType: "content-blocks", ItemID: b, Event: drafts.EventCreate},
		{ID: fixedID(0x02), ItemType: "contents", ItemID: k, Event: drafts.EventCreate},
		{ID: fixedID(0x03), ItemType: "pages", ItemID: p, Event: drafts.EventCreate},
	})
	if got[0].ItemID != p || got[1].ItemID != k || got[2].ItemID != b {
		t.Errorf("creates across kinds not parents first: %v", got)
	}
	got = drafts.Order([]*drafts.Draft{
		{ID: fixedID(0x01), ItemType: "pages", ItemID: p, Event: drafts.EventDelete},
		{ID: fixedID(0x02), ItemType: "contents", ItemID: k, Event: drafts.EventDelete},
		{ID: fixedID(0x03), ItemType: "content-blocks", ItemID: b, Event: drafts.EventDelete},
	})
	if got[0].ItemID != b || got[1].ItemID != k || got[2].ItemID != p {
		t.Errorf("deletes across kinds not children first: %v", got)
	}
}

func name(d *drafts.Draft, parent uuid.UUID) string {
	if d.ItemID == parent {
		return "parent"
	}
	return "child"
}

// engineWorld drives the engine directly on a test database.
type engineWorld struct {
	t      *testing.T
	db     *bun.DB // the pool itself, as the API and worker hand it to the engine
	e      *drafts.Engine
	site   uuid.UUID
	user   uuid.UUID
	ids    map[string]uuid.UUID
	kinds  map[string]*drafts.Kind
	byItem map[uuid.UUID]string
}

func newEngineWorld(t *testing.T) *engineWorld {
	t.Helper()
	db := testsupport.NewDatabase(t)
	ctx := context.Background()
	site, err := models.CreateSite(ctx, db, "Engine", "engine")
	if err != nil {
		t.Fatal(err)
	}
	u, err := models.CreateUser(ctx, db, site.ID, "engine@test", "Engine", "x")
	if err != nil {
		t.Fatal(err)
	}
	return &engineWorld{t: t, db: db.DB, e: drafts.NewEngine(config.Storage{}), site: site.ID, user: u.ID,
		ids: map[string]uuid.UUID{}, kinds: map[string]*drafts.Kind{}, byItem: map[uuid.UUID]string{}}
}

func (w *engineWorld) tx(fn func(ctx context.Context, tx bun.Tx) error) {
	w.t.Helper()
	if err := w.db.RunInTx(context.Background(), nil, fn); err != nil {
		w.t.Fatal(err)
	}
}

// create makes a record: a page (ref = parent name), content (page) or block (content).
func (w *engineWorld) create(k *drafts.Kind, name, ref string) {
	w.t.Helper()
	values := drafts.Change{}
	switch k {
	case drafts.Pages:
		values = drafts.Change{"page_type": "page", "slug": strings.ToLower(name), "title": name,
			"search_engine_indexable": true, "search_engine_followable": true}
		if ref != "" {
			values["parent_id"] = w.ids[ref].String()
		}
	case drafts.Contents:
		values = drafts.Change{"title": name, "position": 0, "page_id": w.ids[ref].String()}
	case drafts.ContentBlocks:
		values = drafts.Change{"var_name": name, "data_type": "text", "body": "", "position": 0, "content_id": w.ids[ref].String()}
	}
	w.tx(func(ctx context.Context, tx bun.Tx) error {
		v, err := w.e.Create(ctx, tx, k, w.site, w.user, values)
		if err == nil {
			w.ids[name], w.kinds[name], w.byItem[v.Row.ID()] = v.Row.ID(), k, name
		}
		return err
	})
}

func (w *engineWorld) update(name string, change drafts.Change) {
	w.t.Helper()
	w.tx(func(ctx context.Context, tx bun.Tx) error {
		cur, err := w.e.LockForWrite(ctx, tx, w.kinds[name], w.site, w.ids[name])
		if err != nil {
			return err
		}
		_, err = w.e.Update(ctx, tx, cur, w.site, w.user, change, nil)
		return err
	})
}

func (w *engineWorld) remove(name string) {
	w.t.Helper()
	w.tx(func(ctx context.Context, tx bun.Tx) error {
		cur, err := w.e.LockForWrite(ctx, tx, w.kinds[name], w.site, w.ids[name])
		if err != nil {
			return err
		}
		_, err = w.e.Delete(ctx, tx, cur, w.site, w.user, nil)
		return err
	})
}

func (w *engineWorld) draft(name string) *drafts.Draft {
	w.t.Helper()
	ds, err := drafts.DraftsOfItems(context.Background(), w.db, w.kinds[name].Type, []uuid.UUID{w.ids[name]})
	if err != nil {
		w.t.Fatal(err)
	}
	return ds[w.ids[name]]
}

// sameDependencies checks that drafts.Dependencies, walking the drafts of
// names at once, gives each what Closure of it alone pulls in (without
// itself), both ways.
func (w *engineWorld) sameDependencies(names ...string) {
	w.t.Helper()
	var ds []*drafts.Draft
	for _, n := range names {
		ds = append(ds, w.draft(n))
	}
	for _, dir := range []drafts.Direction{drafts.Publication, drafts.Reversion} {
		deps, err := drafts.Dependencies(context.Background(), w.db, w.site, ds, dir)
		if err != nil {
			w.t.Fatal(err)
		}
		for i, n := range names {
			got := []string{}
			for _, x := range deps[ds[i].ID] {
				got = append(got, w.byItem[x.ItemID]+":"+x.Event)
			}
			sort.Strings(got)
			if want := w.closure(n, dir); strings.Join(got, " ") != want {
				w.t.Errorf("Dependencies (%v) of %s among %v = %v, want %q (Closure of it alone)", dir, n, names, got, want)
			}
		}
	}
}

// closure names the records whose drafts the named record's draft pulls in.
func (w *engineWorld) closure(name string, dir drafts.Direction) string {
	w.t.Helper()
	d := w.draft(name)
	if d == nil {
		w.t.Fatalf("%s has no draft", name)
	}
	all, err := drafts.Closure(context.Background(), w.db, w.site, []*drafts.Draft{d}, dir, false)
	if err != nil {
		w.t.Fatal(err)
	}
	out := []string{}
	for _, x := range all {
		if x.ID != d.ID {
			out = append(out, w.byItem[x.ItemID]+":"+x.Event)
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// publish publishes the named records' drafts as one revision and returns
// its versions in order ("name:event").
func (w *engineWorld) publish(names ...string) []string {
	w.t.Helper()
	ctx := context.Background()
	rev := &drafts.Revision{SiteRecord: models.NewSiteRecord(w.site), UserID: &w.user, Status: drafts.Publishing}
	for _, n := range names {
		rev.DraftIDs = append(rev.DraftIDs, w.draft(n).ID)
	}
	w.tx(func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(rev).Exec(ctx); err != nil {
			return err
		}
		_, err := w.e.Publish(ctx, tx, rev.ID)
		return err
	})
	var vs []drafts.Version
	if err := w.db.NewSelect().Model(&vs).Where("revision_id = ?", rev.ID).Order("created_at", "id").Scan(ctx); err != nil {
		w.t.Fatal(err)
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = w.byItem[v.ItemID] + ":" + v.Event
	}
	return out
}

func (w *engineWorld) revert(name string) {
	w.t.Helper()
	d := w.draft(name)
	w.tx(func(ctx context.Context, tx bun.Tx) error { return w.e.Revert(ctx, tx, w.site, d.ID) })
}

// row returns the named record's row (nil when gone).
func (w *engineWorld) row(name string) drafts.Row {
	w.t.Helper()
	v, err := w.e.Load(context.Background(), w.db, w.kinds[name], w.site, w.ids[name], true)
	if err != nil {
		return nil
	}
	return v.Row
}

func TestEngineClosures(t *testing.T) {
	t.Parallel()
	w := newEngineWorld(t)
	// A created chain: G > P (pages) > K (content) > B (block).
	w.create(drafts.Pages, "G", "")
	w.create(drafts.Pages, "P", "G")
	w.create(drafts.Contents, "K", "P")
	w.create(drafts.ContentBlocks, "B", "K")
	for _, c := range []struct {
		name string
		dir  drafts.Direction
		want string
	}{
		{"B", drafts.Publication, "G:create K:create P:create"},
		{"K", drafts.Publication, "G:create P:create"},
		{"G", drafts.Publication, ""},
		{"G", drafts.Reversion, "B:create K:create P:create"},
		{"K", drafts.Reversion, "B:create"},
		{"B", drafts.Reversion, ""},
	} {
		if got := w.closure(c.name, c.dir); got != c.want {
			t.Errorf("closure (%v) of %s = %q, want %q", c.dir, c.name, got, c.want)
		}
	}
	w.sameDependencies("G", "P", "K", "B")
	vs := w.publish("B")
	if fmt.Sprint(vs[2:]) != "[K:create B:create]" || len(vs) != 4 {
		t.Errorf("versions = %v, want G and P, then K, then B", vs)
	}

	// Re-parenting: a live page moved under a created page.
	w.create(drafts.Pages, "N", "")
	w.update("K", drafts.Change{"page_id": w.ids["N"].String()})
	if got := w.closure("K", drafts.Publication); got != "N:create" {
		t.Errorf("publication closure of moving K under created N = %q", got)
	}
	if got := w.closure("N", drafts.Reversion); got != "K:update" {
		t.Errorf("reversion closure of N's create = %q, want K's update (drafted under N)", got)
	}
	w.sameDependencies("N", "K")
	w.revert("N")
	if w.draft("K") != nil || w.row("N") != nil {
		t.Errorf("reverting N's create left K's draft %v or N's row", w.draft("K"))
	}

	// Deleting G drafts deletes down the tree; reverting the block's delete
	// reverts its ancestors' deletes.
	w.remove("G")
	for _, n := range []string{"G", "P", "K", "B"} {
		if d := w.draft(n); d == nil || d.Event != drafts.EventDelete {
			t.Fatalf("%s's draft after deleting G = %v", n, d)
		}
	}
	if got := w.closure("G", drafts.Publication); got != "B:delete K:delete P:delete" {
		t.Errorf("publication closure of G's delete = %q", got)
	}
	if got := w.closure("B", drafts.Reversion); got != "G:delete K:delete P:delete" {
		t.Errorf("reversion closure of B's delete = %q", got)
	}
	if got := w.closure("P", drafts.Reversion); got != "G:delete" {
		t.Errorf("reversion closure of P's delete = %q", got)
	}
	w.sameDependencies("G", "P", "K", "B")
	w.sameDependencies("B", "P")
	w.revert("P")
	if w.draft("G") != nil || w.draft("P") != nil || w.draft("K") == nil || w.draft("B") == nil {
		t.Errorf("reverting P's delete: G %v P %v K %v B %v", w.draft("G"), w.draft("P"), w.draft("K"), w.draft("B"))
	}
	vs = w.publish("K")
	if fmt.Sprint(vs) != "[B:delete K:delete]" {
		t.Errorf("versions of K's delete = %v, want [B:delete K:delete]", vs)
	}
	if w.row("K") != nil || w.row("B") != nil || w.row("P") == nil {
		t.Error("publishing K's delete: wrong rows left")
	}
}

// TestEngineDeleteWithDraftedChild: a live page drafted under a page that
// is then deleted must not vanish without a delete version when the delete
// is published.
func TestEngineDeleteWithDraftedChild(t *testing.T) {
	t.Parallel()
	w := newEngineWorld(t)
	w.create(drafts.Pages, "P", "")
	w.create(drafts.Pages, "Y", "")
	w.publish("P")
	w.publish("Y")
	w.update("Y", drafts.Change{"parent_id": w.ids["P"].String()})
	w.remove("P")
	vs := w.publish("P")
	if w.row("Y") == nil {
		has := false
		for _, v := range vs {
			has = has || v == "Y:delete"
		}
		if !has {
			t.Errorf("BUG: publishing P's delete removed Y (drafted under P) without a delete version: versions %v (closure.go pulls Y's update in by its drafted parent_id, publish.go applies it, ON DELETE CASCADE deletes Y)", vs)
		}
	}
}
