package e2e

// A record's history (issue 31, docs/history.md): GET /<kind>/:id/versions
// newest first by cursor, each version's state, and as-of reads.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

type historyDoc struct {
	Data []struct {
		ID         string
		Attributes struct {
			Event         string
			ObjectChanges map[string]any `json:"object-changes"`
			State         *struct {
				Attributes    map[string]any
				Relationships map[string]struct{ Data *struct{ Type, ID string } }
			}
			CreatedAt string `json:"created-at"`
		}
		Relationships map[string]struct{ Data json.RawMessage }
	}
	Links struct{ Self, First, Next string }
	Meta  map[string]any
}

func (e *editor) history(path string) historyDoc {
	e.t.Helper()
	d := e.do(http.MethodGet, path, nil)
	if d.Status != 200 {
		e.t.Fatalf("GET %s = %d %s", path, d.Status, d.Raw)
	}
	var h historyDoc
	if err := json.Unmarshal(d.Raw, &h); err != nil {
		e.t.Fatal(err)
	}
	return h
}

func TestRecordHistory(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	parent, pd := e.page("Parent", "parent", "")
	id, d0 := e.page("Story", "story", "")
	e.settle(pd, d0)
	var stamps []string // a time after each published change
	mark := func() {
		time.Sleep(5 * time.Millisecond)
		stamps = append(stamps, time.Now().UTC().Format(time.RFC3339Nano))
		time.Sleep(5 * time.Millisecond)
	}
	mark()
	for _, title := range []string{"Story 2", "Story 3", "Story 4"} {
		e.settle(e.update("pages", id, map[string]any{"title": title}, nil))
		mark()
	}
	e.settle(e.update("pages", id, nil, map[string]any{"parent": ref("pages", parent)}))
	mark()

	// Newest first, paged by cursor; each link answers.
	h := e.history("/pages/" + id + "/versions?page[size]=2")
	if len(h.Data) != 2 || h.Links.Next == "" {
		t.Fatalf("first page = %+v", h)
	}
	var all []string
	events := []string{}
	var titles []any
	for next := "/pages/" + id + "/versions?page[size]=2"; next != ""; {
		h := e.history(next)
		for _, v := range h.Data {
			all = append(all, v.ID)
			events = append(events, v.Attributes.Event)
			if v.Attributes.State == nil {
				t.Fatalf("version %s without state", v.ID)
			}
			titles = append(titles, v.Attributes.State.Attributes["title"])
			if len(v.Relationships["revision"].Data) == 0 || len(v.Relationships["user"].Data) == 0 {
				t.Errorf("version relationships = %v", v.Relationships)
			}
		}
		next = ""
		if h.Links.Next != "" {
			u, _ := url.Parse(h.Links.Next)
			next = u.RequestURI()
		}
	}
	if strings.Join(events, ",") != "update,update,update,update,create" {
		t.Fatalf("events = %v", events)
	}
	wantTitles := []any{"Story 4", "Story 4", "Story 3", "Story 2", "Story"}
	for i, w := range wantTitles {
		if titles[i] != w {
			t.Errorf("state %d title = %v, want %v", i, titles[i], w)
		}
	}
	h = e.history("/pages/" + id + "/versions")
	moved := h.Data[0].Attributes
	if moved.State.Relationships["parent"].Data == nil || moved.State.Relationships["parent"].Data.ID != parent ||
		moved.State.Attributes["path"] != "/parent/story" {
		t.Errorf("state after the move = %+v", moved.State)
	}

	// as-of: a version id, and times.
	asOf := func(q string) (int, resource, map[string]any) {
		d := e.do(http.MethodGet, "/pages/"+id+"?as-of="+url.QueryEscape(q), nil)
		var m struct{ Meta map[string]any }
		_ = json.Unmarshal(d.Raw, &m)
		if d.Status != 200 {
			return d.Status, resource{}, nil
		}
		return d.Status, d.resource(t), m.Meta
	}
	if st, r, meta := asOf(all[3]); st != 200 || r.Attributes["title"] != "Story 2" || meta["version-id"] != all[3] {
		t.Errorf("as-of version = %d %v %v", st, r.Attributes, meta)
	}
	if st, r, _ := asOf(stamps[0]); st != 200 || r.Attributes["title"] != "Story" || r.Attributes["path"] != "/story" {
		t.Errorf("as-of %s = %d %v", stamps[0], st, r.Attributes)
	}
	if st, r, _ := asOf(stamps[2]); st != 200 || r.Attributes["title"] != "Story 3" {
		t.Errorf("as-of %s = %d %v", stamps[2], st, r.Attributes)
	}
	if st, _, _ := asOf("2000-01-01T00:00:00Z"); st != 404 {
		t.Errorf("as-of before the create = %d, want 404", st)
	}
	if st := e.status("/pages/" + id + "?as-of=yesterday"); st != 400 {
		t.Errorf("as-of=yesterday = %d, want 400", st)
	}

	compareAndRestore(t, e, parent, id, all)
	content, cd := e.create("contents", map[string]any{"title": "Main"}, map[string]any{"page": ref("pages", id)})
	block, bd := e.create("content-blocks", map[string]any{"var-name": "intro", "body": "<p>hi</p>"}, map[string]any{"content": ref("contents", content)})
	e.settle(cd, bd)
	mark()

	// A delete: the history stays, as-of after it is 404, before it 200.
	e.settle(e.remove("pages", id))
	mark()
	h = e.history("/pages/" + id + "/versions")
	if len(h.Data) != 7 || h.Data[0].Attributes.Event != "delete" || h.Data[0].Attributes.State != nil {
		t.Fatalf("history after the delete = %+v", h.Data)
	}
	if st, _, _ := asOf(stamps[len(stamps)-1]); st != 404 {
		t.Errorf("as-of after the delete = %d, want 404", st)
	}
	if st, r, _ := asOf(stamps[len(stamps)-2]); st != 200 || r.Attributes["path"] != "/story" || r.Attributes["title"] != "Story 2" {
		t.Errorf("as-of before the delete = %d %v", st, r.Attributes)
	}
	restoreDeleted(t, e, id, content, block, h.Data[0].ID)

	// Tenancy: another site's editor gets 404 for all of it.
	other := s.editor(t, "editor@other.test")
	for _, p := range []string{"/pages/" + id + "/versions", "/pages/" + id + "?as-of=" + all[0], "/pages/" + parent + "/versions"} {
		if st := other.status(p); st != 404 {
			t.Errorf("other site GET %s = %d, want 404", p, st)
		}
	}
	for _, p := range []string{"/versions/" + all[0] + "/compare/" + all[1], "/version-comparisons/" + all[0] + ".." + all[1]} {
		if st := other.status(p); st != 404 {
			t.Errorf("other site GET %s = %d, want 404", p, st)
		}
	}
	if st, _ := other.restoreVersion("/versions/" + all[0] + "/restore"); st != 404 {
		t.Errorf("other site restore = %d, want 404", st)
	}
	if st := e.status("/pages/00000000-0000-0000-0000-000000000001/versions"); st != 404 {
		t.Errorf("unknown page's history = %d, want 404", st)
	}
	if st := e.status("/pages/" + id + "/versions?page[after]=nonsense"); st != 400 {
		t.Errorf("bad cursor = %d, want 400", st)
	}
}

