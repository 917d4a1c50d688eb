package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/pressroom/pressroom/auth"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/workflows"
)

// editor is a signed-in client of one test system.
type editor struct {
	t     *testing.T
	s     *system
	token string
}

func (s *system) editor(t *testing.T, email string) *editor {
	return &editor{t: t, s: s, token: s.token(t, email)}
}

func (e *editor) do(method, path string, body any) *doc {
	e.t.Helper()
	return e.s.call(e.t, e.token, method, path, body)
}

func ref(typ, id string) map[string]any {
	if id == "" {
		return map[string]any{"data": nil}
	}
	return map[string]any{"data": map[string]any{"type": typ, "id": id}}
}

// create posts a draftable resource and returns its id and draft id.
func (e *editor) create(typ string, attrs map[string]any, rels map[string]any) (string, string) {
	e.t.Helper()
	data := map[string]any{"type": typ, "attributes": attrs}
	if rels != nil {
		data["relationships"] = rels
	}
	d := e.do(http.MethodPost, "/"+typ, map[string]any{"data": data})
	if d.Status != 201 {
		e.t.Fatalf("POST /%s = %d %s", typ, d.Status, d.Raw)
	}
	r := d.resource(e.t)
	return r.ID, draftOf(e.t, r)
}

func draftOf(t *testing.T, r resource) string {
	t.Helper()
	var id struct{ ID string }
	_ = json.Unmarshal(r.Relationships["draft"].Data, &id)
	return id.ID
}

func (e *editor) page(title, slug, parent string) (string, string) {
	rels := map[string]any{}
	if parent != "" {
		rels["parent"] = ref("pages", parent)
	}
	return e.create("pages", map[string]any{"title": title, "slug": slug}, rels)
}

func (e *editor) publish(draftIDs ...string) *doc {
	e.t.Helper()
	data := make([]map[string]any, len(draftIDs))
	for i, id := range draftIDs {
		data[i] = map[string]any{"type": "drafts", "id": id}
	}
	return e.do(http.MethodPost, "/revisions?include=versions", map[string]any{"data": map[string]any{"type": "revisions",
		"attributes": map[string]any{"comments": "test"}, "relationships": map[string]any{"drafts": map[string]any{"data": data}}}})
}

func (e *editor) mustPublish(draftIDs ...string) resource {
	e.t.Helper()
	d := e.publish(draftIDs...)
	if d.Status != 201 {
		e.t.Fatalf("POST /revisions = %d %s", d.Status, d.Raw)
	}
	return d.resource(e.t)
}

func (e *editor) status(path string) int {
	e.t.Helper()
	return e.do(http.MethodGet, path, nil).Status
}

