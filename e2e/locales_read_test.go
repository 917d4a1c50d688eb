package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/uptrace/bun"
)

// translate stores values of other locales on a record of table, keyed
// "column@tag" as the engine keeps them (docs/locales.md, Storage): the
// values a published write in those locales leaves on the row.
func (s *system) translate(t *testing.T, table, id string, values map[string]any) {
	t.Helper()
	b, err := json.Marshal(values)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB.NewRaw("UPDATE ? SET translations = translations || ?::jsonb WHERE id = ?",
		bun.Ident(table), string(b), id).Exec(context.Background()); err != nil {
		t.Fatalf("translations of %s %s: %v", table, id, err)
	}
}

// publishLocales publishes the pending drafts of locales tags of the
// records (type → id), failing the test unless it publishes.
func (e *editor) publishLocales(records map[string]string, tags ...string) {
	e.t.Helper()
	var ids []string
	for typ, id := range records {
		ds := e.draftsOfItem(typ, id)
		for _, tag := range tags {
			if d, ok := ds[tag]; ok {
				ids = append(ids, d.ID)
			}
		}
	}
	if len(ids) == 0 {
		e.t.Fatalf("no drafts in %v of %v", tags, records)
	}
	e.mustPublish(ids...)
}

// read GETs path, failing the test unless it is 200, and answers its
// resource and raw body.
func (e *editor) read(path string) (resource, *doc) {
	e.t.Helper()
	d := e.do(http.MethodGet, path, nil)
	if d.Status != http.StatusOK {
		e.t.Fatalf("GET %s = %d %s", path, d.Status, d.Raw)
	}
	return d.resource(e.t), d
}

// fallbacksOf is r's meta.fallbacks as strings (nil when absent).
func fallbacksOf(r resource) map[string]string {
	fb, ok := r.Meta["fallbacks"].(map[string]any)
	if !ok {
		return nil
	}
	out := map[string]string{}
	for k, v := range fb {
		out[k], _ = v.(string)
	}
	return out
}

// wantLocalized fails t unless r's attribute attr is want and its
// meta.fallbacks is exactly fallbacks (nil: none).
func wantLocalized(t *testing.T, label string, r resource, attr string, want any, fallbacks map[string]string) {
	t.Helper()
	if got := r.Attributes[attr]; got != want {
		t.Errorf("%s: %s = %v, want %v", label, attr, got, want)
	}
	if _, has := r.Meta["fallbacks"]; fallbacks == nil && has {
		t.Errorf("%s: meta.fallbacks = %v, want none", label, r.Meta["fallbacks"])
	}
	if got := fallbacksOf(r); fallbacks != nil && !reflect.DeepEqual(got, fallbacks) {
		t.Errorf("%s: meta.fallbacks = %v, want %v", label, got, fallbacks)
	}
}

// withoutAlternates is the JSON document raw without its data's
// meta.alternates (a page's paths in the site's locales, docs/locales.md).
func withoutAlternates(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	if data, ok := d["data"].(map[string]any); ok {
		if meta, ok := data["meta"].(map[string]any); ok {
			delete(meta, "alternates")
		}
	}
	return d
}