type restoreDoc struct {
	Data struct {
		ID         string
		Attributes map[string]any
	}
	Included []struct{ ID string }
	Meta     map[string]any
	Errors   []struct {
		Code string
		Meta map[string]any
	}
}

func (e *editor) restoreVersion(path string) (int, restoreDoc) {
	e.t.Helper()
	d := e.do(http.MethodPost, path, nil)
	var r restoreDoc
	_ = json.Unmarshal(d.Raw, &r)
	return d.Status, r
}

// compareAndRestore: compare two versions, a version with the draft, and
// restore a version of the live page over its draft.
func compareAndRestore(t *testing.T, e *editor, parent, id string, all []string) {
	t.Helper()
	d := e.do(http.MethodGet, "/versions/"+all[3]+"/compare/"+all[1], nil)
	var cmp struct {
		Data struct {
			Attributes struct {
				Changes map[string][]any
				Diff    map[string]string
			}
		}
	}
	_ = json.Unmarshal(d.Raw, &cmp)
	if d.Status != 200 || fmt.Sprint(cmp.Data.Attributes.Changes["title"]) != "[Story 2 Story 4]" || len(cmp.Data.Attributes.Changes) != 1 {
		t.Errorf("compare = %d %s", d.Status, d.Raw)
	}
	pv := e.history("/pages/" + parent + "/versions").Data[0].ID
	if st := e.status("/versions/" + pv + "/compare/" + all[0]); st != 422 {
		t.Errorf("compare across records = %d, want 422", st)
	}
	if st := e.status("/versions/" + all[0] + "/compare/draft"); st != 404 {
		t.Errorf("compare with no draft = %d, want 404", st)
	}
	e.update("pages", id, map[string]any{"title": "Drafted"}, nil)
	d = e.do(http.MethodGet, "/versions/"+all[0]+"/compare/draft", nil)
	_ = json.Unmarshal(d.Raw, &cmp)
	if d.Status != 200 || fmt.Sprint(cmp.Data.Attributes.Changes["title"]) != "[Story 4 Drafted]" {
		t.Errorf("compare with the draft = %d %s", d.Status, d.Raw)
	}
	// Restore Story 2 (parentless): 409 over the draft, then replacing it.
	if st, r := e.restoreVersion("/versions/" + all[3] + "/restore"); st != 409 || len(r.Errors) == 0 || r.Errors[0].Code != "draft_pending" {
		t.Errorf("restore over a draft = %d %+v", st, r)
	}
	st, r := e.restoreVersion("/versions/" + all[3] + "/restore?replace-draft=true")
	if st != 201 || r.Data.Attributes["event"] != "update" {
		t.Fatalf("restore = %d %+v", st, r)
	}
	if got := e.live("pages", id); got != "Story 4 /parent/story" {
		t.Errorf("live before publishing the restore = %q", got)
	}
	e.settle(r.Data.ID)
	if got := e.live("pages", id); got != "Story 2 /story" {
		t.Errorf("live after publishing the restore = %q", got)
	}
}

