package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestTitleOnlyPatchStatementCount pins the statements one title-only PATCH
// of a page three levels deep runs, the request's sign-in check included: a
// transaction (BEGIN, COMMIT) around one statement that locks and loads the
// draft and the page (with its drafted path), one that writes them and
// the audit event's insert (recorded in the write's transaction). No
// walk up the ancestors (the parent did not change), no re-read of what the
// transaction already holds, no query to render the answer.
func TestTitleOnlyPatchStatementCount(t *testing.T) {
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	root, d1 := e.page("Root", "root", "")
	mid, d2 := e.page("Mid", "mid", root)
	leaf, d3 := e.page("Leaf", "leaf", mid)
	e.mustPublish(d1, d2, d3)
	// A drafted slug up the tree: the answer must show the drafted path.
	if d := e.do(http.MethodPatch, "/pages/"+root, map[string]any{"data": map[string]any{
		"type": "pages", "id": root, "attributes": map[string]any{"slug": "top"}}}); d.Status != 200 {
		t.Fatalf("PATCH root slug = %d %s", d.Status, d.Raw)
	}
	// Counted at the driver (testsupport.StatementLog): the prepared
	// statements of the write path bypass bun's query hooks.
	log := s.DB.Statements
	// The first edit creates the leaf's draft; the second updates it.
	for i, want := range []string{"/top/mid/leaf", "/top/mid/leaf"} {
		var d *doc
		stmts := log.During(func() {
			d = e.do(http.MethodPatch, "/pages/"+leaf, map[string]any{"data": map[string]any{
				"type": "pages", "id": leaf, "attributes": map[string]any{"title": fmt.Sprintf("Leaf %d", i)}}})
		})
		if d.Status != 200 {
			t.Fatalf("PATCH %d = %d %s", i, d.Status, d.Raw)
		}
		r := d.resource(t)
		if r.Attributes["title"] != fmt.Sprintf("Leaf %d", i) || r.Attributes["path"] != want {
			t.Errorf("PATCH %d answered title %v path %v, want Leaf %d %s", i, r.Attributes["title"], r.Attributes["path"], i, want)
		}
		var writes []string
		for _, q := range stmts {
			if tokenCheck(q) {
				continue // the bearer token's check, shared by every request
			}
			writes = append(writes, q)
		}
		const want = 5 // BEGIN, lock-and-load, write, the audit event (docs/audit.md: in the write's transaction), COMMIT
		if len(writes) != want {
			t.Errorf("PATCH %d ran %d statements (besides the token check), want %d:\n%s", i, len(writes), want, strings.Join(writes, "\n"))
		}
	}
}

// writeStatements runs one request and returns the statements it ran at the
// driver, the bearer token's check (shared by every request) left out.
func writeStatements(t *testing.T, s *system, fn func()) []string {
	t.Helper()
	var out []string
	for _, q := range s.DB.Statements.During(fn) {
		if !tokenCheck(q) {
			out = append(out, q)
		}
	}
	return out
}

// tokenCheck tells whether q is the bearer token's check (it reads
// oauth_access_tokens). Matched by table, not by "oauth_" anywhere: the
// audit insert names its oauth_client_id column and must be counted.
func tokenCheck(q string) bool { return strings.Contains(q, "oauth_access_tokens") }

