package e2e

// The trash and the bounded history (issue 31 §4, §5; docs/history.md):
// GET /<kind>?filter[trashed]=true, restoring a deleted page with its
// subpage and contents from the last version before the delete, and the
// PruneHistory schedule purging the trash and old versions.

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/worker"
	"github.com/pressroom/pressroom/workflows"
)

type trashDoc struct {
	Data []struct {
		ID            string
		Attributes    map[string]any
		Relationships map[string]struct{ Data *struct{ Type, ID string } }
		Links         map[string]any
		Meta          map[string]any
	}
	Meta map[string]any
}

// trash lists the kind typ's trash as e sees it, by id.
func (e *editor) trash(typ string) map[string]int {
	e.t.Helper()
	d := e.do(http.MethodGet, "/"+typ+"?filter[trashed]=true&page[size]=100", nil)
	if d.Status != 200 {
		e.t.Fatalf("GET /%s?filter[trashed]=true = %d %s", typ, d.Status, d.Raw)
	}
	var doc trashDoc
	if err := json.Unmarshal(d.Raw, &doc); err != nil {
		e.t.Fatal(err)
	}
	out := map[string]int{}
	for i, r := range doc.Data {
		if r.Attributes["trashed-at"] == nil || r.Relationships["trashed-by"].Data == nil || r.Relationships["trashed-by"].Data.Type != "revisions" ||
			r.Links != nil || r.Meta["version-id"] == nil {
			e.t.Errorf("trashed %s %s = %+v", typ, r.ID, r)
		}
		out[r.ID] = i
	}
	if doc.Meta["total"] != float64(len(doc.Data)) {
		e.t.Errorf("trash of %s: meta %v for %d records", typ, doc.Meta, len(doc.Data))
	}
	return out
}

func TestTrash(t *testing.T) {
	t.Parallel()
	s := start(t, func(c *config.Config) { c.History.Keep = 2 })
	e := s.editor(t, "editor@demo.test")
	home, hd := e.page("Home", "home", "")
	child, kd := e.page("Child", "child", home)
	content, cd := e.create("contents", map[string]any{"title": "Main"}, map[string]any{"page": ref("pages", home)})
	block, bd := e.create("content-blocks", map[string]any{"var-name": "intro", "body": "<p>hi</p>"}, map[string]any{"content": ref("contents", content)})
	childContent, ccd := e.create("contents", map[string]any{"title": "Aside"}, map[string]any{"page": ref("pages", child)})
	e.settle(hd, kd, cd, bd, ccd)
	e.settle(e.remove("pages", home))

	pages := e.trash("pages")
	if _, ok := pages[home]; !ok {
		t.Fatalf("trash of pages %v lacks the deleted page %s", pages, home)
	}
	if _, ok := pages[child]; !ok {
		t.Errorf("trash of pages %v lacks the subpage %s", pages, child)
	}
	for typ, id := range map[string]string{"contents": content, "content-blocks": block} {
		if _, ok := e.trash(typ)[id]; !ok {
			t.Errorf("trash of %s lacks %s", typ, id)
		}
	}
	if st := e.status("/pages?filter[trashed]=maybe"); st != 400 {
		t.Errorf("filter[trashed]=maybe = %d, want 400", st)
	}
	if st := e.status("/pages?filter[trashed]=true&sort=title"); st != 400 {
		t.Errorf("the trash sorted = %d, want 400", st)
	}
	if got := s.editor(t, "editor@other.test").trash("pages"); len(got) != 0 {
		t.Errorf("another site's trash = %v", got)
	}

	// Restore from the trash: the last version before the delete brings
	// back the page, its subpage and both contents and the block.
	h := e.history("/pages/" + home + "/versions")
	if h.Data[0].Attributes.Event != "delete" || len(h.Data) < 2 {
		t.Fatalf("history of the deleted page = %+v", h.Data)
	}
	st, r := restoreTwiceAtOnce(t, e, "/versions/"+h.Data[1].ID+"/restore")
	if st != 201 || r.Meta["drafts"] != float64(5) {
		t.Fatalf("restore from the trash = %d %+v", st, r)
	}
	if _, ok := e.trash("pages")[home]; ok {
		t.Errorf("a restored page (its create drafted) is still in the trash")
	}
	ids := []string{r.Data.ID}
	for _, inc := range r.Included {
		ids = append(ids, inc.ID)
	}
	e.settle(ids...)
	for typ, want := range map[string]map[string]string{
		"pages":          {home: "Home /home", child: "Child /home/child"},
		"contents":       {content: "Main", childContent: "Aside"},
		"content-blocks": {block: "<p>hi</p>"},
	} {
		for id, w := range want {
			if got := e.live(typ, id); got != w {
				t.Errorf("restored %s %s = %q, want %q", typ, id, got, w)
			}
		}
	}
	pruneHistory(t, s, e)
}