// restoreDeleted: a deleted page comes back with its content and block,
// once another page no longer holds its path.
func restoreDeleted(t *testing.T, e *editor, id, content, block, deleteVersion string) {
	t.Helper()
	usurper, ud := e.page("Usurper", "story", "")
	e.settle(ud)
	st, r := e.restoreVersion("/versions/" + deleteVersion + "/restore")
	if st != 409 || len(r.Errors) == 0 || r.Errors[0].Code != "path_taken" || fmt.Sprint(r.Errors[0].Meta["page"]) != fmt.Sprint(map[string]any{"type": "pages", "id": usurper}) {
		t.Errorf("restore at a taken path = %d %+v", st, r)
	}
	e.settle(e.remove("pages", usurper))
	st, r = e.restoreVersion("/versions/" + deleteVersion + "/restore")
	if st != 201 || r.Data.Attributes["event"] != "create" || r.Meta["drafts"] != float64(3) {
		t.Fatalf("restore of the deleted page = %d %+v", st, r)
	}
	if got := e.live("pages", id); got != "404" {
		t.Errorf("restored page live before publishing: %q", got)
	}
	ids := []string{r.Data.ID} // the page's create draft, its content's and its block's
	for _, inc := range r.Included {
		ids = append(ids, inc.ID)
	}
	e.settle(ids...)
	if got := e.live("pages", id); got != "Story 2 /story" {
		t.Errorf("restored page = %q", got)
	}
	if got := e.live("contents", content); got != "Main" {
		t.Errorf("restored content = %q", got)
	}
	if got := e.live("content-blocks", block); got != "<p>hi</p>" {
		t.Errorf("restored block = %q", got)
	}
	if got := len(e.history("/pages/" + id + "/versions").Data); got != 8 {
		t.Errorf("history after the restore has %d versions, want 8", got)
	}
}

// settle publishes drafts and waits for the revision to be published (a
// loaded machine may answer 202 first).
func (e *editor) settle(draftIDs ...string) {
	e.t.Helper()
	d := e.publish(draftIDs...)
	if d.Status != 201 && d.Status != 202 {
		e.t.Fatalf("POST /revisions = %d %s", d.Status, d.Raw)
	}
	id := d.resource(e.t).ID
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		r := e.do(http.MethodGet, "/revisions/"+id, nil).resource(e.t)
		if r.Attributes["status"] == "published" {
			return
		}
		if r.Attributes["status"] == "failed" || time.Now().After(deadline) {
			e.t.Fatalf("revision %s = %v", id, r.Attributes)
		}
	}
}
