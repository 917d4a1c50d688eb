package e2e

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestLocaleSearch: filter[q] and GET /search with locale-tag
// (docs/locales.md, "Searching in a locale"). German values are searched
// with the German stemmer ("haus" finds "Häuser"); a record with German
// values is found in de by those only, not by its English words, which
// still find it in en; a record without German values falls back to its
// English ones; drafted German values only with include=draft; another
// site's German records never.
func TestLocaleSearch(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	o := s.editor(t, "editor@other.test")
	e.setLocales([]string{"en", "de"}, nil)
	o.setLocales([]string{"en", "de"}, nil)

	houses, hd := e.page("Houses and gardens", "houses", "")
	cars, cd := e.page("Houses of cars", "cars", "")
	bikes, bd := e.page("Bicycles", "bikes", "")
	e.mustPublish(hd, cd, bd)
	e.mustPatchIn("pages", houses, "de", map[string]any{"title": "Häuser und Gärten"})
	e.mustPublish(e.draftsOfItem("pages", houses)["de"].ID)
	e.mustPatchIn("pages", bikes, "de", map[string]any{"title": "Fahrräder"}) // drafted, not published
	theirs, td := o.page("Their houses", "theirs", "")
	o.mustPublish(td)
	o.mustPatchIn("pages", theirs, "de", map[string]any{"title": "Ihre Häuser"})
	o.mustPublish(o.draftsOfItem("pages", theirs)["de"].ID)

	want := func(path string, ids ...string) map[string]map[string]any {
		t.Helper()
		got, metas := e.searchIDs(path)
		slices.Sort(got)
		slices.Sort(ids)
		if !slices.Equal(got, ids) {
			t.Errorf("GET %s found %v, want %v", path, got, ids)
		}
		return metas
	}
	// German stemming, and the highlight from the German values.
	m := want("/pages?locale-tag=de&filter[q]="+q("haus"), houses)
	if hit := m[houses]; hit["locale"] != "de" || !strings.Contains(hit["highlight"].(string), "<mark>Häuser</mark>") {
		t.Errorf("meta.search of the German hit = %v", hit)
	}
	want("/search?locale-tag=de&filter[q]="+q("Häuser"), houses)
	// Shadowing: the English words of a page with German values.
	want("/search?locale-tag=de&filter[q]=" + q("gardens"))
	want("/pages?filter[q]="+q("gardens"), houses)
	want("/search?locale-tag=en&filter[q]="+q("houses"), houses, cars)
	want("/search?filter[q]=" + q("häuser")) // English does not read German
	// A page without German values is found by its English ones in de.
	m = want("/pages?locale-tag=de&filter[q]="+q("cars"), cars)
	if hit := m[cars]; hit["locale"] != "en" || !strings.Contains(hit["highlight"].(string), "<mark>cars</mark>") {
		t.Errorf("meta.search of the fallback hit = %v", hit)
	}
	// Drafted German values: only with include=draft, and they then
	// shadow the English ones there.
	want("/search?locale-tag=de&filter[q]=" + q("fahrrad"))
	m = want("/search?locale-tag=de&include=draft&filter[q]="+q("fahrrad"), bikes)
	if hit := m[bikes]; !strings.Contains(hit["highlight"].(string), "<mark>Fahrräder</mark>") {
		t.Errorf("meta.search of the drafted German hit = %v", hit)
	}
	want("/pages?locale-tag=de&include=draft&filter[q]=" + q("bicycles"))
	want("/pages?locale-tag=de&filter[q]="+q("bicycles"), bikes)
	want("/pages?include=draft&filter[q]="+q("bicycles"), bikes)
	// Another site's German page: its own search finds it, ours never.
	if got, _ := o.searchIDs("/search?locale-tag=de&filter[q]=" + q("haus")); !slices.Equal(got, []string{theirs}) {
		t.Errorf("the other site's German search = %v, want [%s]", got, theirs)
	}
	want("/search?locale-tag=de&filter[q]=" + q("ihre"))
	// Removing German from the other site (with force) removes its German
	// documents with its German values.
	if d := o.patchSite(map[string]any{"locales": []string{"en"}}, map[string]any{"force": true}); d.Status != http.StatusOK {
		t.Fatalf("remove de with force = %d %s", d.Status, d.Raw)
	}
	var left int
	if err := s.DB.NewRaw("SELECT count(*) FROM search_documents WHERE item_id = ? AND locale <> ''", theirs).Scan(context.Background(), &left); err != nil || left != 0 {
		t.Errorf("German documents left after the removal: %d (%v)", left, err)
	}
	if got, _ := o.searchIDs("/search?filter[q]=" + q("haus")); len(got) != 0 {
		t.Errorf("after removing de, haus found %v", got)
	}
	// Paged by cursor in a locale too.
	if d := e.do(http.MethodGet, "/search?locale-tag=de&page[size]=1&page[after]=&filter[q]="+q("haus"), nil); d.Status != http.StatusOK {
		t.Errorf("cursor page in de = %d %s", d.Status, d.Raw)
	}
}

