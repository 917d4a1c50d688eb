package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// draftsOfItem lists the pending drafts of item (GET /drafts of its type),
// by their locale attribute ("" for the shared draft).
func (e *editor) draftsOfItem(typ, item string) map[string]resource {
	e.t.Helper()
	d := e.do(http.MethodGet, "/drafts?filter[item-type]="+typ+"&page[size]=100", nil)
	if d.Status != http.StatusOK {
		e.t.Fatalf("GET /drafts = %d %s", d.Status, d.Raw)
	}
	var list []resource
	if err := json.Unmarshal(d.Data, &list); err != nil {
		e.t.Fatal(err)
	}
	out := map[string]resource{}
	for _, r := range list {
		var it struct{ ID string }
		_ = json.Unmarshal(r.Relationships["item"].Data, &it)
		if it.ID != item {
			continue
		}
		tag, _ := r.Attributes["locale"].(string)
		if _, ok := r.Attributes["locale"]; !ok {
			e.t.Fatalf("draft %s has no attribute locale: %v", r.ID, r.Attributes)
		}
		out[tag] = r
	}
	return out
}

// patchIn sends PATCH /<typ>/<id>?locale-tag=<tag> with attrs.
func (e *editor) patchIn(typ, id, tag string, attrs map[string]any) *doc {
	e.t.Helper()
	return e.do(http.MethodPatch, "/"+typ+"/"+id+"?locale-tag="+tag,
		map[string]any{"data": map[string]any{"type": typ, "id": id, "attributes": attrs}})
}

// mustPatchIn is patchIn, failing the test unless it is 200.
func (e *editor) mustPatchIn(typ, id, tag string, attrs map[string]any) resource {
	e.t.Helper()
	d := e.patchIn(typ, id, tag, attrs)
	if d.Status != http.StatusOK {
		e.t.Fatalf("PATCH /%s/%s?locale-tag=%s %v = %d %s", typ, id, tag, attrs, d.Status, d.Raw)
	}
	return d.resource(e.t)
}

// changesOf is a draft's object-changes: attribute -> [before, after].
func changesOf(r resource) map[string][]any {
	out := map[string][]any{}
	oc, _ := r.Attributes["object-changes"].(map[string]any)
	for k, v := range oc {
		pair, _ := v.([]any)
		out[k] = pair
	}
	return out
}

// translationsOf reads a record's stored translations (no read shows
// them yet in this part: the reads in a locale are part 5).
func (s *system) translationsOf(t *testing.T, table, id string) map[string]any {
	t.Helper()
	var raw string
	if err := s.DB.NewRaw("SELECT translations::text FROM "+table+" WHERE id = ?", id).Scan(context.Background(), &raw); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// localePath is page's path in locale tag (page_locale_paths; "" when
// it has none).
func (s *system) localePath(t *testing.T, page, tag string) string {
	t.Helper()
	var paths []string
	if err := s.DB.NewRaw("SELECT path FROM page_locale_paths WHERE page_id = ? AND locale = ?", page, tag).Scan(context.Background(), &paths); err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		return ""
	}
	return paths[0]
}

