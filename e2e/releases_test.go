package e2e

// Releases (docs/releases.md): staging, the 409 of a draft in two releases,
// publishing a release and its status, cancelling, filter[release], the
// preview (preview-release) over the rule table equal to the published
// result, and tenancy.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// createRelease posts a release and returns its id.
func (e *editor) createRelease(title string) string {
	e.t.Helper()
	d := e.do(http.MethodPost, "/releases", map[string]any{"data": map[string]any{"type": "releases", "attributes": map[string]any{"title": title}}})
	if d.Status != 201 {
		e.t.Fatalf("POST /releases = %d %s", d.Status, d.Raw)
	}
	return d.resource(e.t).ID
}

func draftLinkage(ids ...string) map[string]any {
	data := make([]map[string]any, len(ids))
	for i, id := range ids {
		data[i] = map[string]any{"type": "drafts", "id": id}
	}
	return map[string]any{"data": data}
}

// stage stages (or with method DELETE unstages) drafts in a release.
func (e *editor) stage(method, release string, ids ...string) *doc {
	e.t.Helper()
	return e.do(method, "/releases/"+release+"/relationships/drafts", draftLinkage(ids...))
}

func (e *editor) mustStage(release string, ids ...string) {
	e.t.Helper()
	if d := e.stage(http.MethodPost, release, ids...); d.Status != 204 {
		e.t.Fatalf("stage %v in %s = %d %s", ids, release, d.Status, d.Raw)
	}
}

// publishRelease posts a revision of the release.
func (e *editor) publishRelease(release string) *doc {
	e.t.Helper()
	return e.do(http.MethodPost, "/revisions", map[string]any{"data": map[string]any{"type": "revisions",
		"attributes": map[string]any{"comments": "release"}, "relationships": map[string]any{"release": ref("releases", release)}}})
}

// ids are the ids of a collection's data.
func (d *doc) ids(t *testing.T) []string {
	t.Helper()
	var rs []resource
	if err := json.Unmarshal(d.Data, &rs); err != nil {
		t.Fatalf("data is not a collection: %s", d.Raw)
	}
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	sort.Strings(out)
	return out
}

func relID(r resource, name string) string {
	var id struct{ ID string }
	_ = json.Unmarshal(r.Relationships[name].Data, &id)
	return id.ID
}

