package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/google/uuid"
)

// One live page per path (issue 24): a site cannot serve two pages at one
// URL. Writes refuse a drafted place another page holds; a publish that
// would still collide fails as a whole; the database refuses two live pages
// at one path whatever the code does.

// pathError is the first error of d with its meta.
func pathError(t *testing.T, d *doc) (code, pointer, other string) {
	t.Helper()
	var body struct {
		Errors []struct {
			Code   string
			Source struct{ Pointer string }
			Meta   struct {
				Page struct{ Type, ID string }
			}
		}
	}
	if err := json.Unmarshal(d.Raw, &body); err != nil || len(body.Errors) == 0 {
		t.Fatalf("not an error document: %d %s", d.Status, d.Raw)
	}
	e := body.Errors[0]
	if e.Meta.Page.ID != "" && e.Meta.Page.Type != "pages" {
		t.Errorf("meta.page = %+v, want a pages identifier", e.Meta.Page)
	}
	return e.Code, e.Source.Pointer, e.Meta.Page.ID
}

// draftDeletion drafts the deletion of page id and returns the draft's id.
func (e *editor) draftDeletion(id string) string {
	e.t.Helper()
	d := e.do(http.MethodDelete, "/pages/"+id, nil)
	if d.Status != 200 {
		e.t.Fatalf("DELETE /pages/%s = %d %s", id, d.Status, d.Raw)
	}
	return draftOf(e.t, d.resource(e.t))
}

// livePagesAt lists the ids of the live pages at path.
func (e *editor) livePagesAt(path string) []string {
	e.t.Helper()
	d := e.do(http.MethodGet, "/pages?filter[path]="+path, nil)
	if d.Status != 200 {
		e.t.Fatalf("GET /pages?filter[path]=%s = %d %s", path, d.Status, d.Raw)
	}
	var list []resource
	if err := json.Unmarshal(d.Data, &list); err != nil {
		e.t.Fatal(err)
	}
	ids := make([]string, len(list))
	for i, r := range list {
		ids[i] = r.ID
	}
	return ids
}

func TestPagePathUniqueOnWrite(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")

	about, aboutDraft := e.page("About", "about", "")
	// A second root page at /about, drafted or live, is refused.
	d := e.do(http.MethodPost, "/pages", map[string]any{"data": map[string]any{"type": "pages",
		"attributes": map[string]any{"title": "About again", "slug": "about"}}})
	if d.Status != http.StatusConflict {
		t.Fatalf("second create at /about = %d %s, want 409", d.Status, d.Raw)
	}
	if code, ptr, other := pathError(t, d); code != "path_taken" || ptr != "/data/attributes/slug" || other != about {
		t.Errorf("second create at /about: code %q pointer %q meta.page %q; want path_taken at the slug naming %s", code, ptr, other, about)
	}
	e.mustPublish(aboutDraft)
	d = e.do(http.MethodPost, "/pages", map[string]any{"data": map[string]any{"type": "pages",
		"attributes": map[string]any{"title": "About again", "slug": "about"}}})
	if code, _, other := pathError(t, d); d.Status != http.StatusConflict || code != "path_taken" || other != about {
		t.Errorf("create at a live page's path = %d %s", d.Status, d.Raw)
	}

	// The same slug under another parent is another path.
	team, teamDraft := e.page("Team", "team", "")
	e.mustPublish(teamDraft)
	nested, nestedDraft := e.page("About the team", "about", team)
	e.mustPublish(nestedDraft)

	// A PATCH to a sibling's slug is refused at the slug.
	other, otherDraft := e.page("Contact", "contact", "")
	e.mustPublish(otherDraft)
	d = e.do(http.MethodPatch, "/pages/"+other, map[string]any{"data": map[string]any{"type": "pages", "id": other,
		"attributes": map[string]any{"slug": "about"}}})
	if code, ptr, who := pathError(t, d); d.Status != http.StatusConflict || code != "path_taken" || ptr != "/data/attributes/slug" || who != about {
		t.Errorf("PATCH slug onto /about = %d %s", d.Status, d.Raw)
	}
	// A move under a parent that has a child with the slug is refused at
	// the parent.
	d = e.do(http.MethodPatch, "/pages/"+about, map[string]any{"data": map[string]any{"type": "pages", "id": about,
		"relationships": map[string]any{"parent": ref("pages", team)}}})
	if code, ptr, who := pathError(t, d); d.Status != http.StatusConflict || code != "path_taken" || ptr != "/data/relationships/parent/data" || who != nested {
		t.Errorf("move of /about under /team = %d %s", d.Status, d.Raw)
	}
	// A drafted rename holds its new place too.
	d = e.do(http.MethodPatch, "/pages/"+other, map[string]any{"data": map[string]any{"type": "pages", "id": other,
		"attributes": map[string]any{"slug": "reach-us"}}})
	if d.Status != 200 {
		t.Fatalf("rename contact = %d %s", d.Status, d.Raw)
	}
	d = e.do(http.MethodPost, "/pages", map[string]any{"data": map[string]any{"type": "pages",
		"attributes": map[string]any{"title": "Reach", "slug": "reach-us"}}})
	if code, _, who := pathError(t, d); d.Status != http.StatusConflict || code != "path_taken" || who != other {
		t.Errorf("create at a drafted rename's path = %d %s", d.Status, d.Raw)
	}
	// A title-only PATCH of a page whose place is unchanged is no conflict.
	if d := e.do(http.MethodPatch, "/pages/"+about, map[string]any{"data": map[string]any{"type": "pages", "id": about,
		"attributes": map[string]any{"title": "About us"}}}); d.Status != 200 {
		t.Errorf("title-only PATCH = %d %s", d.Status, d.Raw)
	}
	if got := e.livePagesAt("/about"); len(got) != 1 {
		t.Errorf("live pages at /about = %v, want one", got)
	}
}