// TestLocaleWrites: writes with locale-tag (docs/locales.md). A live
// record's localized attributes go to that locale's draft, keyed
// title@de, its shared ones to the shared draft; a never-published
// record's translations change with its create draft; null clears a
// translation; reverting a locale draft reverts only it; a delete takes
// the locale drafts with it.
func TestLocaleWrites(t *testing.T) {
	s := start(t)
	ed := s.editor(t, "editor@demo.test")
	ed.setLocales([]string{"en", "de", "fr-CA"}, map[string]string{"fr-CA": "fr", "fr": "en"})

	page, create := ed.page("About us", "about-us", "")
	ed.mustPublish(create)

	// German title and slug, and a shared attribute, in one write.
	ed.mustPatchIn("pages", page, "de", map[string]any{"title": "Über uns", "slug": "ueber-uns", "search-engine-indexable": false})
	if live := ed.do(http.MethodGet, "/pages/"+page, nil).resource(t); live.Attributes["search-engine-indexable"] != true {
		t.Errorf("live read after a draft: search-engine-indexable = %v, want the live true", live.Attributes["search-engine-indexable"])
	}
	ds := ed.draftsOfItem("pages", page)
	de, shared := ds["de"], ds[""]
	if de.ID == "" || shared.ID == "" || len(ds) != 2 {
		t.Fatalf("drafts of the page after a German write: %v", ds)
	}
	if de.Attributes["locale"] != "de" || shared.Attributes["locale"] != nil {
		t.Errorf("locale attributes: de %v, shared %v", de.Attributes["locale"], shared.Attributes["locale"])
	}
	oc := changesOf(de)
	if len(oc) != 2 || oc["title@de"][1] != "Über uns" || oc["title@de"][0] != nil || oc["slug@de"][1] != "ueber-uns" {
		t.Errorf("the German draft's object-changes = %v, want title@de and slug@de", oc)
	}
	if oc := changesOf(shared); len(oc) != 1 || oc["search-engine-indexable"] == nil {
		t.Errorf("the shared draft's object-changes = %v, want search-engine-indexable only", oc)
	}
	// English stays as it is, in the row and in the shared draft.
	got := ed.do(http.MethodGet, "/pages/"+page, nil).resource(t)
	if got.Attributes["title"] != "About us" || got.Attributes["slug"] != "about-us" {
		t.Errorf("English after a German write: %v", got.Attributes)
	}

	// A second German write merges into the same draft; null clears a
	// German value that is not live yet (the draft drops it).
	ed.mustPatchIn("pages", page, "de", map[string]any{"description": "Wer wir sind"})
	ed.mustPatchIn("pages", page, "de", map[string]any{"slug": nil})
	ds = ed.draftsOfItem("pages", page)
	if ds["de"].ID != de.ID {
		t.Errorf("the German draft changed id: %s -> %s", de.ID, ds["de"].ID)
	}
	oc = changesOf(ds["de"])
	if len(oc) != 2 || oc["title@de"] == nil || oc["description@de"][1] != "Wer wir sind" {
		t.Errorf("German object-changes after merging and clearing the slug = %v", oc)
	}
	// GET /drafts/:id shows it alike.
	one := ed.do(http.MethodGet, "/drafts/"+de.ID, nil).resource(t)
	if one.Attributes["locale"] != "de" || changesOf(one)["description@de"] == nil {
		t.Errorf("GET /drafts/%s = %v", de.ID, one.Attributes)
	}
	// A German value that is 422 by the field's rules says so at the attribute.
	wantError(t, ed.patchIn("pages", page, "de", map[string]any{"slug": "Nicht Gültig"}), 422, "invalid_slug", "/data/attributes/slug")
	// null in the base locale keeps the field's rules.
	if d := ed.patchIn("pages", page, "en", map[string]any{"title": nil}); d.Status != 400 {
		t.Errorf("a null English title = %d %s, want 400", d.Status, d.Raw)
	}

	// Reverting the German draft reverts only it.
	if d := ed.do(http.MethodDelete, "/drafts/"+de.ID, nil); d.Status != http.StatusNoContent {
		t.Fatalf("DELETE /drafts/%s = %d %s", de.ID, d.Status, d.Raw)
	}
	ds = ed.draftsOfItem("pages", page)
	if _, ok := ds["de"]; ok || ds[""].ID != shared.ID {
		t.Errorf("after reverting the German draft: %v, want the shared draft only", ds)
	}

	// A never-published record: a write in German changes its row's
	// translations and its create draft; null removes a translation.
	child, childCreate := ed.page("Team", "team", page)
	ed.mustPatchIn("pages", child, "de", map[string]any{"title": "Mannschaft", "slug": "mannschaft"})
	if tr := s.translationsOf(t, "pages", child); tr["title@de"] != "Mannschaft" || tr["slug@de"] != "mannschaft" {
		t.Errorf("translations of a never-published page after a German write = %v", tr)
	}
	ds = ed.draftsOfItem("pages", child)
	if len(ds) != 1 || ds[""].ID != childCreate || ds[""].Attributes["event"] != "create" {
		t.Fatalf("drafts of a never-published page after a German write: %v", ds)
	}
	if oc := changesOf(ds[""]); oc["title@de"][1] != "Mannschaft" || oc["title"][1] != "Team" {
		t.Errorf("the create draft's object-changes = %v", oc)
	}
	if got := s.localePath(t, child, "de"); got != "/about-us/mannschaft" {
		t.Errorf("the never-published page's German path = %q, want /about-us/mannschaft", got)
	}
	ed.mustPatchIn("pages", child, "de", map[string]any{"slug": nil})
	if tr := s.translationsOf(t, "pages", child); tr["slug@de"] != nil || tr["title@de"] != "Mannschaft" {
		t.Errorf("translations after clearing slug@de = %v", tr)
	}
	if got := s.localePath(t, child, "de"); got != "/about-us/team" {
		t.Errorf("the German path after clearing slug@de = %q, want the fallback /about-us/team", got)
	}
	// A create in German: the German values are the row's translations,
	// the base slug is the German one, the base title stays null.
	d := ed.do(http.MethodPost, "/pages?locale-tag=de", map[string]any{"data": map[string]any{"type": "pages",
		"attributes": map[string]any{"title": "Kontakt", "slug": "kontakt"}}})
	if d.Status != http.StatusCreated {
		t.Fatalf("POST /pages?locale-tag=de = %d %s", d.Status, d.Raw)
	}
	created := d.resource(t)
	if tr := s.translationsOf(t, "pages", created.ID); tr["title@de"] != "Kontakt" || tr["slug@de"] != "kontakt" {
		t.Errorf("translations of a page created in German = %v", tr)
	}
	var baseTitle *string
	var baseSlug string
	if err := s.DB.NewRaw("SELECT title, slug FROM pages WHERE id = ?", created.ID).Scan(context.Background(), &baseTitle, &baseSlug); err != nil {
		t.Fatal(err)
	}
	if baseTitle != nil || baseSlug != "kontakt" {
		t.Errorf("base title %v, slug %q of a page created in German; want null and kontakt", baseTitle, baseSlug)
	}
	// A create in German without a title is 422 like one in the base.
	wantError(t, ed.do(http.MethodPost, "/pages?locale-tag=de", map[string]any{"data": map[string]any{"type": "pages",
		"attributes": map[string]any{"slug": "ohne"}}}), 422, "invalid_title", "/data/attributes/title")

	// A delete is shared: it deletes the record's locale drafts, and its
	// children's.
	ed.mustPatchIn("pages", page, "de", map[string]any{"title": "Über uns"})
	ed.mustPatchIn("pages", page, "fr-CA", map[string]any{"title": "À propos"})
	if ds = ed.draftsOfItem("pages", page); len(ds) != 3 {
		t.Fatalf("drafts before the delete: %v", ds)
	}
	if d := ed.do(http.MethodDelete, "/pages/"+page, nil); d.Status != http.StatusOK {
		t.Fatalf("DELETE /pages/%s = %d %s", page, d.Status, d.Raw)
	}
	ds = ed.draftsOfItem("pages", page)
	if len(ds) != 1 || ds[""].Attributes["event"] != "delete" {
		t.Errorf("drafts after the delete: %v, want the shared delete only", ds)
	}
}