func TestReleasesStageUnstagePublishCancel(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	_, aDraft := e.page("Release A", "release-a", "")
	_, bDraft := e.page("Release B", "release-b", "")
	cID, cDraft := e.page("Release C", "release-c", "")

	rel := e.createRelease("Spring launch")
	other := e.createRelease("Other")
	e.mustStage(rel, aDraft, bDraft)

	// filter[release] and the drafts' release relationship.
	if got := e.do(http.MethodGet, "/drafts?filter[release]="+rel, nil).ids(t); !reflect.DeepEqual(got, sortedOf(aDraft, bDraft)) {
		t.Errorf("filter[release] = %v, want %v", got, sortedOf(aDraft, bDraft))
	}
	if got := e.do(http.MethodGet, "/drafts?filter[release]=none", nil).ids(t); !slices.Contains(got, cDraft) || slices.Contains(got, aDraft) {
		t.Errorf("filter[release]=none = %v: want C's draft, not A's", got)
	}
	if got := relID(e.do(http.MethodGet, "/drafts/"+aDraft, nil).resource(t), "release"); got != rel {
		t.Errorf("draft A's release = %q, want %s", got, rel)
	}
	if d := e.do(http.MethodGet, "/releases/"+rel+"/relationships/drafts", nil); d.Status != 200 || !strings.Contains(string(d.Raw), aDraft) {
		t.Errorf("GET /releases/:id/relationships/drafts = %d %s", d.Status, d.Raw)
	}

	// A draft is in at most one release: 409 with a pointer at it.
	d := e.stage(http.MethodPost, other, cDraft, aDraft)
	if d.Status != 409 || len(d.Errors) == 0 || d.Errors[0].Code != "staged_elsewhere" || d.Errors[0].Source.Pointer != "/data/1" {
		t.Errorf("staging a draft of another release = %d %s, want 409 staged_elsewhere at /data/1", d.Status, d.Raw)
	}
	if d := e.stage(http.MethodPost, rel, "00000000-0000-4000-8000-000000000000"); d.Status != 404 || d.Errors[0].Source.Pointer != "/data/0/id" {
		t.Errorf("staging a missing draft = %d %s, want 404 at /data/0/id", d.Status, d.Raw)
	}

	// Unstage, stage again.
	if d := e.stage(http.MethodDelete, rel, bDraft); d.Status != 204 {
		t.Fatalf("unstage = %d %s", d.Status, d.Raw)
	}
	if got := e.do(http.MethodGet, "/drafts?filter[release]="+rel, nil).ids(t); !reflect.DeepEqual(got, []string{aDraft}) {
		t.Errorf("after unstaging B: %v, want [A]", got)
	}
	e.mustStage(other, bDraft)

	// The preview shows the release's drafts and nothing else.
	if got := e.do(http.MethodGet, "/pages?filter[path]=/release-a&preview-release="+rel, nil).ids(t); len(got) != 1 {
		t.Errorf("preview of the release's page: %v, want it", got)
	}
	if st := e.status("/pages/" + cID + "?preview-release=" + rel); st != 404 {
		t.Errorf("preview of an unrelated created page = %d, want 404", st)
	}
	if d := e.do(http.MethodGet, "/pages?include=draft&preview-release="+rel, nil); d.Status != 400 {
		t.Errorf("include=draft with preview-release = %d, want 400", d.Status)
	}
	if st := e.status("/pages?preview-release=00000000-0000-4000-8000-000000000000"); st != 404 {
		t.Errorf("preview of a missing release = %d, want 404", st)
	}

	// Plan it, publish it.
	plan := e.do(http.MethodPost, "/publish-plans", map[string]any{"data": map[string]any{"type": "publish-plans",
		"relationships": map[string]any{"release": ref("releases", rel)}}})
	if plan.Status != 200 || !strings.Contains(string(plan.Raw), `"staged":true`) {
		t.Errorf("plan of the release = %d %s", plan.Status, plan.Raw)
	}
	if d := e.publishRelease(rel); d.Status != 201 {
		t.Fatalf("publishing the release = %d %s", d.Status, d.Raw)
	}
	r := e.do(http.MethodGet, "/releases/"+rel, nil).resource(t)
	if r.Attributes["status"] != "published" || relID(r, "revision") == "" {
		t.Errorf("published release: status %v, revision %q", r.Attributes["status"], relID(r, "revision"))
	}
	if st := e.status("/pages?filter[path]=/release-a"); st != 200 {
		t.Errorf("live read after publishing = %d", st)
	}
	if got := e.do(http.MethodGet, "/pages?filter[path]=/release-a", nil).ids(t); len(got) != 1 {
		t.Errorf("the release's page is not live: %v", got)
	}
	if d := e.stage(http.MethodPost, rel, cDraft); d.Status != 409 || d.Errors[0].Code != "release_not_open" {
		t.Errorf("staging in a published release = %d %s, want 409 release_not_open", d.Status, d.Raw)
	}
	if d := e.do(http.MethodGet, "/releases?filter[status]=published", nil); !slices.Contains(d.ids(t), rel) || slices.Contains(d.ids(t), other) {
		t.Errorf("filter[status]=published = %v", d.ids(t))
	}

	// Cancel: 204, cancelled, drafts unstaged and still there.
	if d := e.do(http.MethodDelete, "/releases/"+other, nil); d.Status != 204 {
		t.Fatalf("cancel = %d %s", d.Status, d.Raw)
	}
	if got := e.do(http.MethodGet, "/releases/"+other, nil).resource(t).Attributes["status"]; got != "cancelled" {
		t.Errorf("cancelled release's status = %v", got)
	}
	if got := relID(e.do(http.MethodGet, "/drafts/"+bDraft, nil).resource(t), "release"); got != "" {
		t.Errorf("draft B still in release %q after the cancel", got)
	}
	if d := e.do(http.MethodDelete, "/releases/"+other, nil); d.Status != 409 {
		t.Errorf("cancelling twice = %d, want 409", d.Status)
	}
}