// TestLocaleFallbacksMeta: a site with en, de, fr and fr-CA → fr → en
// (issue 33). A value only French read in fr-CA is the French one, and
// meta.fallbacks says {title: fr}; a value only English read in German is
// the English one, {title: en}; a locale's own value is no fallback, a
// value null in every locale is null and no fallback. The same in lists,
// include, related and relationship endpoints, sparse fieldsets and with
// include=draft. The default locale's documents are those of the site
// before it had other locales (but for a page's meta.alternates).
func TestLocaleFallbacksMeta(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	page, pd := e.page("About", "about", "")
	content, cd := e.create("contents", map[string]any{"title": "Main"}, map[string]any{"page": ref("pages", page)})
	block, bd := e.create("content-blocks", map[string]any{"var-name": "intro", "body": "Hello"}, map[string]any{"content": ref("contents", content)})
	e.mustPublish(pd, cd, bd)
	_, single := e.read("/pages/" + page)

	e.setLocales([]string{"en", "de", "fr", "fr-CA"}, map[string]string{"fr-CA": "fr", "fr": "en"})
	if _, d := e.read("/pages/" + page); !reflect.DeepEqual(withoutAlternates(t, d.Raw), withoutAlternates(t, single.Raw)) {
		t.Errorf("the default locale's document changed with the site's locales (but for meta.alternates):\n%s\nwas\n%s", d.Raw, single.Raw)
	}
	// Written in their locales: drafts of those locales, which a drafted
	// read in fr-CA already shows and a live one not yet.
	w := e.mustPatchIn("pages", page, "fr", map[string]any{"title": "À propos"})
	wantLocalized(t, "the French write's answer", w, "title", "À propos", map[string]string{"slug": "en"})
	e.mustPatchIn("pages", page, "de", map[string]any{"description": "Über uns"})
	e.mustPatchIn("contents", content, "de", map[string]any{"title": "Haupt"})
	e.mustPatchIn("content-blocks", block, "fr", map[string]any{"body": "Bonjour"})
	r, _ := e.read("/pages/" + page + "?locale-tag=fr-CA&include=draft")
	wantLocalized(t, "the French draft read in fr-CA", r, "title", "À propos", map[string]string{"title": "fr", "slug": "en"})
	r, _ = e.read("/content-blocks/" + block + "?locale-tag=fr-CA&include=draft")
	wantLocalized(t, "the French block draft read in fr-CA", r, "body", "Bonjour", map[string]string{"body": "fr"})
	r, _ = e.read("/pages/" + page + "?locale-tag=fr-CA")
	wantLocalized(t, "the live page in fr-CA before the publish", r, "title", "About", map[string]string{"title": "en", "slug": "en"})
	e.publishLocales(map[string]string{"pages": page, "contents": content, "content-blocks": block}, "fr", "de")

	r, d := e.read("/pages/" + page + "?locale-tag=fr-CA")
	wantLocalized(t, "page in fr-CA", r, "title", "À propos", map[string]string{"title": "fr", "slug": "en"})
	if r.Attributes["description"] != nil || d.Header.Get("Content-Language") != "fr-CA" {
		t.Errorf("page in fr-CA: description %v (null in every locale of the chain), Content-Language %q", r.Attributes["description"], d.Header.Get("Content-Language"))
	}
	r, _ = e.read("/pages/" + page + "?locale-tag=de")
	wantLocalized(t, "page in de", r, "title", "About", map[string]string{"title": "en", "slug": "en"})
	wantLocalized(t, "page in de", r, "description", "Über uns", map[string]string{"title": "en", "slug": "en"})
	r, _ = e.read("/pages/" + page + "?locale-tag=fr")
	wantLocalized(t, "page in fr", r, "title", "À propos", map[string]string{"slug": "en"})
	r, _ = e.read("/pages/" + page + "?locale-tag=en")
	wantLocalized(t, "page in en", r, "title", "About", nil)
	r, _ = e.read("/pages/" + page + "?locale-tag=fr-CA&fields[pages]=title,description")
	wantLocalized(t, "sparse page in fr-CA", r, "title", "À propos", map[string]string{"title": "fr"})
	r, _ = e.read("/pages/" + page + "?locale-tag=de&fields[pages]=description")
	wantLocalized(t, "sparse page in de, its own value only", r, "description", "Über uns", nil)

	// As of now (a published state, rendered like a live read).
	r, _ = e.read("/pages/" + page + "?locale-tag=fr-CA&as-of=" + time.Now().UTC().Add(time.Second).Format(time.RFC3339))
	wantLocalized(t, "page as of now in fr-CA", r, "title", "À propos", map[string]string{"title": "fr", "slug": "en"})
	// Lists.
	for _, l := range resources(t, e.do(http.MethodGet, "/pages?locale-tag=fr-CA", nil)) {
		if l.ID == page {
			wantLocalized(t, "listed page in fr-CA", l, "title", "À propos", map[string]string{"title": "fr", "slug": "en"})
		}
	}
	// A content's own German title; its block's body from French.
	r, _ = e.read("/contents/" + content + "?locale-tag=de")
	wantLocalized(t, "content in de", r, "title", "Haupt", nil)
	r, _ = e.read("/contents/" + content + "?locale-tag=fr-CA")
	wantLocalized(t, "content in fr-CA", r, "title", "Main", map[string]string{"title": "en"})
	r, _ = e.read("/content-blocks/" + block + "?locale-tag=fr-CA")
	wantLocalized(t, "block in fr-CA", r, "body", "Bonjour", map[string]string{"body": "fr"})
	// Related and relationship endpoints, include.
	r, _ = e.read("/contents/" + content + "/page?locale-tag=fr-CA")
	wantLocalized(t, "a content's page (related) in fr-CA", r, "title", "À propos", map[string]string{"title": "fr", "slug": "en"})
	blocks := resources(t, e.do(http.MethodGet, "/contents/"+content+"/content-blocks?locale-tag=fr-CA", nil))
	if len(blocks) != 1 {
		t.Fatalf("a content's content-blocks in fr-CA: %d", len(blocks))
	}
	wantLocalized(t, "a content's block (related) in fr-CA", blocks[0], "body", "Bonjour", map[string]string{"body": "fr"})
	included := func(path string) map[string]resource {
		t.Helper()
		var d struct{ Included []resource }
		_, raw := e.read(path)
		if err := json.Unmarshal(raw.Raw, &d); err != nil {
			t.Fatal(err)
		}
		out := map[string]resource{}
		for _, r := range d.Included {
			out[r.Type+"/"+r.ID] = r
		}
		return out
	}
	inc := included("/contents/" + content + "?locale-tag=fr-CA&include=page,content-blocks")
	wantLocalized(t, "included page in fr-CA", inc["pages/"+page], "title", "À propos", map[string]string{"title": "fr", "slug": "en"})
	wantLocalized(t, "included block in fr-CA", inc["content-blocks/"+block], "body", "Bonjour", map[string]string{"body": "fr"})
	inc = included("/content-blocks/" + block + "?locale-tag=de&include=content")
	wantLocalized(t, "included content in de", inc["contents/"+content], "title", "Haupt", nil)
	inc = included("/contents/" + content + "?locale-tag=de&include=page")
	wantLocalized(t, "included page in de", inc["pages/"+page], "title", "About", map[string]string{"title": "en", "slug": "en"})
	inc = included("/contents/" + content + "?include=page")
	wantLocalized(t, "included page in the default locale", inc["pages/"+page], "title", "About", nil)

	// include=draft: the drafted state, resolved along the chain.
	if d := e.do(http.MethodPatch, "/pages/"+page, map[string]any{"data": map[string]any{"type": "pages", "id": page,
		"attributes": map[string]any{"title": "About us"}}}); d.Status != http.StatusOK {
		t.Fatalf("PATCH the English title = %d %s", d.Status, d.Raw)
	}
	r, _ = e.read("/pages/" + page + "?locale-tag=de&include=draft")
	wantLocalized(t, "drafted page in de", r, "title", "About us", map[string]string{"title": "en", "slug": "en"})
	r, _ = e.read("/pages/" + page + "?locale-tag=fr-CA&include=draft")
	wantLocalized(t, "drafted page in fr-CA", r, "title", "À propos", map[string]string{"title": "fr", "slug": "en"})
	r, _ = e.read("/pages/" + page + "?locale-tag=de")
	wantLocalized(t, "live page in de beside the draft", r, "title", "About", map[string]string{"title": "en", "slug": "en"})

	// The trash, a list of deleted records' last states, in a locale too.
	e.mustPublish(e.remove("content-blocks", block))
	trashed := resources(t, e.do(http.MethodGet, "/content-blocks?filter[trashed]=true&locale-tag=fr-CA", nil))
	if len(trashed) != 1 {
		t.Fatalf("the trash in fr-CA: %d blocks", len(trashed))
	}
	wantLocalized(t, "the trashed block in fr-CA", trashed[0], "body", "Bonjour", map[string]string{"body": "fr"})
	trashed = resources(t, e.do(http.MethodGet, "/content-blocks?filter[trashed]=true", nil))
	wantLocalized(t, "the trashed block in the default locale", trashed[0], "body", "Hello", nil)
}