// versionLocales are the locales of a record's versions, oldest first
// ("" for shared ones); versions.locale has no read of its own in this
// part (history per locale is part 4).
func (s *system) versionLocales(t *testing.T, id string) []string {
	t.Helper()
	var out []string
	if err := s.DB.NewRaw("SELECT locale FROM versions WHERE item_id = ? ORDER BY created_at, id", id).Scan(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLocaleDraftsPublishAlone: German drafts publish alone (issue 33):
// the German values go live, English values, versions and a pending
// English draft stay as they were, and so does a pending French one.
func TestLocaleDraftsPublishAlone(t *testing.T) {
	s := start(t)
	ed := s.editor(t, "editor@demo.test")
	ed.setLocales([]string{"en", "de", "fr-CA"}, map[string]string{"fr-CA": "fr", "fr": "en"})
	rcv := newReceiver(t, nil)
	hook, _ := ed.createWebhook(rcv.URL+"/hook", "revision.published")

	page, pageCreate := ed.page("About us", "about-us", "")
	content, contentCreate := ed.create("contents", map[string]any{"title": "Intro"}, map[string]any{"page": ref("pages", page)})
	block, blockCreate := ed.create("content-blocks", map[string]any{"var-name": "body", "body": "Hello"}, map[string]any{"content": ref("contents", content)})
	ed.mustPublish(pageCreate, contentCreate, blockCreate)

	// A pending English edit, then German and French ones.
	ed.mustPatchIn("pages", page, "en", map[string]any{"title": "About"})
	english := ed.draftsOfItem("pages", page)[""]
	ed.mustPatchIn("pages", page, "de", map[string]any{"title": "Über uns", "slug": "ueber-uns"})
	ed.mustPatchIn("contents", content, "de", map[string]any{"title": "Einleitung"})
	ed.mustPatchIn("content-blocks", block, "de", map[string]any{"body": "Hallo"})
	ed.mustPatchIn("pages", page, "fr-CA", map[string]any{"title": "À propos"})
	german := []string{ed.draftsOfItem("pages", page)["de"].ID, ed.draftsOfItem("contents", content)["de"].ID,
		ed.draftsOfItem("content-blocks", block)["de"].ID}

	// The plan of the German drafts pulls in nothing.
	if p := ed.plan("", german...); len(p.Data.Attributes.Steps) != 3 || len(p.Data.Attributes.Conflicts) != 0 {
		t.Errorf("plan of the German drafts: %d steps, conflicts %v; want 3 and none", len(p.Data.Attributes.Steps), p.Data.Attributes.Conflicts)
	}
	rev := ed.mustPublish(german...)
	if rev.Attributes["versions-count"] != float64(3) || fmt.Sprint(rev.Attributes["locales"]) != "[de]" {
		t.Errorf("versions-count = %v, locales %v; want 3 and [de]", rev.Attributes["versions-count"], rev.Attributes["locales"])
	}
	// revision.published says which locales the revision changed: the
	// create's shared versions count as the base locale.
	ed.awaitDeliveries(hook, 2, time.Minute)
	for i, want := range []string{`"locales":["en"]`, `"locales":["de"]`} {
		if body := string(rcv.requests()[i].Body); !strings.Contains(body, want) {
			t.Errorf("revision.published %d: %s, want %s", i+1, body, want)
		}
	}

	// German is live: in the rows' translations and the German path.
	if tr := s.translationsOf(t, "pages", page); tr["title@de"] != "Über uns" || tr["slug@de"] != "ueber-uns" || tr["title@fr-CA"] != nil {
		t.Errorf("the page's translations = %v", tr)
	}
	if tr := s.translationsOf(t, "contents", content); tr["title@de"] != "Einleitung" {
		t.Errorf("the content's translations = %v", tr)
	}
	if tr := s.translationsOf(t, "content_blocks", block); tr["body@de"] != "Hallo" {
		t.Errorf("the block's translations = %v", tr)
	}
	var dePath string
	if err := s.DB.NewRaw("SELECT path FROM page_locale_paths WHERE page_id = ? AND locale = 'de'", page).Scan(context.Background(), &dePath); err != nil || dePath != "/ueber-uns" {
		t.Errorf("the page's German path = %q (%v), want /ueber-uns", dePath, err)
	}
	// English is as it was: live values, versions, the pending draft.
	p := ed.do(http.MethodGet, "/pages/"+page, nil).resource(t)
	if p.Attributes["title"] != "About us" || p.Attributes["slug"] != "about-us" || p.Attributes["path"] != "/about-us" {
		t.Errorf("English after the German publish: %v", p.Attributes)
	}
	if c := ed.do(http.MethodGet, "/contents/"+content, nil).resource(t); c.Attributes["title"] != "Intro" {
		t.Errorf("the content's English title = %v", c.Attributes["title"])
	}
	if b := ed.do(http.MethodGet, "/content-blocks/"+block, nil).resource(t); b.Attributes["body"] != "Hello" {
		t.Errorf("the block's English body = %v", b.Attributes["body"])
	}
	for _, id := range []string{page, content, block} {
		if got := s.versionLocales(t, id); len(got) != 2 || got[0] != "" || got[1] != "de" {
			t.Errorf("versions of %s by locale = %v, want the shared create and one German", id, got)
		}
	}
	ds := ed.draftsOfItem("pages", page)
	if ds[""].ID != english.ID || ds[""].Attributes["updated-at"] != english.Attributes["updated-at"] || ds["fr-CA"].ID == "" || ds["de"].ID != "" {
		t.Errorf("drafts after the German publish: %v; want the English one as it was and the French one", ds)
	}
	if oc := changesOf(ds[""]); len(oc) != 1 || oc["title"][1] != "About" {
		t.Errorf("the English draft's changes = %v", oc)
	}

	// Clearing a German value and publishing it removes the translation.
	ed.mustPatchIn("pages", page, "de", map[string]any{"title": nil})
	ed.mustPublish(ed.draftsOfItem("pages", page)["de"].ID)
	if tr := s.translationsOf(t, "pages", page); tr["title@de"] != nil || tr["slug@de"] != "ueber-uns" {
		t.Errorf("translations after publishing a cleared German title = %v", tr)
	}
	// Publishing English now leaves German and French alone.
	ed.mustPublish(english.ID)
	if p := ed.do(http.MethodGet, "/pages/"+page, nil).resource(t); p.Attributes["title"] != "About" {
		t.Errorf("English title after its publish = %v", p.Attributes["title"])
	}
	if tr := s.translationsOf(t, "pages", page); tr["slug@de"] != "ueber-uns" {
		t.Errorf("translations after the English publish = %v", tr)
	}
	if ds := ed.draftsOfItem("pages", page); ds["fr-CA"].ID == "" || len(ds) != 1 {
		t.Errorf("drafts after the English publish: %v, want the French one", ds)
	}
}

// TestLocaleClosure: a German slug change pulls in nothing (not another
// locale's drafts, not the creates of its page's new content); a delete
// takes every locale's drafts of its children.
func TestLocaleClosure(t *testing.T) {
	s := start(t)
	ed := s.editor(t, "editor@demo.test")
	ed.setLocales([]string{"en", "de", "fr"}, nil)
	parent, parentCreate := ed.page("Products", "products", "")
	child, childCreate := ed.page("Shoes", "shoes", parent)
	ed.mustPublish(parentCreate, childCreate)
	_, newContent := ed.create("contents", map[string]any{"title": "New"}, map[string]any{"page": ref("pages", parent)})
	ed.mustPatchIn("pages", parent, "de", map[string]any{"slug": "produkte"})
	ed.mustPatchIn("pages", parent, "fr", map[string]any{"slug": "produits"})
	ed.mustPatchIn("pages", child, "de", map[string]any{"slug": "schuhe"})
	de := ed.draftsOfItem("pages", parent)["de"].ID
	if p := ed.plan("", de); len(p.Data.Attributes.Steps) != 1 || p.Data.Meta.PulledInCount != 0 {
		t.Errorf("plan of a German slug change: %d steps, %d pulled in; want 1 and 0", len(p.Data.Attributes.Steps), p.Data.Meta.PulledInCount)
	}
	ed.mustPublish(de)
	if ds := ed.draftsOfItem("pages", parent); ds["fr"].ID == "" {
		t.Errorf("the French draft went with the German publish: %v", ds)
	}
	if d := ed.do(http.MethodGet, "/drafts/"+newContent, nil); d.Status != http.StatusOK {
		t.Errorf("the new content's create went with the German publish: %d", d.Status)
	}
	var paths []string
	if err := s.DB.NewRaw("SELECT locale || ' ' || path FROM page_locale_paths WHERE page_id = ? ORDER BY locale", child).Scan(context.Background(), &paths); err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 || paths[0] != "de /produkte/shoes" || paths[1] != "fr /products/shoes" {
		t.Errorf("the child's paths per locale after its parent's German slug = %v", paths)
	}

	// A delete takes every locale's drafts of its children.
	if d := ed.do(http.MethodDelete, "/pages/"+parent, nil); d.Status != http.StatusOK {
		t.Fatalf("DELETE /pages/%s = %d %s", parent, d.Status, d.Raw)
	}
	for _, id := range []string{parent, child} {
		if ds := ed.draftsOfItem("pages", id); len(ds) != 1 || ds[""].Attributes["event"] != "delete" {
			t.Errorf("drafts of %s after the delete: %v, want its shared delete only", id, ds)
		}
	}
	del := ed.draftsOfItem("pages", parent)[""].ID
	// The delete reverted the new content's create (never published); the
	// plan deletes the two pages, children first.
	if d := ed.do(http.MethodGet, "/drafts/"+newContent, nil); d.Status != http.StatusNotFound {
		t.Errorf("the new content's create after its page's delete: %d, want 404", d.Status)
	}
	p := ed.plan("", del)
	if st := p.Data.Attributes.Steps; len(st) != 2 || st[0].Item.ID != child || st[1].Item.ID != parent || st[0].Event != "delete" {
		t.Errorf("plan of the delete: %+v, want the child's delete, then the parent's", st)
	}
	ed.mustPublish(del)
	if ed.status("/pages/"+child) != http.StatusNotFound || ed.status("/pages/"+parent) != http.StatusNotFound {
		t.Errorf("the pages are still live after their delete was published")
	}
	var left int
	if err := s.DB.NewRaw("SELECT count(*) FROM drafts WHERE item_id IN (?, ?)", parent, child).Scan(context.Background(), &left); err != nil || left != 0 {
		t.Errorf("drafts of the deleted pages left: %d (%v)", left, err)
	}
}

// TestLocaleRequireDefault: while the site requires its default locale
// (the default), a create without a title of its own in the default
// locale is 422 default_locale_required in a plan and a publish alike;
// allowed once the setting is false. The default need not be the base.
func TestLocaleRequireDefault(t *testing.T) {
	s := start(t)
	ed := s.editor(t, "editor@demo.test")
	ed.setLocales([]string{"en", "de"}, nil)
	d := ed.do(http.MethodPost, "/pages?locale-tag=de", map[string]any{"data": map[string]any{"type": "pages",
		"attributes": map[string]any{"title": "Kontakt", "slug": "kontakt"}}})
	if d.Status != http.StatusCreated {
		t.Fatalf("POST /pages?locale-tag=de = %d %s", d.Status, d.Raw)
	}
	german := draftOf(t, d.resource(t))
	if p := ed.plan("", german); len(p.Data.Attributes.Conflicts) != 1 || p.Data.Attributes.Conflicts[0].Code != "default_locale_required" {
		t.Errorf("plan of a German-only create: conflicts %v, want default_locale_required", p.Data.Attributes.Conflicts)
	}
	wantError(t, ed.publish(german), 422, "default_locale_required", "/data/relationships/drafts")
	// A content created in German on a live page: pulled in or listed, alike.
	page, pageCreate := ed.page("Home", "home", "")
	ed.mustPublish(pageCreate)
	cd := ed.do(http.MethodPost, "/contents?locale-tag=de", map[string]any{"data": map[string]any{"type": "contents",
		"attributes": map[string]any{"title": "Inhalt"}, "relationships": map[string]any{"page": ref("pages", page)}}})
	if cd.Status != http.StatusCreated {
		t.Fatalf("POST /contents?locale-tag=de = %d %s", cd.Status, cd.Raw)
	}
	wantError(t, ed.publish(draftOf(t, cd.resource(t))), 422, "default_locale_required", "/data/relationships/drafts")

	// With the English title written, it publishes.
	ed.mustPatchIn("pages", d.resource(t).ID, "en", map[string]any{"title": "Contact"})
	ed.mustPublish(german)

	// The default first, the base second: a request without locale-tag
	// writes German, the default; a create in the base (English) only is
	// refused.
	ed.setLocales([]string{"de", "en"}, nil)
	_, inDefault := ed.page("Impressum", "impressum", "")
	ed.mustPublish(inDefault)
	d = ed.do(http.MethodPost, "/pages?locale-tag=en", map[string]any{"data": map[string]any{"type": "pages",
		"attributes": map[string]any{"title": "Imprint", "slug": "imprint"}}})
	if d.Status != http.StatusCreated {
		t.Fatalf("POST /pages?locale-tag=en = %d %s", d.Status, d.Raw)
	}
	english := draftOf(t, d.resource(t))
	wantError(t, ed.publish(english), 422, "default_locale_required", "/data/relationships/drafts")
	if r := ed.patchSite(map[string]any{"require-default-locale": false}, nil); r.Status != http.StatusOK {
		t.Fatalf("require-default-locale false = %d %s", r.Status, r.Raw)
	}
	ed.mustPublish(english)
	ed.mustPublish(draftOf(t, cd.resource(t)))
}
