package e2e

// Rollback: POST /revisions with relationships.reverts restores every
// record the named revision changed (docs/drafts.md "Rollback").

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

func revertBody(revID string, force bool) map[string]any {
	attrs := map[string]any{"comments": "undo"}
	if force {
		attrs["force"] = true
	}
	return map[string]any{"data": map[string]any{"type": "revisions", "attributes": attrs,
		"relationships": map[string]any{"reverts": map[string]any{"data": map[string]any{"type": "revisions", "id": revID}}}}}
}

// revert reverts revID and requires 201; it returns the new revision.
func (e *editor) revert(revID string, force bool) resource {
	e.t.Helper()
	d := e.do(http.MethodPost, "/revisions?include=versions", revertBody(revID, force))
	if d.Status != 201 {
		e.t.Fatalf("revert %s = %d %s", revID, d.Status, d.Raw)
	}
	r := d.resource(e.t)
	var reverts struct{ Type, ID string }
	_ = json.Unmarshal(r.Relationships["reverts"].Data, &reverts)
	if r.Attributes["status"] != "published" || reverts.ID != revID {
		e.t.Fatalf("revert = %s", d.Raw)
	}
	return r
}

// live is a record's live state: 404, or its title (pages: title and path).
func (e *editor) live(typ, id string) string {
	e.t.Helper()
	d := e.do(http.MethodGet, "/"+typ+"/"+id, nil)
	if d.Status != 200 {
		return "404"
	}
	a := d.resource(e.t).Attributes
	if typ == "pages" {
		return a["title"].(string) + " " + a["path"].(string)
	}
	if typ == "content-blocks" {
		return a["body"].(string)
	}
	return a["title"].(string)
}

func (e *editor) update(typ, id string, attrs map[string]any, rels map[string]any) string {
	e.t.Helper()
	data := map[string]any{"type": typ, "id": id}
	if attrs != nil { // attributes, when sent, is an object (JSON:API), never null
		data["attributes"] = attrs
	}
	if rels != nil {
		data["relationships"] = rels
	}
	d := e.do(http.MethodPatch, "/"+typ+"/"+id, map[string]any{"data": data})
	if d.Status != 200 {
		e.t.Fatalf("PATCH /%s/%s = %d %s", typ, id, d.Status, d.Raw)
	}
	return draftOf(e.t, d.resource(e.t))
}

func (e *editor) remove(typ, id string) string {
	e.t.Helper()
	d := e.do(http.MethodDelete, "/"+typ+"/"+id, nil)
	if d.Status != 200 {
		e.t.Fatalf("DELETE /%s/%s = %d %s", typ, id, d.Status, d.Raw)
	}
	return draftOf(e.t, d.resource(e.t))
}

func (e *editor) check(label string, w map[[2]string]string) {
	e.t.Helper()
	for rec, st := range w {
		if got := e.live(rec[0], rec[1]); got != st {
			e.t.Errorf("%s: %s %s = %q, want %q", label, rec[0], rec[1], got, st)
		}
	}
}

