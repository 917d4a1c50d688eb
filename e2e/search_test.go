package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// searchIDs lists path (GET) and answers the ids in order, with each
// hit's meta.search.
func (e *editor) searchIDs(path string) ([]string, map[string]map[string]any) {
	e.t.Helper()
	d := e.do(http.MethodGet, path, nil)
	if d.Status != 200 {
		e.t.Fatalf("GET %s = %d %s", path, d.Status, d.Raw)
	}
	var ids []string
	metas := map[string]map[string]any{}
	for _, r := range resources(e.t, d) {
		ids = append(ids, r.ID)
		if m, ok := r.Meta["search"].(map[string]any); ok {
			metas[r.ID] = m
		} else {
			e.t.Errorf("GET %s: %s %s has no meta.search: %s", path, r.Type, r.ID, d.Raw)
		}
	}
	return ids, metas
}

func q(words string) string { return url.QueryEscape(words) }

// TestSearch: filter[q] on pages, contents, content blocks (issue 32):
// stemming, prefixes, accents, a title match ranked above a body match,
// highlights with <mark> and everything else escaped, drafted values found
// only with include=draft, another site's records never.
func TestSearch(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	o := s.editor(t, "editor@other.test")

	photo, photoDraft := e.create("pages", map[string]any{"title": "Photography tips", "slug": "photo",
		"description": "How we shoot our café interiors"}, nil)
	cook, cookDraft := e.create("pages", map[string]any{"title": "Cooking", "slug": "cooking"}, nil)
	content, contentDraft := e.create("contents", map[string]any{"title": "Main"}, map[string]any{"page": ref("pages", cook)})
	block, blockDraft := e.create("content-blocks", map[string]any{"var-name": "body", "data-type": "html",
		"body": `<p>We love photographing food &amp; drinks, 1 &lt; 2 <script>alert("photographs")</script></p>`},
		map[string]any{"content": ref("contents", content)})
	e.mustPublish(photoDraft, cookDraft, contentDraft, blockDraft)
	other, otherDraft := o.create("pages", map[string]any{"title": "Photography elsewhere", "slug": "photo"}, nil)
	o.mustPublish(otherDraft)

	// Stemming: "photographs" finds "Photography" (stem photograph).
	if ids, _ := e.searchIDs("/pages?filter[q]=" + q("photographs")); strings.Join(ids, ",") != photo {
		t.Errorf("stemmed search = %v, want [%s]", ids, photo)
	}
	// Prefix: "photog" finds it too, and accents: "cafe" finds "café".
	if ids, _ := e.searchIDs("/pages?filter[q]=" + q("photog")); strings.Join(ids, ",") != photo {
		t.Errorf("prefix search = %v, want [%s]", ids, photo)
	}
	if ids, _ := e.searchIDs("/pages?filter[q]=" + q("CAFE interior")); strings.Join(ids, ",") != photo {
		t.Errorf("accent-insensitive search = %v, want [%s]", ids, photo)
	}
	if ids, _ := e.searchIDs("/pages?filter[q]=" + q("Cafés")); strings.Join(ids, ",") != photo {
		t.Errorf("accented query = %v, want [%s]", ids, photo)
	}
	if ids, _ := e.searchIDs("/pages?filter[q]=" + q("zebra")); len(ids) != 0 {
		t.Errorf("search for nothing = %v", ids)
	}
	// The other site's page is never found, and theirs never ours.
	if ids, _ := o.searchIDs("/pages?filter[q]=" + q("photography")); strings.Join(ids, ",") != other {
		t.Errorf("other site's search = %v, want [%s]", ids, other)
	}

	// Blocks: the HTML body's text, a script's text left out; the
	// highlight marks the match and escapes the rest.
	ids, metas := e.searchIDs("/content-blocks?filter[q]=" + q("photograph"))
	if strings.Join(ids, ",") != block {
		t.Fatalf("block search = %v, want [%s]", ids, block)
	}
	hl, _ := metas[block]["highlight"].(string)
	if !strings.Contains(hl, "<mark>photographing</mark>") || !strings.Contains(hl, "&amp;") ||
		strings.Contains(hl, "<script") || strings.Contains(hl, "<p>") {
		t.Errorf("block highlight = %q", hl)
	}
	if ids, _ := e.searchIDs("/content-blocks?filter[q]=" + q("alert")); len(ids) != 0 {
		t.Errorf("a script's text was indexed: %v", ids)
	}
	// A text block whose body is markup-looking text: escaped, never markup.
	tb, tbDraft := e.create("content-blocks", map[string]any{"var-name": "note", "data-type": "text",
		"body": `Ranking "quoted" <img src=x onerror=alert(1)> photography`}, map[string]any{"content": ref("contents", content)})
	e.mustPublish(tbDraft)
	_, metas = e.searchIDs("/content-blocks?filter[q]=" + q("ranking"))
	if hl, _ := metas[tb]["highlight"].(string); !strings.Contains(hl, "<mark>Ranking</mark>") || !strings.Contains(hl, "&#34;quoted&#34;") || strings.Contains(hl, "<img") {
		t.Errorf("text block highlight = %q", hl)
	}

	// Ranking: a title match above a body match, across /search.
	d := e.do(http.MethodGet, "/search?filter[q]="+q("photography"), nil)
	if d.Status != 200 {
		t.Fatalf("GET /search = %d %s", d.Status, d.Raw)
	}
	rs := resources(t, d)
	if len(rs) < 2 || rs[0].Type != "pages" || rs[0].ID != photo {
		t.Errorf("GET /search ranked = %s", d.Raw)
	}
	var types []string
	for _, r := range rs {
		types = append(types, r.Type+":"+r.ID)
		if r.ID == other {
			t.Errorf("GET /search found another site's page")
		}
	}
	if !strings.Contains(strings.Join(types, ","), "content-blocks:"+tb) {
		t.Errorf("GET /search = %v, want the text block too", types)
	}
	if _, m := e.searchIDs("/pages?filter[q]=" + q("photography")); m[photo]["rank"] == nil {
		t.Errorf("no rank: %v", m)
	}

	// Drafts: a title just typed is found with include=draft only, and
	// the live title is then found only without it.
	e.update("pages", cook, map[string]any{"title": "Baking bread"}, nil)
	if ids, _ := e.searchIDs("/pages?filter[q]=" + q("baking")); len(ids) != 0 {
		t.Errorf("live search found a drafted title: %v", ids)
	}
	ids, metas = e.searchIDs("/pages?include=draft&filter[q]=" + q("bake"))
	if strings.Join(ids, ",") != cook {
		t.Errorf("drafted search = %v, want [%s]", ids, cook)
	} else if hl, _ := metas[cook]["highlight"].(string); !strings.Contains(hl, "<mark>Baking</mark>") {
		t.Errorf("drafted highlight = %q", hl)
	}
	if ids, _ := e.searchIDs("/pages?include=draft&filter[q]=" + q("cooking")); len(ids) != 0 {
		t.Errorf("drafted search found the live title: %v", ids)
	}
	if ids, _ := e.searchIDs("/pages?filter[q]=" + q("cooking")); strings.Join(ids, ",") != cook {
		t.Errorf("live search = %v, want [%s]", ids, cook)
	}
	// An unpublished create is found only in the drafted view.
	fresh, _ := e.create("pages", map[string]any{"title": "Gardening", "slug": "garden"}, nil)
	if ids, _ := e.searchIDs("/pages?filter[q]=" + q("garden")); len(ids) != 0 {
		t.Errorf("live search found an unpublished page: %v", ids)
	}
	if ids, _ := e.searchIDs("/search?include=draft&filter[q]=" + q("gardening")); strings.Join(ids, ",") != fresh {
		t.Errorf("drafted /search = %v, want [%s]", ids, fresh)
	}
	if ids, _ := o.searchIDs("/search?include=draft&filter[q]=" + q("gardening")); len(ids) != 0 {
		t.Errorf("another site's drafted search found %v", ids)
	}

	// Bounds: no words, too many, too long: 400 at filter[q].
	for _, bad := range []string{"", "!!!", strings.Repeat("a ", 9), strings.Repeat("x", 300)} {
		d := e.do(http.MethodGet, "/pages?filter[q]="+q(bad), nil)
		if d.Status != 400 || len(d.Errors) == 0 || d.Errors[0].Source.Parameter != "filter[q]" {
			t.Errorf("filter[q]=%q = %d %s", bad, d.Status, d.Raw)
		}
	}
	// Paginated: page[size]=1 of /search.
	d = e.do(http.MethodGet, "/search?filter[q]="+q("photography")+"&page[size]=1", nil)
	if d.Status != 200 || len(resources(t, d)) != 1 || !strings.Contains(string(d.Raw), `"next"`) {
		t.Errorf("paged /search = %d %s", d.Status, d.Raw)
	}

	searchCursors(t, e)
}