// TestLocaleTenancy: locales are judged by the caller's site. Another
// site's records, drafts, releases and paths are 404 (or absent) in any
// locale of the caller's, and a tag only the other site lists is 400
// unknown_locale, on every route, GET /pages/:id included.
func TestLocaleTenancy(t *testing.T) {
	t.Parallel()
	s := start(t)
	me := s.editor(t, "editor@demo.test")
	other := s.editor(t, "editor@other.test")
	me.setLocales([]string{"en", "de"}, nil)
	other.setLocales([]string{"en", "fr"}, nil)
	mine, md := me.page("Mine", "mine", "")
	me.mustPublish(md)
	theirs, td := other.page("Theirs", "theirs", "")
	other.mustPublish(td)
	other.mustPatchIn("pages", theirs, "fr", map[string]any{"title": "Leur", "slug": "leur"})
	other.publishLocales(map[string]string{"pages": theirs}, "fr")
	s.translate(t, "pages", theirs, map[string]any{"title@de": "Ihre"}) // a German value, which their site does not even list
	other.mustPatchIn("pages", theirs, "fr", map[string]any{"title": "Leur, drafted"})
	if d := other.do(http.MethodPatch, "/pages/"+theirs, map[string]any{"data": map[string]any{"type": "pages", "id": theirs,
		"attributes": map[string]any{"title": "Theirs, drafted"}}}); d.Status != http.StatusOK {
		t.Fatalf("their PATCH = %d %s", d.Status, d.Raw)
	}
	drafts := other.draftsOfItem("pages", theirs)
	if drafts[""].ID == "" || drafts["fr"].ID == "" {
		t.Fatalf("their drafts: %v, want a shared and a French one", drafts)
	}
	rel := other.createRelease("theirs")

	for _, p := range []string{"/pages/" + theirs, "/pages/" + theirs + "?include=draft", "/drafts/" + drafts[""].ID, "/drafts/" + drafts["fr"].ID, "/releases/" + rel,
		"/pages/" + theirs + "/versions"} {
		for _, tag := range []string{"", "de", "en"} {
			path := p
			if tag != "" {
				path += map[bool]string{true: "&", false: "?"}[bytes.ContainsRune([]byte(p), '?')] + "locale-tag=" + tag
			}
			if st := me.status(path); st != http.StatusNotFound {
				t.Errorf("another site's GET %s = %d, want 404", path, st)
			}
		}
	}
	for _, path := range []string{"/pages?locale-tag=de&filter[path]=/theirs", "/pages?locale-tag=de&include=draft", "/drafts?locale-tag=de"} {
		for _, r := range resources(t, me.do(http.MethodGet, path, nil)) {
			if r.ID == theirs {
				t.Errorf("GET %s lists another site's page", path)
			}
		}
	}
	// fr is the other site's locale, not mine: 400 at the parameter, on
	// the batched read of one record as on every other route.
	for _, path := range []string{"/pages?locale-tag=fr", "/pages/" + mine + "?locale-tag=fr", "/pages/" + theirs + "?locale-tag=fr",
		"/contents?locale-tag=fr", "/drafts?locale-tag=fr"} {
		wantError(t, me.do(http.MethodGet, path, nil), http.StatusBadRequest, "unknown_locale", "locale-tag")
	}
	// Mine in German: my own values, none of theirs.
	r, _ := me.read("/pages/" + mine + "?locale-tag=de")
	wantLocalized(t, "my page in de", r, "title", "Mine", map[string]string{"title": "en", "slug": "en"})
	r, _ = other.read("/pages/" + theirs + "?locale-tag=fr")
	wantLocalized(t, "their page in fr, by them", r, "title", "Leur", nil)
}