func TestRollback(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	other := s.editor(t, "editor@other.test")

	// Creates: a page with a content and a block; reverting deletes them.
	p, dp := e.page("Created", "created", "")
	c, dc := e.create("contents", map[string]any{"title": "Main"}, map[string]any{"page": ref("pages", p)})
	b, db := e.create("content-blocks", map[string]any{"var-name": "intro", "body": "hello"}, map[string]any{"content": ref("contents", c)})
	created := e.mustPublish(dp, dc, db)
	e.check("published creates", map[[2]string]string{{"pages", p}: "Created /created", {"contents", c}: "Main", {"content-blocks", b}: "hello"})
	undo := e.revert(created.ID, false)
	if undo.Attributes["versions-count"] != float64(3) {
		t.Errorf("revert of 3 creates wrote %v versions", undo.Attributes["versions-count"])
	}
	e.check("reverted creates", map[[2]string]string{{"pages", p}: "404", {"contents", c}: "404", {"content-blocks", b}: "404"})
	// A revert of the revert brings them back.
	e.revert(undo.ID, false)
	e.check("revert of the revert", map[[2]string]string{{"pages", p}: "Created /created", {"contents", c}: "Main", {"content-blocks", b}: "hello"})

	// Updates: a title and a slug (the child's path follows), a block body.
	g, dg := e.page("Grand", "grand", "")
	pa, dpa := e.page("Parent", "parent", g)
	k, dk := e.page("Kid", "kid", pa)
	kc, dkc := e.create("contents", map[string]any{"title": "Kid content"}, map[string]any{"page": ref("pages", k)})
	kb, dkb := e.create("content-blocks", map[string]any{"var-name": "kb", "body": "kid body"}, map[string]any{"content": ref("contents", kc)})
	e.mustPublish(dg, dpa, dk, dkc, dkb)
	tree := map[[2]string]string{{"pages", g}: "Grand /grand", {"pages", pa}: "Parent /grand/parent", {"pages", k}: "Kid /grand/parent/kid",
		{"contents", kc}: "Kid content", {"content-blocks", kb}: "kid body"}
	linked := `<a href="/grand">up</a>`
	upd := e.mustPublish(e.update("pages", pa, map[string]any{"title": "Parent 2", "slug": "parent-2"}, nil),
		e.update("content-blocks", kb, map[string]any{"body": linked}, nil))
	e.check("updated", map[[2]string]string{{"pages", k}: "Kid /grand/parent-2/kid", {"content-blocks", kb}: linked})
	links := func() any {
		t.Helper()
		d := e.do(http.MethodGet, "/content-blocks/"+kb+"/relationships/hyperlinks", nil)
		var m struct{ Meta map[string]any }
		_ = json.Unmarshal(d.Raw, &m)
		return m.Meta["total"]
	}
	if n := links(); n != float64(1) {
		t.Fatalf("live links of the updated block = %v, want 1", n)
	}
	e.revert(upd.ID, false)
	e.check("reverted updates", tree)
	if n := links(); n != float64(0) {
		t.Errorf("live links of the restored block = %v, want 0 (its body has none)", n)
	}

	// Deletes: a three-level page tree with a content and a block.
	del := e.mustPublish(e.remove("pages", g))
	e.check("deleted tree", map[[2]string]string{{"pages", g}: "404", {"pages", pa}: "404", {"pages", k}: "404", {"contents", kc}: "404", {"content-blocks", kb}: "404"})
	back := e.revert(del.ID, false)
	if back.Attributes["versions-count"] != float64(5) {
		t.Errorf("revert of a 5-record delete wrote %v versions", back.Attributes["versions-count"])
	}
	e.check("restored tree", tree)

	// Interdependent changes restore together: a revision that created a
	// page, moved a live page under it and gave it a content. Reverting
	// deletes the created page only after moving the live one back.
	n, dn := e.page("New", "new", "")
	nc, dnc := e.create("contents", map[string]any{"title": "New content"}, map[string]any{"page": ref("pages", n)})
	mv := e.mustPublish(dn, dnc, e.update("pages", k, nil, map[string]any{"parent": ref("pages", n)}))
	e.check("moved", map[[2]string]string{{"pages", k}: "Kid /new/kid"})
	e.revert(mv.ID, false)
	e.check("move reverted", map[[2]string]string{{"pages", n}: "404", {"contents", nc}: "404", {"pages", k}: "Kid /grand/parent/kid", {"content-blocks", kb}: "kid body"})

	// Conflicts: a later revision changed the record; 409 per record,
	// nothing changed; force restores anyway.
	first := e.mustPublish(e.update("pages", g, map[string]any{"title": "Grand 1"}, nil), e.update("pages", pa, map[string]any{"title": "Parent 1"}, nil))
	e.mustPublish(e.update("pages", g, map[string]any{"title": "Grand 2"}, nil), e.update("pages", pa, map[string]any{"title": "Parent 2"}, nil))
	d := e.do(http.MethodPost, "/revisions", revertBody(first.ID, false))
	if d.Status != 409 || len(d.Errors) != 2 {
		t.Fatalf("revert over later changes = %d %s, want 409 with 2 errors", d.Status, d.Raw)
	}
	var errs struct {
		Errors []struct {
			Source struct{ Pointer string }
			Meta   struct{ Type, ID string }
		}
	}
	_ = json.Unmarshal(d.Raw, &errs)
	named := map[string]bool{}
	for _, er := range errs.Errors {
		if er.Source.Pointer != "/data/relationships/reverts" || er.Meta.Type != "pages" {
			t.Errorf("conflict error = %+v", er)
		}
		named[er.Meta.ID] = true
	}
	if !named[g] || !named[pa] {
		t.Errorf("conflicts name %v, want %s and %s", named, g, pa)
	}
	e.check("after the refused revert", map[[2]string]string{{"pages", g}: "Grand 2 /grand", {"pages", pa}: "Parent 2 /grand/parent"})
	// A pending draft refuses even with force.
	pending := e.update("pages", pa, map[string]any{"title": "Parent drafted"}, nil)
	if d := e.do(http.MethodPost, "/revisions", revertBody(first.ID, true)); d.Status != 409 || len(d.Errors) != 1 {
		t.Fatalf("forced revert over a pending draft = %d %s, want 409 with 1 error", d.Status, d.Raw)
	}
	if d := e.do(http.MethodDelete, "/drafts/"+pending, nil); d.Status != 204 {
		t.Fatalf("revert the pending draft = %d %s", d.Status, d.Raw)
	}
	e.revert(first.ID, true)
	e.check("forced revert", map[[2]string]string{{"pages", g}: "Grand /grand", {"pages", pa}: "Parent /grand/parent"})

	// Only published revisions can be reverted.
	_, dx := e.page("X", "x", "")
	sched := e.mustSchedule(time.Now().Add(time.Hour), dx)
	if d := e.do(http.MethodPost, "/revisions", revertBody(sched.ID, false)); d.Status != 409 {
		t.Errorf("revert a scheduled revision = %d %s, want 409", d.Status, d.Raw)
	}
	e.do(http.MethodDelete, "/revisions/"+sched.ID, nil)
	if d := e.do(http.MethodPost, "/revisions", revertBody(sched.ID, false)); d.Status != 409 {
		t.Errorf("revert a cancelled revision = %d %s, want 409", d.Status, d.Raw)
	}
	// Bad requests.
	body := revertBody(first.ID, false)
	body["data"].(map[string]any)["relationships"].(map[string]any)["drafts"] = map[string]any{"data": []any{map[string]any{"type": "drafts", "id": dx}}}
	if d := e.do(http.MethodPost, "/revisions", body); d.Status != 422 {
		t.Errorf("revert with drafts = %d %s, want 422", d.Status, d.Raw)
	}
	// Another site's revision is 404.
	if d := other.do(http.MethodPost, "/revisions", revertBody(first.ID, true)); d.Status != 404 || d.Errors[0].Source.Pointer != "/data/relationships/reverts/data/id" {
		t.Errorf("revert another site's revision = %d %s, want 404", d.Status, d.Raw)
	}
	if d := e.do(http.MethodPost, "/revisions", revertBody("00000000-0000-4000-8000-000000000000", false)); d.Status != 404 {
		t.Errorf("revert an unknown revision = %d %s, want 404", d.Status, d.Raw)
	}
}