// searchCursors: GET /search pages by cursor (its rank, type and id), both
// ways, through hits of equal rank (ties broken by type and id), in the
// order page[number] shows; the last page has no next, the first no prev.
func searchCursors(t *testing.T, e *editor) {
	t.Helper()
	var drafts, pages []string
	for i := range 5 {
		id, d := e.create("pages", map[string]any{"title": "Snorkel guide", "slug": "snorkel-" + string(rune('a'+i))}, nil)
		drafts, pages = append(drafts, d), append(pages, id)
	}
	_, d := e.create("contents", map[string]any{"title": "Snorkel"}, map[string]any{"page": ref("pages", pages[0])})
	e.mustPublish(append(drafts, d)...)
	all := e.list("/search?filter[q]=snorkel&page[size]=100").ids
	if len(all) != 6 {
		t.Fatalf("GET /search snorkel = %v", all)
	}
	var fwd []string
	p := e.list("/search?filter[q]=snorkel&page[size]=2&page[after]=")
	if p.links["prev"] != "" {
		t.Errorf("the first search page has a prev: %v", p.links)
	}
	for i := 0; ; i++ {
		fwd = append(fwd, p.ids...)
		if p.links["next"] == "" || i > 5 {
			break
		}
		p = e.list(relative(t, p.links["next"]))
	}
	if strings.Join(fwd, ",") != strings.Join(all, ",") || len(p.ids) != 2 {
		t.Errorf("/search forward by cursor = %v, want %v (the last page of 2, without next)", fwd, all)
	}
	var back []string
	p = e.list("/search?filter[q]=snorkel&page[size]=4&page[before]=")
	for i := 0; ; i++ {
		back = append(append([]string{}, p.ids...), back...)
		if p.links["prev"] == "" || i > 5 {
			break
		}
		p = e.list(relative(t, p.links["prev"]))
	}
	if strings.Join(back, ",") != strings.Join(all, ",") || len(p.ids) != 2 || p.links["next"] == "" {
		t.Errorf("/search backward by cursor = %v, want %v (the first page of 2, with a next)", back, all)
	}
	if d := e.do(http.MethodGet, "/search?filter[q]=snorkel&page[size]=2&page[after]=", nil); strings.Contains(string(d.Raw), `"total"`) {
		t.Errorf("a cursor page of /search has a total: %s", d.Raw)
	}
}