func TestPageDraftLifecycle(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	id, draft := e.page("About us", "about", "")

	// A created page is invisible to live reads until published.
	if st := e.status("/pages/" + id); st != 404 {
		t.Fatalf("live read of a created page = %d, want 404", st)
	}
	d := e.do(http.MethodGet, "/pages/"+id+"?include=draft", nil)
	if d.Status != 200 || !strings.Contains(string(d.Raw), `"included":[{"type":"drafts"`) {
		t.Fatalf("drafted read = %d %s", d.Status, d.Raw)
	}
	if r := d.resource(t); r.Attributes["path"] != "/about" || r.Attributes["title"] != "About us" || r.Attributes["published-at"] != nil {
		t.Errorf("drafted page = %v", r.Attributes)
	}
	dd := e.do(http.MethodGet, "/drafts/"+draft, nil).resource(t)
	if dd.Attributes["event"] != "create" {
		t.Errorf("draft = %v", dd.Attributes)
	}
	if oc := dd.Attributes["object-changes"].(map[string]any); fmt.Sprint(oc["title"]) != "[<nil> About us]" {
		t.Errorf("object-changes = %v", oc)
	}

	rev := e.mustPublish(draft)
	if rev.Attributes["status"] != "published" || rev.Attributes["versions-count"] != float64(1) {
		t.Fatalf("revision = %v", rev.Attributes)
	}
	s.recordHistory(t, workflows.PublishRevisionID(rev.ID), "publish-revision-published.history.json")
	live := e.do(http.MethodGet, "/pages/"+id, nil)
	if live.Status != 200 || live.resource(t).Attributes["published-at"] == nil || string(live.resource(t).Relationships["draft"].Data) != "null" {
		t.Fatalf("published page = %d %s", live.Status, live.Raw)
	}
	if st := e.status("/drafts/" + draft); st != 404 {
		t.Errorf("published draft still readable: %d", st)
	}

	// An update is drafted: live keeps the old title, the draft overlays it.
	u := e.do(http.MethodPatch, "/pages/"+id, map[string]any{"data": map[string]any{"type": "pages", "id": id, "attributes": map[string]any{"title": "About"}}})
	if u.Status != 200 {
		t.Fatalf("PATCH = %d %s", u.Status, u.Raw)
	}
	upd := draftOf(t, u.resource(t))
	if got := e.do(http.MethodGet, "/pages/"+id, nil).resource(t).Attributes["title"]; got != "About us" {
		t.Errorf("live title after a drafted update = %v", got)
	}
	if got := e.do(http.MethodGet, "/pages/"+id+"?include=draft", nil).resource(t).Attributes["title"]; got != "About" {
		t.Errorf("drafted title = %v", got)
	}
	// Editing back to the live value drops the change, and the empty draft goes.
	e.do(http.MethodPatch, "/pages/"+id, map[string]any{"data": map[string]any{"type": "pages", "id": id, "attributes": map[string]any{"title": "About us"}}})
	if st := e.status("/drafts/" + upd); st != 404 {
		t.Errorf("an update draft with no changes left still exists: %d", st)
	}

	// A delete is drafted: live still shows the page; the drafted view has trashed-at.
	del := e.do(http.MethodDelete, "/pages/"+id, nil)
	if del.Status != 200 || del.resource(t).Attributes["trashed-at"] == nil {
		t.Fatalf("DELETE = %d %s", del.Status, del.Raw)
	}
	if st := e.status("/pages/" + id); st != 200 {
		t.Errorf("live read during a drafted delete = %d", st)
	}
	// Reverting the delete draft restores things as they were.
	if d := e.do(http.MethodDelete, "/drafts/"+draftOf(t, del.resource(t)), nil); d.Status != 204 {
		t.Fatalf("revert = %d %s", d.Status, d.Raw)
	}
	e.do(http.MethodDelete, "/pages/"+id, nil)
	delDraft := draftOf(t, e.do(http.MethodGet, "/pages/"+id+"?include=draft", nil).resource(t))
	e.mustPublish(delDraft)
	if st := e.status("/pages/" + id); st != 404 {
		t.Errorf("a published delete still reads: %d", st)
	}
}

func TestPublishingPullsInDependencies(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	parent, parentDraft := e.page("Parent", "parent", "")
	child, childDraft := e.page("Child", "child", parent)
	content, contentDraft := e.create("contents", map[string]any{"title": "Main"}, map[string]any{"page": ref("pages", child)})
	_, blockDraft := e.create("content-blocks", map[string]any{"var-name": "intro", "body": "<p>hi</p>"}, map[string]any{"content": ref("contents", content)})

	// Publishing the block alone pulls in its content, page and parent: the whole chain.
	g := e.do(http.MethodGet, "/drafts/"+blockDraft+"?include=publication-dependencies", nil)
	var deps []struct{ ID string }
	var rel struct{ Data json.RawMessage }
	_ = json.Unmarshal(g.resource(t).Relationships["publication-dependencies"].Data, &deps)
	_ = rel
	got := []string{}
	for _, d := range deps {
		got = append(got, d.ID)
	}
	want := []string{parentDraft, childDraft, contentDraft}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("publication-dependencies = %v, want %v", got, want)
	}
	rev := e.mustPublish(blockDraft)
	if rev.Attributes["versions-count"] != float64(4) {
		t.Fatalf("versions-count = %v", rev.Attributes["versions-count"])
	}
	if r := e.do(http.MethodGet, "/pages/"+child, nil); r.Status != 200 || r.resource(t).Attributes["path"] != "/parent/child" {
		t.Fatalf("child page = %d %s", r.Status, r.Raw)
	}
	vs := e.do(http.MethodGet, "/revisions/"+rev.ID+"/versions", nil)
	if !strings.Contains(string(vs.Raw), `"total":4`) {
		t.Errorf("versions = %s", vs.Raw)
	}

	// Deleting the parent drafts deletes for its whole subtree; publishing
	// the parent's delete pulls in the children's.
	e.do(http.MethodDelete, "/pages/"+parent, nil)
	d := e.do(http.MethodGet, "/drafts?filter[event]=delete", nil)
	if !strings.Contains(string(d.Raw), `"total":4`) {
		t.Fatalf("delete drafts after deleting the parent = %s", d.Raw)
	}
	parentDel := draftOf(t, e.do(http.MethodGet, "/pages/"+parent+"?include=draft", nil).resource(t))
	rev = e.mustPublish(parentDel)
	if rev.Attributes["versions-count"] != float64(4) {
		t.Fatalf("delete revision versions-count = %v", rev.Attributes["versions-count"])
	}
	for _, p := range []string{"/pages/" + parent, "/pages/" + child, "/contents/" + content} {
		if st := e.status(p); st != 404 {
			t.Errorf("%s after publishing the delete = %d", p, st)
		}
	}
}