// restoreTwiceAtOnce posts the restore path twice at once: one is 201
// (its answer returned), the other a 409 the client understands
// (already_restored when both drafted at once, draft_pending when it
// came after), never the 500 of a raw pages_pkey violation.
func restoreTwiceAtOnce(t *testing.T, e *editor, path string) (int, restoreDoc) {
	t.Helper()
	type answer struct {
		status int
		raw    []byte
	}
	answers := make(chan answer, 2)
	for range 2 {
		go func() {
			d := e.do(http.MethodPost, path, nil)
			answers <- answer{d.Status, d.Raw}
		}()
	}
	a, b := <-answers, <-answers
	if a.status != 201 {
		a, b = b, a
	}
	var conflict struct{ Errors []struct{ Code string } }
	_ = json.Unmarshal(b.raw, &conflict)
	if a.status != 201 || b.status != 409 || len(conflict.Errors) != 1 ||
		(conflict.Errors[0].Code != "already_restored" && conflict.Errors[0].Code != "draft_pending") {
		t.Fatalf("two restores at once = %d and %d %s, want 201 and 409 already_restored or draft_pending", a.status, b.status, b.raw)
	}
	var r restoreDoc
	if err := json.Unmarshal(a.raw, &r); err != nil {
		t.Fatal(err)
	}
	return a.status, r
}

// pruneHistory: a page trashed past the retention is purged with its
// versions; a busy page keeps its newest Keep (2) versions past the
// version retention; a young trashed page stays.
func pruneHistory(t *testing.T, s *system, e *editor) {
	t.Helper()
	ctx := context.Background()
	old, od := e.page("Old", "old", "")
	e.settle(od)
	e.settle(e.remove("pages", old))
	young, yd := e.page("Young", "young", "")
	e.settle(yd)
	e.settle(e.remove("pages", young))
	busy, bd := e.page("Busy", "busy", "")
	e.settle(bd)
	for _, title := range []string{"Busy 2", "Busy 3", "Busy 4"} {
		e.settle(e.update("pages", busy, map[string]any{"title": title}, nil))
	}
	backdate := func(id string, by time.Duration) {
		if _, err := s.DB.NewRaw("UPDATE versions SET created_at = created_at - make_interval(secs => ?) WHERE item_id = ?",
			by.Seconds(), id).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	backdate(old, s.Config.History.Trash+time.Hour)
	backdate(busy, s.Config.History.Versions+time.Hour)

	if err := worker.EnsureSchedules(ctx, s.Temporal, s.Config); err != nil {
		t.Fatal(err)
	}
	hooks := s.Config.Webhooks.TaskQueue
	id := workflows.HistoryPruneScheduleID + "-" + s.Config.TaskQueue
	t.Cleanup(func() {
		for _, id := range []string{id, workflows.AuditPruneScheduleID + "-" + s.Config.TaskQueue, workflows.OAuthPruneScheduleID + "-" + s.Config.TaskQueue,
			workflows.WebhookSweepScheduleID + "-" + hooks, workflows.WebhookPruneScheduleID + "-" + hooks} {
			_ = s.Temporal.ScheduleClient().GetHandle(ctx, id).Delete(ctx)
		}
	})
	sched := s.Temporal.ScheduleClient().GetHandle(ctx, id)
	if err := sched.Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
		t.Fatal(err)
	}
	var run string
	for deadline := time.Now().Add(time.Minute); run == "" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if d, err := sched.Describe(ctx); err == nil && len(d.Info.RecentActions) > 0 {
			run = d.Info.RecentActions[0].StartWorkflowResult.WorkflowID
		}
	}
	if run == "" {
		t.Fatal("the triggered history prune did not start")
	}
	var got workflows.PrunedHistory
	wait, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := s.Temporal.GetWorkflow(wait, run, "").Get(wait, &got); err != nil {
		t.Fatalf("prune run %s: %v", run, err)
	}
	s.recordHistory(t, run, "prune-history.history.json")
	if got.Trashed != 2 || got.Versions != 2 {
		t.Errorf("prune run %s deleted %+v, want the old page's 2 versions and 2 of the busy page's 4", run, got)
	}
	trash := e.trash("pages")
	if _, ok := trash[old]; ok {
		t.Errorf("the page trashed past the retention is still in the trash")
	}
	if _, ok := trash[young]; !ok {
		t.Errorf("the young trashed page left the trash")
	}
	if st := e.status("/pages/" + old + "/versions"); st != 404 {
		t.Errorf("history of a purged page = %d, want 404", st)
	}
	var titles []string
	for _, v := range e.history("/pages/" + busy + "/versions").Data {
		titles = append(titles, v.Attributes.State.Attributes["title"].(string))
	}
	if !slices.Equal(titles, []string{"Busy 4", "Busy 3"}) {
		t.Errorf("busy page's history after the prune = %v, want its 2 newest", titles)
	}
}
