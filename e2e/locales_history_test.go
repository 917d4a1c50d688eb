package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Part 4 of docs/plans/locales.md: rollback, history, preview and
// releases per locale (docs/locales.md "History, rollback and preview in
// a locale").

// publishLocaleDraft publishes the pending draft of locale tag of the
// record typ/id and returns the revision's id.
func (e *editor) publishLocaleDraft(typ, id, tag string) string {
	e.t.Helper()
	d, ok := e.draftsOfItem(typ, id)[tag]
	if !ok {
		e.t.Fatalf("%s %s has no draft in %q", typ, id, tag)
	}
	return e.mustPublish(d.ID).ID
}

// resources decodes a collection's data.
func (d *doc) resources(t *testing.T) []resource {
	t.Helper()
	if d.Status != http.StatusOK {
		t.Fatalf("status %d %s, want 200", d.Status, d.Raw)
	}
	var rs []resource
	if err := json.Unmarshal(d.Data, &rs); err != nil {
		t.Fatal(err)
	}
	return rs
}

// localizedReads tells whether reads in a locale render that locale's
// values (part 5 of the plan, merged separately): page must have a live
// German title, german.
func (e *editor) localizedReads(page, german string) bool {
	e.t.Helper()
	got := e.do(http.MethodGet, "/pages/"+page+"?locale-tag=de", nil).resource(e.t)
	return got.Attributes["title"] == german
}

// TestLocaleRollbackRestoresOnlyItsLocale: a rollback of a German
// revision restores German only, in a version of locale de; an English
// rollback leaves German alone; a pending draft blocks a rollback of its
// own locale only.
func TestLocaleRollbackRestoresOnlyItsLocale(t *testing.T) {
	s := start(t)
	ed := s.editor(t, "editor@demo.test")
	ed.setLocales([]string{"en", "de"}, nil)

	page, create := ed.page("About us", "about-us", "")
	ed.mustPublish(create)
	ed.mustPatchIn("pages", page, "de", map[string]any{"title": "Über uns", "slug": "ueber-uns"})
	german1 := ed.publishLocaleDraft("pages", page, "de")
	english := ed.mustPublish(ed.update("pages", page, map[string]any{"title": "About us, twice"}, nil)).ID
	ed.mustPatchIn("pages", page, "de", map[string]any{"title": "Über uns, zweimal"})
	german2 := ed.publishLocaleDraft("pages", page, "de")

	// The second German revision: German only goes back.
	rev := ed.revert(german2, false)
	tr := s.translationsOf(t, "pages", page)
	if tr["title@de"] != "Über uns" || tr["slug@de"] != "ueber-uns" {
		t.Errorf("German after the German rollback = %v, want title@de Über uns, slug@de ueber-uns", tr)
	}
	if got := ed.live("pages", page); got != "About us, twice /about-us" {
		t.Errorf("English after the German rollback = %q, want About us, twice /about-us", got)
	}
	vs := ed.do(http.MethodGet, "/revisions/"+rev.ID+"/versions", nil).resources(t)
	if len(vs) != 1 || vs[0].Attributes["locale"] != "de" {
		t.Fatalf("the German rollback's versions = %v, want one of locale de", vs)
	}
	if oc := changesOf(vs[0]); len(oc) != 1 || oc["title@de"][0] != "Über uns, zweimal" || oc["title@de"][1] != "Über uns" {
		t.Errorf("the German rollback's object-changes = %v, want title@de only", oc)
	}

	// A pending German draft: the English rollback goes ahead (German
	// stays as it is), a German one is refused even with force.
	ed.mustPatchIn("pages", page, "de", map[string]any{"title": "Entwurf"})
	rev = ed.revert(english, true)
	if got := ed.live("pages", page); got != "About us /about-us" {
		t.Errorf("English after the English rollback = %q, want About us /about-us", got)
	}
	if tr := s.translationsOf(t, "pages", page); tr["title@de"] != "Über uns" {
		t.Errorf("German after the English rollback = %v, want title@de Über uns", tr)
	}
	vs = ed.do(http.MethodGet, "/revisions/"+rev.ID+"/versions", nil).resources(t)
	if len(vs) != 1 || vs[0].Attributes["locale"] != nil {
		t.Errorf("the English rollback's versions = %v, want one shared (locale null)", vs)
	}
	if _, ok := ed.draftsOfItem("pages", page)["de"]; !ok {
		t.Errorf("the pending German draft is gone after the English rollback")
	}
	d := ed.do(http.MethodPost, "/revisions", revertBody(german1, true))
	wantError(t, d, http.StatusConflict, "revert_conflict", "/data/relationships/reverts")
}

