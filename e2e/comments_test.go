package e2e

// Comments on records (issue 30 §3, docs/releases.md "Comments"): POST,
// filter[item], PATCH resolved, the author's own edits and deletes only,
// include=drafts.comments on a release, and tenancy.

import (
	"net/http"
	"strings"
	"testing"

	"github.com/pressroom/pressroom/models"
)

func (e *editor) comment(typ, id, body string) *doc {
	e.t.Helper()
	return e.do(http.MethodPost, "/comments", map[string]any{"data": map[string]any{"type": "comments",
		"attributes": map[string]any{"body": body}, "relationships": map[string]any{"item": ref(typ, id)}}})
}

func TestComments(t *testing.T) {
	t.Parallel()
	s := start(t)
	author := s.member(t, "author@demo.test", models.RoleAuthor, "")
	ed := s.member(t, "ed@demo.test", models.RoleEditor, "")
	other := s.editor(t, "editor@other.test")
	page, draft := author.page("Commented", "commented", "")
	rel := author.createRelease("Commented release")
	author.mustStage(rel, draft)

	d := ed.comment("drafts", draft, "Tighten the title")
	if d.Status != 201 {
		t.Fatalf("POST /comments = %d %s", d.Status, d.Raw)
	}
	c := d.resource(t)
	if c.Attributes["body"] != "Tighten the title" || c.Attributes["resolved"] != false || relID(c, "item") != draft {
		t.Errorf("the comment: %s", d.Raw)
	}
	if d := author.comment("pages", page, "On the page"); d.Status != 201 {
		t.Errorf("a comment on a page = %d %s", d.Status, d.Raw)
	}
	if d := author.comment("pages", "00000000-0000-4000-8000-000000000000", "x"); d.Status != 404 || d.Errors[0].Source.Pointer != "/data/relationships/item/data/id" {
		t.Errorf("a comment on a missing page = %d %s", d.Status, d.Raw)
	}
	if d := author.comment("pages", page, ""); d.Status != 422 {
		t.Errorf("an empty body = %d, want 422", d.Status)
	}

	// filter[item]=type:id lists the item's comments only.
	list := resources(t, author.do(http.MethodGet, "/comments?filter[item]=drafts:"+draft, nil))
	if len(list) != 1 || list[0].ID != c.ID {
		t.Errorf("filter[item]=drafts:<draft> = %+v", list)
	}

	// Anyone who may edit resolves; only the author edits the body or deletes.
	resolve := map[string]any{"data": map[string]any{"type": "comments", "id": c.ID, "attributes": map[string]any{"resolved": true}}}
	if d := author.do(http.MethodPatch, "/comments/"+c.ID, resolve); d.Status != 200 || d.resource(t).Attributes["resolved"] != true {
		t.Errorf("resolving = %d %s", d.Status, d.Raw)
	}
	if list := resources(t, author.do(http.MethodGet, "/comments?filter[resolved]=true", nil)); len(list) != 1 || list[0].ID != c.ID {
		t.Errorf("filter[resolved]=true = %+v", list)
	}
	if d := author.do(http.MethodGet, "/comments?filter[resolved]=yes", nil); d.Status != 400 || !strings.Contains(string(d.Raw), `"parameter":"filter[resolved]"`) {
		t.Errorf("filter[resolved]=yes = %d %s, want 400 at the parameter", d.Status, d.Raw)
	}
	edit := map[string]any{"data": map[string]any{"type": "comments", "id": c.ID, "attributes": map[string]any{"body": "changed"}}}
	if d := author.do(http.MethodPatch, "/comments/"+c.ID, edit); d.Status != http.StatusForbidden {
		t.Errorf("editing another's comment = %d %s, want 403", d.Status, d.Raw)
	}
	if d := author.do(http.MethodDelete, "/comments/"+c.ID, nil); d.Status != http.StatusForbidden {
		t.Errorf("deleting another's comment = %d, want 403", d.Status)
	}
	if d := ed.do(http.MethodPatch, "/comments/"+c.ID, edit); d.Status != 200 || d.resource(t).Attributes["body"] != "changed" {
		t.Errorf("the author's edit = %d %s", d.Status, d.Raw)
	}

	// A release's drafts' comments.
	inc := author.do(http.MethodGet, "/releases/"+rel+"?include=drafts.comments", nil)
	if inc.Status != 200 || !strings.Contains(string(inc.Raw), `"type":"comments","id":"`+c.ID+`"`) {
		t.Errorf("include=drafts.comments = %d %s", inc.Status, inc.Raw)
	}

	// Tenancy.
	for _, p := range []string{"/comments/" + c.ID, "/comments/" + c.ID + "/item"} {
		if st := other.status(p); st != 404 {
			t.Errorf("another site's GET %s = %d, want 404", p, st)
		}
	}
	if got := resources(t, other.do(http.MethodGet, "/comments?filter[item]=drafts:"+draft, nil)); len(got) != 0 {
		t.Errorf("another site lists %d of this site's comments", len(got))
	}
	if d := other.comment("drafts", draft, "x"); d.Status != 404 {
		t.Errorf("commenting on another site's draft = %d, want 404", d.Status)
	}
	if d := ed.do(http.MethodDelete, "/comments/"+c.ID, nil); d.Status != 204 {
		t.Errorf("the author's delete = %d %s", d.Status, d.Raw)
	}
}