// TestCreatePageStatementCount pins the statements of a POST /pages under
// a published parent: a transaction around the parent's check, the lock
// and the read of the path check (drafts.PageAt: one page per path; the
// read must come after the lock, in its own statement, to see a rival
// that committed while this one waited), and one statement that inserts
// the page (its stored path derived from the parent's) and its create
// draft and answers both. Nothing is read again.
func TestCreatePageStatementCount(t *testing.T) {
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	root, d1 := e.page("Root", "root", "")
	e.mustPublish(d1)
	var d *doc
	stmts := writeStatements(t, s, func() {
		d = e.do(http.MethodPost, "/pages", map[string]any{"data": map[string]any{"type": "pages",
			"attributes": map[string]any{"title": "Child", "slug": "child"}, "relationships": map[string]any{"parent": ref("pages", root)}}})
	})
	if d.Status != 201 {
		t.Fatalf("POST /pages = %d %s", d.Status, d.Raw)
	}
	r := d.resource(t)
	if r.Attributes["path"] != "/root/child" || r.Attributes["title"] != "Child" || draftOf(t, r) == "" {
		t.Errorf("POST answered %v with draft %q", r.Attributes, draftOf(t, r))
	}
	// BEGIN, the parent's check, the site's locales FOR SHARE (a locale
	// cannot be added while a path is derived: docs/locales.md "Paths in a
	// locale"), the path lock, the path check, insert, the page's paths in
	// the site's other locales (none on this site), the audit event
	// (docs/audit.md), COMMIT. Locales added the third and the seventh to
	// every site's page create; the plan (docs/plans/locales.md §2.5) folds
	// the seventh into the insert's statement, not built.
	const want = 9
	if len(stmts) != want {
		t.Errorf("POST /pages ran %d statements (besides the token check), want %d:\n%s", len(stmts), want, strings.Join(stmts, "\n"))
	}
	dd := e.do(http.MethodGet, "/drafts/"+draftOf(t, r), nil).resource(t)
	if oc := dd.Attributes["object-changes"].(map[string]any); dd.Attributes["event"] != "create" ||
		fmt.Sprint(oc["title"]) != "[<nil> Child]" || fmt.Sprint(oc["parent-id"]) != "[<nil> "+root+"]" || oc["description"] != nil {
		t.Errorf("create draft = %v", dd.Attributes)
	}
}

// TestDeleteStatementCount pins the statements of a DELETE of a published
// page: whatever the size and depth of its subtree, a transaction around
// the lock-and-load of the page, one statement that finds the subtree and
// locks its drafts and rows, and one that writes every delete draft.
func TestDeleteStatementCount(t *testing.T) {
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	// A leaf, and a subtree three levels deep with contents and a block.
	leaf, dl := e.page("Leaf", "leaf", "")
	top, d0 := e.page("Top", "top", "")
	drafts := []string{dl, d0}
	parents := []string{top}
	var pages []string
	for level := 0; level < 3; level++ {
		var next []string
		for i, p := range parents {
			for j := 0; j < 2; j++ {
				id, d := e.page("P", fmt.Sprintf("p%d-%d-%d", level, i, j), p)
				next, drafts, pages = append(next, id), append(drafts, d), append(pages, id)
			}
		}
		parents = next
	}
	content, dc := e.create("contents", map[string]any{"title": "Main"}, map[string]any{"page": ref("pages", parents[0])})
	_, db := e.create("content-blocks", map[string]any{"var-name": "intro", "body": "<p>hi</p>"}, map[string]any{"content": ref("contents", content)})
	e.mustPublish(append(drafts, dc, db)...)
	// One page of the subtree has an update draft, which the delete replaces.
	e.update("pages", pages[0], map[string]any{"title": "Edited"}, nil)

	for _, target := range []string{leaf, top} {
		var d *doc
		stmts := writeStatements(t, s, func() { d = e.do(http.MethodDelete, "/pages/"+target, nil) })
		if d.Status != 200 {
			t.Fatalf("DELETE %s = %d %s", target, d.Status, d.Raw)
		}
		if r := d.resource(t); r.Attributes["trashed-at"] == nil {
			t.Errorf("DELETE %s answered %v, want trashed-at set", target, r.Attributes)
		}
		const want = 6 // BEGIN, lock-and-load, the subtree's lock, its delete drafts, the audit event (docs/audit.md), COMMIT
		if len(stmts) != want {
			t.Errorf("DELETE %s ran %d statements (besides the token check), want %d:\n%s", target, len(stmts), want, strings.Join(stmts, "\n"))
		}
	}
	// Every item of the subtree is drafted for deletion, the edited page's
	// update draft replaced.
	for _, id := range append(pages, top) {
		r := e.do(http.MethodGet, "/pages/"+id+"?include=draft", nil).resource(t)
		if r.Attributes["trashed-at"] == nil || (id == pages[0] && r.Attributes["title"] != "P") {
			t.Errorf("page %s after the delete: %v", id, r.Attributes)
		}
	}
	if r := e.do(http.MethodGet, "/contents/"+content+"?include=draft", nil).resource(t); r.Attributes["trashed-at"] == nil {
		t.Errorf("content after the delete: %v", r.Attributes)
	}
}
