package e2e

// Cursor pages (page[after], page[before]) of the lists that had only
// numbers: a to-many relationship's pages (GET /<type>/:id/<name> and its
// linkage) and the trash (docs/api-conventions.md, "Cursor pagination").

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// walkCursor pages through path (which takes more parameters after a ?)
// by size from the start with next, and from the end with prev, and
// returns both walks in the list's order; every cursor page has no
// meta.total.
func walkCursor(t *testing.T, e *editor, path string, size int) (fwd, back []string) {
	t.Helper()
	pageOf := func(p string) listPage {
		d := e.do(http.MethodGet, p, nil)
		var body struct{ Meta map[string]any }
		if err := json.Unmarshal(d.Raw, &body); err == nil && body.Meta["total"] != nil {
			t.Errorf("GET %s: a cursor page with meta.total %v", p, body.Meta)
		}
		return e.list(p)
	}
	sz := "page[size]=" + strconv.Itoa(size)
	p := pageOf(path + sep(path) + sz + "&page[after]=")
	if p.links["prev"] != "" || p.links["first"] == "" || p.links["last"] == "" {
		t.Errorf("GET %s: the first cursor page's links %v", path, p.links)
	}
	for i := 0; i < 20; i++ {
		fwd = append(fwd, p.ids...)
		if p.links["next"] == "" {
			break
		}
		p = pageOf(relative(t, p.links["next"]))
	}
	var pages [][]string
	p = pageOf(path + sep(path) + sz + "&page[before]=")
	for i := 0; i < 20; i++ {
		pages = append([][]string{p.ids}, pages...)
		if p.links["prev"] == "" {
			break
		}
		p = pageOf(relative(t, p.links["prev"]))
	}
	return fwd, slices.Concat(pages...)
}

// TestCursorPagesOfRelationshipsAndTrash: a content's blocks (GET
// /contents/:id/content-blocks and its linkage) and the trash walk by cursor, both
// ways, in the order their pages by number show; a cursor naming none of
// the list's records is an empty page without prev or next; a cursor
// cannot be combined with page[number].
func TestCursorPagesOfRelationshipsAndTrash(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	home, hd := e.page("Home", "home", "")
	content, cd := e.create("contents", map[string]any{"title": "Main"}, map[string]any{"page": ref("pages", home)})
	ds := []string{hd, cd}
	for _, name := range []string{"one", "two", "three", "four", "five"} {
		_, d := e.create("content-blocks", map[string]any{"var-name": name, "body": "<p>" + name + "</p>"}, map[string]any{"content": ref("contents", content)})
		ds = append(ds, d)
	}
	e.mustPublish(ds...)

	blocks := "/contents/" + content + "/content-blocks"
	for _, path := range []string{blocks, "/contents/" + content + "/relationships/content-blocks", blocks + "?include=draft"} {
		all := e.list(path + sep(path) + "page[size]=100").ids
		if len(all) != 5 {
			t.Fatalf("GET %s = %v, want five blocks", path, all)
		}
		fwd, back := walkCursor(t, e, path, 2)
		if !slices.Equal(fwd, all) || !slices.Equal(back, all) {
			t.Errorf("GET %s by cursor: forward %v, backward %v, want %v", path, fwd, back, all)
		}
		// next then prev comes back to the first page.
		first := e.list(path + sep(path) + "page[size]=2&page[after]=")
		second := e.list(relative(t, first.links["next"]))
		if again := e.list(relative(t, second.links["prev"])); !slices.Equal(again.ids, all[:2]) || !slices.Equal(second.ids, all[2:4]) {
			t.Errorf("GET %s: next %v then prev %v", path, second.ids, again.ids)
		}
	}

	// Three pages trashed, one at a time: the trash lists the latest
	// deleted first.
	var trashed []string
	for _, slug := range []string{"t1", "t2", "t3"} {
		id, d := e.page("Trash "+slug, slug, "")
		e.settle(d)
		e.settle(e.remove("pages", id))
		trashed = append(trashed, id)
	}
	all := e.list("/pages?filter[trashed]=true&page[size]=100").ids
	if !slices.Equal(all, []string{trashed[2], trashed[1], trashed[0]}) {
		t.Fatalf("the trash = %v, want %v latest first", all, trashed)
	}
	fwd, back := walkCursor(t, e, "/pages?filter[trashed]=true", 1)
	if !slices.Equal(fwd, all) || !slices.Equal(back, all) {
		t.Errorf("the trash by cursor: forward %v, backward %v, want %v", fwd, back, all)
	}
	if got := s.editor(t, "editor@other.test").list("/pages?filter[trashed]=true&page[after]=").ids; len(got) != 0 {
		t.Errorf("another site's trash by cursor = %v", got)
	}

	cursorOf := func(id string) string { return base64.RawURLEncoding.EncodeToString([]byte("r:" + id)) }
	for _, path := range []string{blocks + "?", "/contents/" + content + "/relationships/content-blocks?", "/pages?filter[trashed]=true&"} {
		for _, dir := range []string{"page[after]=", "page[before]="} {
			url := path + "page[size]=2&" + dir + cursorOf(uuid.NewString())
			if p := e.list(url); len(p.ids) != 0 || p.links["next"] != "" || p.links["prev"] != "" {
				t.Errorf("GET %s (a cursor naming none of its records) = %v %v", url, p.ids, p.links)
			}
		}
		if d := e.do(http.MethodGet, path+"page[number]=2&page[after]=", nil); d.Status != 400 || d.Errors[0].Code != "invalid_page" {
			t.Errorf("GET %s with page[number] and page[after] = %d %s", path, d.Status, d.Raw)
		}
	}
}

// sep is the separator of one more query parameter after path.
func sep(path string) string {
	if strings.Contains(path, "?") {
		return "&"
	}
	return "?"
}
