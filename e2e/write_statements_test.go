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
// draft and the page (with its drafted path) and one that writes them. No
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
			if strings.Contains(q, "oauth_") {
				continue // the bearer token's check, shared by every request
			}
			writes = append(writes, q)
		}
		const want = 4 // BEGIN, lock-and-load, write, COMMIT
		if len(writes) != want {
			t.Errorf("PATCH %d ran %d statements (besides the token check), want %d:\n%s", i, len(writes), want, strings.Join(writes, "\n"))
		}
	}
}