// Concurrent creates at one path: exactly one wins, the rest are 409.
func TestPagePathConcurrentCreates(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	const n = 8
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			d := s.call(t, e.token, http.MethodPost, "/pages", map[string]any{"data": map[string]any{"type": "pages",
				"attributes": map[string]any{"title": "Race", "slug": "race"}}})
			statuses[i] = d.Status
		})
	}
	wg.Wait()
	created := 0
	for _, st := range statuses {
		switch st {
		case http.StatusCreated:
			created++
		case http.StatusConflict:
		default:
			t.Errorf("concurrent create answered %d", st)
		}
	}
	if created != 1 {
		t.Errorf("concurrent creates at /race: %d created (%v), want exactly 1", created, statuses)
	}
}

// A publish whose result would put two live pages at one path fails as a
// whole with path_taken and changes nothing; with the deletion that frees
// the path it succeeds. Concurrent publishes never leave two live pages.
func TestPagePathUniqueOnPublish(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")

	old, oldDraft := e.page("Old about", "about", "")
	e.mustPublish(oldDraft)
	// Drafting the old page's deletion frees its place for drafting.
	deleteDraft := e.draftDeletion(old)
	fresh, freshDraft := e.page("New about", "about", "")
	// With a child, so the failed publish would have had more to change.
	_, childDraft := e.page("Child", "child", fresh)

	d := e.publish(childDraft)
	if d.Status != http.StatusConflict {
		t.Fatalf("publish of a page at a live page's path = %d %s, want 409", d.Status, d.Raw)
	}
	if code, _, who := pathError(t, d); code != "path_taken" || who != old {
		t.Errorf("failed publish: code %q meta.page %q, want path_taken naming %s", code, who, old)
	}
	// Nothing changed: the old page is the live one, the drafts are still there.
	if got := e.livePagesAt("/about"); len(got) != 1 || got[0] != old {
		t.Errorf("live pages at /about after the failed publish = %v, want [%s]", got, old)
	}
	for _, id := range []string{freshDraft, childDraft, deleteDraft} {
		if st := e.status("/drafts/" + id); st != 200 {
			t.Errorf("draft %s after the failed publish = %d, want it kept", id, st)
		}
	}
	if st := e.status("/pages/" + fresh); st != 404 {
		t.Errorf("the new page is live after a failed publish (%d)", st)
	}

	// Published with the deletion, the new page takes the path.
	e.mustPublish(deleteDraft, childDraft)
	if got := e.livePagesAt("/about"); len(got) != 1 || got[0] != fresh {
		t.Errorf("live pages at /about = %v, want [%s]", got, fresh)
	}

	// Racing publishes: page A live at /race with a delete draft, page B
	// drafted at /race. Publishing B and A's deletion at once never leaves
	// two live pages at /race, whichever commits first.
	for round := range 3 {
		a, aDraft := e.page("A", "race", "")
		e.mustPublish(aDraft)
		aDelete := e.draftDeletion(a)
		b, bDraft := e.page("B", "race", "")
		var wg sync.WaitGroup
		var bStatus int
		wg.Go(func() { bStatus = s.call(t, e.token, http.MethodPost, "/revisions", revisionBody(bDraft)).Status })
		wg.Go(func() { s.call(t, e.token, http.MethodPost, "/revisions", revisionBody(aDelete)) })
		wg.Wait()
		live := e.livePagesAt("/race")
		if len(live) > 1 {
			t.Fatalf("round %d: two live pages at /race: %v", round, live)
		}
		if bStatus == http.StatusCreated && (len(live) != 1 || live[0] != b) {
			t.Errorf("round %d: B published (201) but /race lists %v", round, live)
		}
		// Clear the path for the next round.
		for _, id := range live {
			if dd := e.do(http.MethodDelete, "/pages/"+id, nil); dd.Status == 200 {
				e.mustPublish(draftOf(t, dd.resource(t)))
			}
		}
		if bStatus != http.StatusCreated {
			if dd := e.do(http.MethodDelete, "/pages/"+b, nil); dd.Status == 200 {
				e.mustPublish(draftOf(t, dd.resource(t)))
			}
		}
	}
}

