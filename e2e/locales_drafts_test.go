package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
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
	ed.mustPatchIn("pages", child, "de", map[string]any{"slug": nil})
	if tr := s.translationsOf(t, "pages", child); tr["slug@de"] != nil || tr["title@de"] != "Mannschaft" {
		t.Errorf("translations after clearing slug@de = %v", tr)
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