func TestRevertingACreateRevertsItsChildren(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	parent, parentDraft := e.page("Parent", "parent", "")
	child, _ := e.page("Child", "child", parent)
	if d := e.do(http.MethodDelete, "/drafts/"+parentDraft, nil); d.Status != 204 {
		t.Fatalf("revert = %d %s", d.Status, d.Raw)
	}
	for _, id := range []string{parent, child} {
		if st := e.status("/pages/" + id + "?include=draft"); st != 404 {
			t.Errorf("page %s after reverting the parent's create = %d", id, st)
		}
	}
}

// TestDraftIncludesAnswerDatabaseErrors: a failed load of what
// GET /drafts/:id?include=item,user includes is the request's error (500
// from the error table), not a draft served without it. The loads are made
// to fail by renaming a column in this test's own database.
func TestDraftIncludesAnswerDatabaseErrors(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	_, draft := e.page("About us", "about", "")
	if d := e.do(http.MethodGet, "/drafts/"+draft+"?include=item,user", nil); d.Status != 200 || !strings.Contains(string(d.Raw), `"included":[{"type":"pages"`) || !strings.Contains(string(d.Raw), `{"type":"users"`) {
		t.Fatalf("include=item,user = %d %s", d.Status, d.Raw)
	}
	// Both loads scope by site_id; the draft's own reads of pages (its
	// closure) do not, so renaming that column breaks only the loads.
	rename := func(table, from, to string) {
		t.Helper()
		if _, err := s.DB.ExecContext(context.Background(), "ALTER TABLE "+table+" RENAME COLUMN "+from+" TO "+to); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ include, table string }{{"item", "pages"}, {"user", "users"}} {
		rename(tc.table, "site_id", "site_id_gone")
		if d := e.do(http.MethodGet, "/drafts/"+draft+"?include="+tc.include, nil); d.Status != 500 || len(d.Errors) != 1 || d.Errors[0].Code != "internal_error" {
			t.Errorf("include=%s with %s unreadable = %d %s, want 500 internal_error", tc.include, tc.table, d.Status, d.Raw)
		}
		if st := e.status("/drafts/" + draft); st != 200 {
			t.Errorf("the draft without include=%s = %d: the failure was not the included load's", tc.include, st)
		}
		rename(tc.table, "site_id_gone", "site_id")
	}
}

func TestRevisionErrors(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	other := s.editor(t, "editor@other.test")
	_, draft := e.page("A", "a", "")
	// A draft the caller's site does not have is 404 at the identifier's id
	// (JSON:API 1.1; issue 11 item 3).
	if d := other.publish(draft); d.Status != 404 || d.Errors[0].Source.Pointer != "/data/relationships/drafts/data/0/id" {
		t.Errorf("publishing another site's draft = %d %s", d.Status, d.Raw)
	}
	if d := e.publish("00000000-0000-4000-8000-000000000000"); d.Status != 404 || d.Errors[0].Source.Pointer != "/data/relationships/drafts/data/0/id" {
		t.Errorf("unknown draft = %d %s", d.Status, d.Raw)
	}
	// Idempotency: a retried POST with the same key returns the same revision.
	body := map[string]any{"data": map[string]any{"type": "revisions", "relationships": map[string]any{"drafts": map[string]any{"data": []any{map[string]any{"type": "drafts", "id": draft}}}}}}
	first := s.callWith(t, e.token, http.MethodPost, "/revisions", body, "Idempotency-Key", "abc-1")
	second := s.callWith(t, e.token, http.MethodPost, "/revisions", body, "Idempotency-Key", "abc-1")
	if first.Status != 201 || second.Status != 201 || first.resource(t).ID != second.resource(t).ID {
		t.Errorf("idempotent retry: %d %s / %d %s", first.Status, first.Raw, second.Status, second.Raw)
	}
}