// The rule lives in the database: a second live page at a path is refused
// by Postgres itself (pages_live_path_excl), whatever the code above it does.
func TestPagePathUniqueInDatabase(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	id, draft := e.page("Pricing", "pricing", "")
	e.mustPublish(draft)
	_, err := s.DB.DB.ExecContext(context.Background(), `INSERT INTO pages (id, site_id, page_type, slug, path, title, published_at)
SELECT ?, site_id, 'page', 'pricing-2', path, 'Copy', now() FROM pages WHERE id = ?`, uuid.New(), id)
	if err == nil {
		t.Fatal("the database took a second live page at /pricing")
	}
	// Another site may have the path; an unpublished page may hold it.
	if _, err := s.DB.DB.ExecContext(context.Background(), `INSERT INTO pages (id, site_id, page_type, slug, path, title)
SELECT ?, site_id, 'page', 'pricing', path, 'Unpublished' FROM pages WHERE id = ?`, uuid.New(), id); err != nil {
		t.Errorf("an unpublished page at a live path was refused: %v", err)
	}
	if _, err := s.DB.DB.ExecContext(context.Background(), `INSERT INTO pages (id, site_id, page_type, slug, path, title, published_at)
VALUES (?, ?, 'page', 'pricing', '/pricing', 'Other site', now())`, uuid.New(), s.Other.ID); err != nil {
		t.Errorf("another site's page at /pricing was refused: %v", err)
	}
}

// A rollback that would bring a deleted page back at a path another page
// took since is a conflict (409 revert_conflict) and changes nothing.
func TestPagePathUniqueOnRollback(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	old, oldDraft := e.page("Old", "spot", "")
	e.mustPublish(oldDraft)
	deletion := e.mustPublish(e.draftDeletion(old))
	fresh, freshDraft := e.page("New", "spot", "")
	e.mustPublish(freshDraft)

	d := e.do(http.MethodPost, "/revisions", map[string]any{"data": map[string]any{"type": "revisions",
		"relationships": map[string]any{"reverts": ref("revisions", deletion.ID)}}})
	if d.Status != http.StatusConflict || len(d.Errors) == 0 || d.Errors[0].Code != "revert_conflict" {
		t.Fatalf("revert bringing a page back at a taken path = %d %s, want 409 revert_conflict", d.Status, d.Raw)
	}
	if got := e.livePagesAt("/spot"); len(got) != 1 || got[0] != fresh {
		t.Errorf("live pages at /spot after the refused revert = %v, want [%s]", got, fresh)
	}
}