// TestLocaleHyperlinks: a German body links German paths. Its hrefs are
// resolved against the German paths (a German href to the English path is
// no link), the link carries its locale, a German slug draft of the
// linked page lists the German links only, its deletion every locale's,
// and publishing the German body leaves the English body's live link.
func TestLocaleHyperlinks(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	e.setLocales([]string{"en", "de"}, nil)
	about, ad := e.page("About", "about", "")
	home, hd := e.create("pages", map[string]any{"title": "Home", "slug": "", "page-type": "home"}, nil)
	e.mustPublish(ad, hd)
	e.mustPatchIn("pages", about, "de", map[string]any{"slug": "ueber-uns"})
	e.mustPublish(e.draftsOfItem("pages", about)["de"].ID)

	content, cd := e.create("contents", map[string]any{"title": "Main"}, map[string]any{"page": ref("pages", home)})
	block, bd := e.create("content-blocks", map[string]any{"var-name": "intro", "data-type": "html",
		"body": `<a href="/about">about us</a>`}, map[string]any{"content": ref("contents", content)})
	e.mustPublish(cd, bd)
	e.mustPatchIn("content-blocks", block, "de", map[string]any{"body": `<a href="/ueber-uns">über uns</a> <a href="/about">not German</a>`})
	blockDE := e.draftsOfItem("content-blocks", block)["de"].ID

	linksOf := func(path string) map[string]int {
		t.Helper()
		d := e.do(http.MethodGet, path, nil)
		if d.Status != http.StatusOK {
			t.Fatalf("GET %s = %d %s", path, d.Status, d.Raw)
		}
		out := map[string]int{}
		for _, r := range includedOf(t, d) {
			if r.Type != "hyperlinks" {
				continue
			}
			tag, _ := r.Attributes["locale"].(string)
			out[tag+" "+r.Attributes["href"].(string)]++
		}
		return out
	}
	// The block read: live, its live (English) link; drafted, the German
	// draft's link beside it.
	if got := linksOf("/content-blocks/" + block + "?include=hyperlinks"); len(got) != 1 || got[" /about"] != 1 {
		t.Errorf("live links of the block = %v, want the English /about", got)
	}
	if got := linksOf("/content-blocks/" + block + "?include=hyperlinks,draft"); len(got) != 2 || got[" /about"] != 1 || got["de /ueber-uns"] != 1 {
		t.Errorf("drafted links of the block = %v, want the English /about and the German /ueber-uns", got)
	}
	// A German slug change of the linked page: the German link only.
	e.mustPatchIn("pages", about, "de", map[string]any{"slug": "ueber"})
	slugDraft := e.draftsOfItem("pages", about)["de"].ID
	if got := linksOf("/drafts/" + slugDraft + "?include=hyperlinks"); len(got) != 1 || got["de /ueber-uns"] != 1 {
		t.Errorf("links to the German slug draft = %v, want the German body's /ueber-uns", got)
	}
	if d := e.do(http.MethodDelete, "/drafts/"+slugDraft, nil); d.Status != http.StatusNoContent {
		t.Fatalf("revert the German slug draft = %d %s", d.Status, d.Raw)
	}
	// Its deletion: the English live link and the German drafted one.
	del := draftOf(t, e.do(http.MethodDelete, "/pages/"+about, nil).resource(t))
	if got := linksOf("/drafts/" + del + "?include=hyperlinks"); len(got) != 2 || got[" /about"] != 1 || got["de /ueber-uns"] != 1 {
		t.Errorf("links to the deletion = %v, want the English /about and the German /ueber-uns", got)
	}
	if d := e.do(http.MethodDelete, "/drafts/"+del, nil); d.Status != http.StatusNoContent {
		t.Fatalf("revert the deletion = %d %s", d.Status, d.Raw)
	}
	// Publishing the German body: both live, each in its locale.
	e.mustPublish(blockDE)
	if got := linksOf("/content-blocks/" + block + "?include=hyperlinks"); len(got) != 2 || got[" /about"] != 1 || got["de /ueber-uns"] != 1 {
		t.Errorf("live links after the German publish = %v", got)
	}
}