func TestReleasesTenancy(t *testing.T) {
	t.Parallel()
	s := start(t)
	demo := s.editor(t, "editor@demo.test")
	other := s.editor(t, "editor@other.test")
	_, draft := demo.page("Mine", "mine", "")
	rel := demo.createRelease("Mine")
	demo.mustStage(rel, draft)
	theirs := other.createRelease("Theirs")

	for _, p := range []string{"/releases/" + rel, "/releases/" + rel + "/relationships/drafts", "/pages?preview-release=" + rel} {
		if st := other.status(p); st != 404 {
			t.Errorf("another site's GET %s = %d, want 404", p, st)
		}
	}
	if d := other.stage(http.MethodPost, theirs, draft); d.Status != 404 {
		t.Errorf("staging another site's draft = %d %s, want 404", d.Status, d.Raw)
	}
	if d := other.stage(http.MethodPost, rel, draft); d.Status != 404 {
		t.Errorf("staging in another site's release = %d %s, want 404", d.Status, d.Raw)
	}
	if d := other.publishRelease(rel); d.Status != 404 {
		t.Errorf("publishing another site's release = %d %s, want 404", d.Status, d.Raw)
	}
	if d := other.do(http.MethodDelete, "/releases/"+rel, nil); d.Status != 404 {
		t.Errorf("cancelling another site's release = %d, want 404", d.Status)
	}
}

// TestReleasesPreviewEqualsPublished runs the rule table: for every case
// that publishes, the drafts it publishes are staged in a release, and the
// release's preview (every named record, and the lists) must equal the
// live site after publishing the release.
func TestReleasesPreviewEqualsPublished(t *testing.T) {
	t.Parallel()
	s := start(t)
	for _, c := range rlDependencyCases() {
		if len(c.publish) == 0 {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := rlNewWorld(t, s)
			c.build(w)
			ds := make([]string, len(c.publish))
			for i, n := range c.publish {
				ds[i] = w.draft(n)
			}
			rel := w.e.createRelease(c.name)
			w.e.mustStage(rel, ds...)
			preview := w.snapshot("?preview-release=" + rel)
			if d := w.e.publishRelease(rel); d.Status != 201 {
				t.Fatalf("publishing the release = %d %s", d.Status, d.Raw)
			}
			live := w.snapshot("")
			for _, k := range rlKeys(live) {
				if !reflect.DeepEqual(preview[k], live[k]) {
					t.Errorf("%s: preview\n  %v\nlive after publishing\n  %v", k, preview[k], live[k])
				}
			}
		})
	}
}

// snapshot reads every named record and the three lists with query, as
// comparable values: status, attributes (no timestamps) and relationship
// linkage (no draft).
func (w *rlWorld) snapshot(query string) map[string]string {
	w.t.Helper()
	out := map[string]string{}
	sep := "?"
	if query != "" {
		sep = "&"
	}
	for _, name := range rlKeys(w.ids) {
		d := w.e.do(http.MethodGet, "/"+w.typ[name]+"/"+w.ids[name]+query, nil)
		if d.Status != 200 {
			out[name] = fmt.Sprint(d.Status)
			continue
		}
		out[name] = comparable(d.resource(w.t))
	}
	for _, typ := range []string{"pages", "contents", "content-blocks"} {
		d := w.e.do(http.MethodGet, "/"+typ+query+sep+"page[size]=100", nil)
		var names []string
		for _, id := range d.ids(w.t) {
			names = append(names, w.nameOf(id))
		}
		sort.Strings(names)
		out["list "+typ] = strings.Join(names, ",")
	}
	return out
}