// TestEveryPatchNeedsItsID: one decoding rule for every resource
// (docs/api-conventions.md): a PATCH without data.id is 400 at /data/id,
// one naming another record 409 id_mismatch, for drafted content as for
// themes. Content PATCHes used to accept a missing data.id.
func TestEveryPatchNeedsItsID(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	page, _ := e.page("About us", "about", "")
	theme := e.do(http.MethodPost, "/themes", map[string]any{"data": map[string]any{"type": "themes", "attributes": map[string]any{"title": "T"}}})
	if theme.Status != 201 {
		t.Fatalf("POST /themes = %d %s", theme.Status, theme.Raw)
	}
	themeID := theme.resource(t).ID
	for _, tc := range []struct{ typ, id string }{{"pages", page}, {"themes", themeID}} {
		noID := e.do(http.MethodPatch, "/"+tc.typ+"/"+tc.id, map[string]any{"data": map[string]any{"type": tc.typ, "attributes": map[string]any{"title": "X"}}})
		if noID.Status != 400 || len(noID.Errors) != 1 || noID.Errors[0].Code != "malformed_document" || noID.Errors[0].Source.Pointer != "/data/id" {
			t.Errorf("%s: PATCH without data.id = %d %s, want 400 malformed_document at /data/id", tc.typ, noID.Status, noID.Raw)
		}
		other := e.do(http.MethodPatch, "/"+tc.typ+"/"+tc.id, map[string]any{"data": map[string]any{"type": tc.typ, "id": "00000000-0000-4000-8000-000000000000", "attributes": map[string]any{"title": "X"}}})
		if other.Status != 409 || len(other.Errors) != 1 || other.Errors[0].Code != "id_mismatch" || other.Errors[0].Source.Pointer != "/data/id" {
			t.Errorf("%s: PATCH naming another id = %d %s, want 409 id_mismatch", tc.typ, other.Status, other.Raw)
		}
	}
}

// TestDraftListWithAuthorsAndRecords: GET /drafts?include=user,item gives
// each draft's author and its record as drafted (a page with its drafted
// path), filter[user] one editor's drafts, sort=-updated-at the newest
// first; another site's editor sees none of them.
func TestDraftListWithAuthorsAndRecords(t *testing.T) {
	t.Parallel()
	s := start(t)
	hash, _ := auth.HashPassword(password)
	second, err := models.CreateUser(context.Background(), s.DB, s.Site.ID, "second@demo.test", "Second", hash)
	if err != nil {
		t.Fatal(err)
	}
	a, b := s.editor(t, "editor@demo.test"), s.editor(t, "second@demo.test")
	parent, parentDraft := a.page("Parent", "parent", "")
	_, childDraft := b.page("Child", "child", parent)
	_, contentDraft := b.create("contents", map[string]any{"title": "Intro"}, map[string]any{"page": ref("pages", parent)})

	type listed struct {
		Data []struct {
			ID string
			// The to-one relationships this test reads (the to-many ones
			// carry arrays).
			Relationships struct {
				User struct{ Data struct{ Type, ID string } } `json:"user"`
				Item struct{ Data struct{ Type, ID string } } `json:"item"`
			}
		}
		Included []struct {
			Type, ID   string
			Attributes map[string]any
		}
	}
	list := func(e *editor, query string) listed {
		t.Helper()
		d := e.do(http.MethodGet, "/drafts?"+query, nil)
		var l listed
		if d.Status != 200 || json.Unmarshal(d.Raw, &l) != nil {
			t.Fatalf("GET /drafts?%s = %d %s", query, d.Status, d.Raw)
		}
		return l
	}
	l := list(a, "sort=-updated-at&include=user,item")
	var order []string
	for _, d := range l.Data {
		order = append(order, d.ID)
	}
	if want := []string{contentDraft, childDraft, parentDraft}; strings.Join(order, ",") != strings.Join(want, ",") {
		t.Errorf("sort=-updated-at: %v, want %v", order, want)
	}
	got := map[string]string{}
	for _, inc := range l.Included {
		switch inc.Type {
		case "users":
			got[inc.ID] = fmt.Sprint(inc.Attributes["email"])
		case "pages":
			got[inc.ID] = fmt.Sprint(inc.Attributes["path"])
		case "contents":
			got[inc.ID] = fmt.Sprint(inc.Attributes["title"])
		}
	}
	for _, d := range l.Data {
		user, item := d.Relationships.User.Data, d.Relationships.Item.Data
		if got[user.ID] == "" || got[item.ID] == "" {
			t.Errorf("draft %s: user %v or item %v not included: %v", d.ID, user, item, got)
		}
	}
	if got[second.ID.String()] != "second@demo.test" || got[parent] != "/parent" || len(l.Included) != 5 {
		t.Errorf("included = %v (%d); want both users, two pages with drafted paths, the content", got, len(l.Included))
	}

	// One editor's drafts: the second's.
	l = list(a, "filter[user]="+second.ID.String()+"&include=user")
	if len(l.Data) != 2 || len(l.Included) != 1 || l.Included[0].ID != second.ID.String() {
		t.Errorf("filter[user] = %+v", l)
	}
	// Another site's editor: none of them, nor their users.
	other := s.editor(t, "editor@other.test")
	if l := list(other, "include=user,item"); len(l.Data) != 0 || len(l.Included) != 0 {
		t.Errorf("another site's editor sees %+v", l)
	}
	if d := a.do(http.MethodGet, "/drafts?include=revision", nil); d.Status != 400 {
		t.Errorf("include=revision = %d, want 400", d.Status)
	}
}