// TestLocaleReadCache: the read cache (docs/caching.md) keeps a document
// per locale. German, English and German reads of one page, each repeated
// so the second is a hit, never answer one locale with another's document;
// a changed German value is seen at once; and when the default locale
// changes, a read without locale-tag answers in the new default.
func TestLocaleReadCache(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	page, pd := e.page("About", "about", "")
	e.mustPublish(pd)
	e.setLocales([]string{"en", "de"}, nil)
	german := func(title string) {
		t.Helper()
		e.mustPatchIn("pages", page, "de", map[string]any{"title": title})
		e.publishLocales(map[string]string{"pages": page}, "de")
	}
	german("Über uns")
	live := "/pages/" + page
	check := func(label, path, want, lang string) {
		t.Helper()
		for i := range 3 {
			r, d := e.read(path)
			if r.Attributes["title"] != want || d.Header.Get("Content-Language") != lang {
				t.Fatalf("%s, read %d: title %v Content-Language %q, want %q %q", label, i, r.Attributes["title"], d.Header.Get("Content-Language"), want, lang)
			}
		}
	}
	for round := range 2 {
		check("German", live+"?locale-tag=de", "Über uns", "de")
		check("English", live, "About", "en")
		check("English by its tag", live+"?locale-tag=en", "About", "en")
		check("German again", live+"?locale-tag=de", "Über uns", "de")
		check("German, the tag in capitals", live+"?locale-tag=DE", "Über uns", "de")
		check("German, sparse", live+"?locale-tag=de&fields[pages]=title", "Über uns", "de")
		check("English, sparse", live+"?fields[pages]=title", "About", "en")
		if round == 0 {
			german("Über uns!")
			check("German after its publish", live+"?locale-tag=de", "Über uns!", "de")
			check("English after the German publish", live, "About", "en")
			german("Über uns")
		}
	}
	// The cache keeps the German document as an entry of its own: a first
	// German read of a URL adds one, a second is answered from it, an
	// English read of the same page adds another.
	fresh := live + "?fields[pages]=title,slug"
	n := s.reads.Len()
	check("German, first of its URL", fresh+"&locale-tag=de", "Über uns", "de")
	if got := s.reads.Len(); got != n+1 {
		t.Errorf("entries after German reads of a new URL: %d, want %d (one kept)", got, n+1)
	}
	check("English, first of its URL", fresh, "About", "en")
	if got := s.reads.Len(); got != n+2 {
		t.Errorf("entries after English reads of it too: %d, want %d (one per locale)", got, n+2)
	}
	// German becomes the default: the URL without a tag is German now.
	e.setLocales([]string{"de", "en"}, nil)
	check("the new default", live, "Über uns", "de")
	check("English by its tag, after", live+"?locale-tag=en", "About", "en")
	e.setLocales([]string{"en", "de"}, nil)
	check("the old default again", live, "About", "en")
}