// TestLocalePreviewRelease: a release of German drafts, previewed in
// German, shows them; an English read under the same preview shows none
// of them (nor an English draft outside the release). The release's
// drafts, GET /drafts and the release's publish plan name the locale.
func TestLocalePreviewRelease(t *testing.T) {
	s := start(t)
	ed := s.editor(t, "editor@demo.test")
	ed.setLocales([]string{"en", "de"}, nil)

	a, createA := ed.page("Alpha", "alpha", "")
	b, createB := ed.page("Beta", "beta", "")
	ed.mustPublish(createA, createB)
	ed.mustPatchIn("pages", b, "de", map[string]any{"title": "Beta auf Deutsch"})
	ed.publishLocaleDraft("pages", b, "de")

	ed.mustPatchIn("pages", a, "de", map[string]any{"title": "Alpha auf Deutsch"})
	ed.mustPatchIn("pages", b, "de", map[string]any{"title": "Beta, neu"})
	ed.update("pages", a, map[string]any{"title": "Alpha, drafted in English"}, nil)
	rel := ed.createRelease("German")
	ed.mustStage(rel, ed.draftsOfItem("pages", a)["de"].ID, ed.draftsOfItem("pages", b)["de"].ID)

	// The release's drafts and GET /drafts by locale; the base locale's
	// are the shared drafts.
	if n := len(ed.do(http.MethodGet, "/releases/"+rel+"/drafts?filter[locale]=de", nil).resources(t)); n != 2 {
		t.Errorf("the release's German drafts = %d, want 2", n)
	}
	if n := len(ed.do(http.MethodGet, "/releases/"+rel+"/drafts?filter[locale]=en", nil).resources(t)); n != 0 {
		t.Errorf("the release's English drafts = %d, want 0", n)
	}
	if n := len(ed.do(http.MethodGet, "/drafts?filter[locale]=de", nil).resources(t)); n != 2 {
		t.Errorf("GET /drafts?filter[locale]=de = %d drafts, want 2", n)
	}
	shared := ed.do(http.MethodGet, "/drafts?filter[locale]=EN", nil).resources(t)
	if len(shared) != 1 || shared[0].Attributes["locale"] != nil {
		t.Errorf("GET /drafts?filter[locale]=EN = %v, want the one shared draft", shared)
	}
	wantError(t, ed.do(http.MethodGet, "/drafts?filter[locale]=fr", nil), http.StatusBadRequest, "unknown_locale", "filter[locale]")

	// English under the preview: the live English, none of the German
	// drafts, not the English draft outside the release.
	for _, q := range []string{"", "&locale-tag=en"} {
		if got := ed.do(http.MethodGet, "/pages/"+a+"?preview-release="+rel+q, nil).resource(t).Attributes["title"]; got != "Alpha" {
			t.Errorf("English read%s of A under the German preview: title %v, want the live Alpha", q, got)
		}
		if got := ed.do(http.MethodGet, "/pages/"+b+"?preview-release="+rel+q, nil).resource(t).Attributes["title"]; got != "Beta" {
			t.Errorf("English read%s of B under the German preview: title %v, want the live Beta", q, got)
		}
	}
	if ed.localizedReads(b, "Beta auf Deutsch") {
		for id, want := range map[string]string{a: "Alpha auf Deutsch", b: "Beta, neu"} {
			if got := ed.do(http.MethodGet, "/pages/"+id+"?preview-release="+rel+"&locale-tag=de", nil).resource(t).Attributes["title"]; got != want {
				t.Errorf("German read of %s under the German preview: title %v, want %s", id, got, want)
			}
		}
	} else {
		t.Log("reads in a locale (part 5) are not here: the German reads under the preview are not checked")
	}

	// A preview link in German: reads through it without locale-tag are
	// German reads; a tag the site lacks is refused.
	d := ed.pvLink(rel, map[string]any{"locale": "DE"})
	if d.Status != http.StatusCreated || d.resource(t).Attributes["locale"] != "de" {
		t.Fatalf("POST /preview-links locale DE = %d %s, want 201 with locale de", d.Status, d.Raw)
	}
	url, _ := d.resource(t).Attributes["url"].(string)
	wantError(t, ed.pvLink(rel, map[string]any{"locale": "fr"}), http.StatusUnprocessableEntity, "unknown_locale", "/data/attributes/locale")
	st, h, body := s.pvGet(t, http.MethodGet, url+"/pages", "application/vnd.api+json")
	if st != http.StatusOK || h.Get("Content-Language") != "de" {
		t.Errorf("GET {German link}/pages = %d, Content-Language %q; want 200, de", st, h.Get("Content-Language"))
	}
	if st, h, _ := s.pvGet(t, http.MethodGet, url+"/pages?locale-tag=en", "application/vnd.api+json"); st != http.StatusOK || h.Get("Content-Language") != "en" {
		t.Errorf("GET {German link}/pages?locale-tag=en = %d, Content-Language %q; want 200, en", st, h.Get("Content-Language"))
	}
	if ed.localizedReads(b, "Beta auf Deutsch") && !strings.Contains(body, "Alpha auf Deutsch") {
		t.Errorf("GET {German link}/pages shows no German title of A: %s", body)
	}

	// The publish plan's steps are German, and publishing the release
	// leaves English as it was.
	d = ed.do(http.MethodPost, "/publish-plans", map[string]any{"data": map[string]any{"type": "publish-plans",
		"relationships": map[string]any{"release": ref("releases", rel)}}})
	var plan struct {
		Data struct {
			Attributes struct {
				Steps []struct{ Locale *string }
			}
		}
	}
	if err := json.Unmarshal(d.Raw, &plan); err != nil || d.Status != http.StatusOK {
		t.Fatalf("plan of the release = %d %s", d.Status, d.Raw)
	}
	if steps := plan.Data.Attributes.Steps; len(steps) != 2 || steps[0].Locale == nil || *steps[0].Locale != "de" || steps[1].Locale == nil || *steps[1].Locale != "de" {
		t.Errorf("the release's plan = %s, want two steps in de", d.Raw)
	}
	if p := ed.publishRelease(rel); p.Status != http.StatusCreated {
		t.Fatalf("publish the release = %d %s", p.Status, p.Raw)
	}
	if tr := s.translationsOf(t, "pages", a); tr["title@de"] != "Alpha auf Deutsch" {
		t.Errorf("A's German after the release = %v", tr)
	}
	if got := ed.live("pages", a); got != "Alpha /alpha" {
		t.Errorf("A's English after the German release = %q, want Alpha /alpha", got)
	}
}