// comparable is a resource without what publishing changes by itself.
func comparable(r resource) string {
	attrs := map[string]any{}
	for k, v := range r.Attributes {
		switch k {
		case "published-at", "created-at", "updated-at":
		default:
			attrs[k] = v
		}
	}
	rels := map[string]string{}
	for k, v := range r.Relationships {
		if k != "draft" {
			rels[k] = string(v.Data)
		}
	}
	b, _ := json.Marshal(map[string]any{"attributes": attrs, "relationships": rels})
	return string(b)
}

func sortedOf(xs ...string) []string {
	out := append([]string(nil), xs...)
	sort.Strings(out)
	return out
}

// TestReleasesPreviewFresh: the API keeps a release's preview while the
// release's row is as it was (drafts_version moves with every write of a
// draft staged in it, in the writing transaction), so every read below,
// made at once after a committed write (no wait), shows that write.
func TestReleasesPreviewFresh(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	aID, aDraft := e.page("Fresh A", "fresh-a", "")
	bID, bDraft := e.page("Fresh B", "fresh-b", "")
	rel := e.createRelease("Fresh")
	e.mustStage(rel, aDraft)
	title := func(id string) string {
		t.Helper()
		d := e.do(http.MethodGet, "/pages/"+id+"?preview-release="+rel, nil)
		if d.Status != 200 {
			return fmt.Sprint(d.Status)
		}
		return fmt.Sprint(d.resource(t).Attributes["title"])
	}
	want := func(what, id, title0 string) {
		t.Helper()
		if got := title(id); got != title0 {
			t.Errorf("%s: preview title = %q, want %q", what, got, title0)
		}
	}
	want("staged", aID, "Fresh A")
	want("staged, read again (kept)", aID, "Fresh A")
	want("not staged", bID, "404")

	for i := 0; i < 3; i++ { // each edit of the staged draft shows at once
		next := fmt.Sprintf("Fresh A, edit %d", i)
		d := e.do(http.MethodPatch, "/pages/"+aID, map[string]any{"data": map[string]any{"type": "pages", "id": aID, "attributes": map[string]any{"title": next}}})
		if d.Status != 200 {
			t.Fatalf("PATCH = %d %s", d.Status, d.Raw)
		}
		want("after editing the staged draft", aID, next)
	}
	// The staged draft comes to point at a page created outside the
	// release: the closure pulls that page's create draft in, so the next
	// read shows it (the preview's set changed with no stage or unstage).
	qID, _ := e.page("Fresh Q", "fresh-q", "")
	want("a page created outside the release", qID, "404")
	d := e.do(http.MethodPatch, "/pages/"+aID, map[string]any{"data": map[string]any{"type": "pages", "id": aID, "relationships": map[string]any{"parent": ref("pages", qID)}}})
	if d.Status != 200 {
		t.Fatalf("PATCH A's parent = %d %s", d.Status, d.Raw)
	}
	want("the page the staged draft now hangs under", qID, "Fresh Q")
	d = e.do(http.MethodPatch, "/pages/"+bID, map[string]any{"data": map[string]any{"type": "pages", "id": bID, "attributes": map[string]any{"title": "Fresh B, edited"}}})
	if d.Status != 200 {
		t.Fatalf("PATCH B = %d %s", d.Status, d.Raw)
	}
	want("an unstaged draft edited", bID, "404")
	e.mustStage(rel, bDraft)
	want("after staging B", bID, "Fresh B, edited")
	if d := e.stage(http.MethodDelete, rel, aDraft); d.Status != 204 {
		t.Fatalf("unstage A = %d %s", d.Status, d.Raw)
	}
	want("after unstaging A", aID, "404")
	want("after unstaging A, the page it hung under", qID, "404")
	if d := e.do(http.MethodDelete, "/drafts/"+bDraft, nil); d.Status != 204 {
		t.Fatalf("revert B = %d %s", d.Status, d.Raw)
	}
	want("after reverting B", bID, "404")
}