// TestLocaleHistory: a record's versions filtered by locale, a version's
// state and an as-of read in a locale, a comparison in a locale, and a
// restore in a locale, which drafts that locale's values only.
func TestLocaleHistory(t *testing.T) {
	s := start(t)
	ed := s.editor(t, "editor@demo.test")
	ed.setLocales([]string{"en", "de"}, nil)

	page, create := ed.page("Team", "team", "")
	ed.mustPublish(create)
	ed.mustPatchIn("pages", page, "de", map[string]any{"title": "Mannschaft"})
	ed.publishLocaleDraft("pages", page, "de")
	ed.mustPublish(ed.update("pages", page, map[string]any{"title": "Our team"}, nil))
	ed.mustPatchIn("pages", page, "de", map[string]any{"title": "Unser Team"})
	ed.publishLocaleDraft("pages", page, "de")

	all := ed.do(http.MethodGet, "/pages/"+page+"/versions", nil).resources(t)
	german := ed.do(http.MethodGet, "/pages/"+page+"/versions?filter[locale]=de", nil).resources(t)
	english := ed.do(http.MethodGet, "/pages/"+page+"/versions?filter[locale]=en", nil).resources(t)
	if len(all) != 4 || len(german) != 2 || len(english) != 2 {
		t.Fatalf("versions: %d in all, %d German, %d English; want 4, 2, 2", len(all), len(german), len(english))
	}
	for _, v := range german {
		if v.Attributes["locale"] != "de" {
			t.Errorf("a version of filter[locale]=de has locale %v", v.Attributes["locale"])
		}
	}
	wantError(t, ed.do(http.MethodGet, "/pages/"+page+"/versions?filter[locale]=fr", nil), http.StatusBadRequest, "unknown_locale", "filter[locale]")
	newest, first := german[0].ID, german[1].ID // newest first

	// The first German version's state, in German and in English.
	state := func(id, q string) any {
		v := ed.do(http.MethodGet, "/versions/"+id+q, nil).resource(t)
		st, _ := v.Attributes["state"].(map[string]any)
		attrs, _ := st["attributes"].(map[string]any)
		return attrs["title"]
	}
	if got := state(first, "?locale-tag=de"); got != "Mannschaft" {
		t.Errorf("the first German version's state in German: title %v, want Mannschaft", got)
	}
	if got := state(first, ""); got != "Team" {
		t.Errorf("the first German version's state in English: title %v, want Team", got)
	}
	if ed.localizedReads(page, "Unser Team") {
		if got := ed.do(http.MethodGet, "/pages/"+page+"?locale-tag=de&as-of="+first, nil).resource(t).Attributes["title"]; got != "Mannschaft" {
			t.Errorf("as-of the first German version in German: title %v, want Mannschaft", got)
		}
	} else {
		t.Log("reads in a locale (part 5) are not here: the as-of read in German is not checked")
	}

	// Compare the two German versions: the English change between them
	// shows without a locale, not in German.
	changes := func(q string) map[string]any {
		d := ed.do(http.MethodGet, "/versions/"+first+"/compare/"+newest+q, nil).resource(t)
		c, _ := d.Attributes["changes"].(map[string]any)
		return c
	}
	if c := changes(""); len(c) != 2 || c["title"] == nil || c["title@de"] == nil {
		t.Errorf("compare without a locale = %v, want title and title@de", c)
	}
	if c := changes("?locale-tag=de"); len(c) != 1 || c["title@de"] == nil {
		t.Errorf("compare in German = %v, want title@de only", c)
	}
	if c := changes("?locale-tag=en"); len(c) != 1 || c["title"] == nil {
		t.Errorf("compare in English = %v, want title only", c)
	}

	// Restore the first German version in German: a German draft of the
	// German title only; English keeps no draft.
	d := ed.do(http.MethodPost, "/versions/"+first+"/restore?locale-tag=de", nil)
	if d.Status != http.StatusCreated {
		t.Fatalf("restore in German = %d %s", d.Status, d.Raw)
	}
	dr := d.resource(t)
	if oc := changesOf(dr); dr.Attributes["locale"] != "de" || len(oc) != 1 || oc["title@de"][1] != "Mannschaft" {
		t.Errorf("the German restore's draft = locale %v, changes %v; want de, title@de to Mannschaft", dr.Attributes["locale"], oc)
	}
	if ds := ed.draftsOfItem("pages", page); len(ds) != 1 {
		t.Errorf("drafts after the German restore = %v, want the German one only", ds)
	}
	// Again: the German draft is pending (409), replaced on request.
	wantError(t, ed.do(http.MethodPost, "/versions/"+first+"/restore?locale-tag=de", nil), http.StatusConflict, "draft_pending", "")
	// The same version restored without a locale: the shared attributes
	// and English, as before locales (its English title was Team).
	d = ed.do(http.MethodPost, "/versions/"+first+"/restore", nil)
	if d.Status != http.StatusCreated {
		t.Fatalf("restore without a locale = %d %s", d.Status, d.Raw)
	}
	if dr := d.resource(t); dr.Attributes["locale"] != nil || changesOf(dr)["title"] == nil {
		t.Errorf("the restore without a locale = %v, want a shared draft of title", dr.Attributes)
	}
}
