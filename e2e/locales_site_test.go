package e2e

import (
	"context"
	"net/http"
	"slices"
	"testing"
)

// TestLocaleSiteSetup: a site with en, de, fr and fr-CA → fr → en (issue
// 33); GET /site shows the settings; a single locale renamed relabels the
// base; a chain may pass through a tag the site does not list.
func TestLocaleSiteSetup(t *testing.T) {
	s := start(t)
	admin := s.editor(t, "editor@demo.test")
	site := admin.do(http.MethodGet, "/site", nil).resource(t)
	if !slices.Equal(strs(site.Attributes["locales"]), []string{"en"}) || site.Attributes["base-locale"] != "en" ||
		site.Attributes["require-default-locale"] != true {
		t.Fatalf("a new site's locales: %v", site.Attributes)
	}
	// One locale renamed: the base follows (nothing moves).
	site = admin.setLocales([]string{"de"}, nil)
	if site.Attributes["base-locale"] != "de" {
		t.Errorf("relabelled base-locale = %v, want de", site.Attributes["base-locale"])
	}
	admin.setLocales([]string{"en"}, nil)
	site = admin.setLocales([]string{"en", "de", "fr", "fr-CA"}, map[string]string{"fr-CA": "fr", "fr": "en"})
	if !slices.Equal(strs(site.Attributes["locales"]), []string{"en", "de", "fr", "fr-CA"}) || site.Attributes["base-locale"] != "en" {
		t.Errorf("locales after PATCH: %v", site.Attributes)
	}
	if fb, _ := site.Attributes["locale-fallbacks"].(map[string]any); fb["fr-CA"] != "fr" || fb["fr"] != "en" {
		t.Errorf("locale-fallbacks = %v", site.Attributes["locale-fallbacks"])
	}
	var chains string
	if err := s.DB.NewRaw("SELECT locale_chains::text FROM sites WHERE id = ?", s.Site.ID).Scan(context.Background(), &chains); err != nil {
		t.Fatal(err)
	}
	if want := `{"de": ["de", "en"], "en": ["en"], "fr": ["fr", "en"], "fr-CA": ["fr-CA", "fr", "en"]}`; chains != want {
		t.Errorf("locale_chains = %s, want %s", chains, want)
	}
	if d := admin.do(http.MethodGet, "/pages?locale-tag=fr-ca", nil); d.Status != 200 || d.Header.Get("Content-Language") != "fr-CA" {
		t.Errorf("GET /pages?locale-tag=fr-ca = %d, Content-Language %q", d.Status, d.Header.Get("Content-Language"))
	}
	// The issue's own example: fr is no site locale; the chain passes through it.
	admin.setLocales([]string{"en", "de", "fr-CA"}, map[string]string{"fr-CA": "fr", "fr": "en"})
	if d := admin.patchSite(map[string]any{"require-default-locale": false}, nil); d.Status != 200 || d.resource(t).Attributes["require-default-locale"] != false {
		t.Errorf("require-default-locale false = %d %s", d.Status, d.Raw)
	}
	// Pages get a path per non-base locale.
	admin.page("About", "about", "")
	admin.setLocales([]string{"en", "de", "fr-CA"}, map[string]string{})
	var paths []string
	if err := s.DB.NewRaw("SELECT locale || ' ' || path FROM page_locale_paths WHERE site_id = ? ORDER BY locale", s.Site.ID).Scan(context.Background(), &paths); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(paths, []string{"de /about", "fr-CA /about"}) {
		t.Errorf("page_locale_paths after a PATCH = %v, want de and fr-CA at /about", paths)
	}
	// Malformed and duplicate locales: 422 each at its tag, all at once.
	d := admin.patchSite(map[string]any{"locales": []string{"en", "de-de", "EN", "no tag"}}, nil)
	wantError(t, d, 422, "invalid_locale", "/data/attributes/locales/1")
	wantError(t, d, 422, "invalid_locale", "/data/attributes/locales/2")
	wantError(t, d, 422, "invalid_locale", "/data/attributes/locales/3")
	wantError(t, admin.patchSite(map[string]any{"locales": []string{"en", "de", "de"}}, nil), 422, "duplicate_locale", "/data/attributes/locales/2")
	wantError(t, admin.patchSite(map[string]any{"locales": []string{}}, nil), 422, "invalid_locales", "/data/attributes/locales")
	wantError(t, admin.patchSite(map[string]any{"base-locale": "de"}, nil), 422, "read_only", "/data/attributes/base-locale")
	wantError(t, admin.patchSite(map[string]any{"locale-fallbacks": map[string]string{"de": "not a tag"}}, nil), 422, "invalid_locale", "/data/attributes/locale-fallbacks/de")
}

// TestLocaleFallbackCycle: a cycle in locale-fallbacks is 422 at its
// first tag in site order, and changes nothing.
func TestLocaleFallbackCycle(t *testing.T) {
	s := start(t)
	admin := s.editor(t, "editor@demo.test")
	admin.setLocales([]string{"en", "de", "fr", "fr-CA"}, map[string]string{"fr-CA": "fr"})
	for _, c := range []struct {
		fallbacks map[string]string
		at        string
	}{
		{map[string]string{"de": "de"}, "/data/attributes/locale-fallbacks/de"},
		{map[string]string{"fr-CA": "fr", "fr": "fr-CA"}, "/data/attributes/locale-fallbacks/fr"},
		{map[string]string{"fr-CA": "fr", "fr": "de", "de": "fr-CA"}, "/data/attributes/locale-fallbacks/de"},
	} {
		d := admin.patchSite(map[string]any{"locale-fallbacks": c.fallbacks}, nil)
		wantError(t, d, 422, "locale_fallback_cycle", c.at)
	}
	site := admin.do(http.MethodGet, "/site", nil).resource(t)
	if fb, _ := site.Attributes["locale-fallbacks"].(map[string]any); len(fb) != 1 || fb["fr-CA"] != "fr" {
		t.Errorf("a refused PATCH changed locale-fallbacks: %v", site.Attributes["locale-fallbacks"])
	}
}

// TestLocaleTagParameter: locale-tag on every route; 400 at
// source.parameter for a malformed tag and for one the site lacks (or
// another site has); Content-Language names the locale served.
func TestLocaleTagParameter(t *testing.T) {
	s := start(t)
	admin := s.editor(t, "editor@demo.test")
	other := s.editor(t, "editor@other.test")
	if d := admin.do(http.MethodGet, "/pages", nil); d.Status != 200 || d.Header.Get("Content-Language") != "en" {
		t.Errorf("GET /pages: %d, Content-Language %q, want en", d.Status, d.Header.Get("Content-Language"))
	}
	admin.setLocales([]string{"en", "de"}, nil)
	other.setLocales([]string{"en", "ja"}, nil)
	for path, lang := range map[string]string{"/pages?locale-tag=de": "de", "/pages?locale-tag=DE": "de", "/pages": "en", "/site?locale-tag=de": "de"} {
		if d := admin.do(http.MethodGet, path, nil); d.Status != 200 || d.Header.Get("Content-Language") != lang {
			t.Errorf("GET %s: %d, Content-Language %q, want %s", path, d.Status, d.Header.Get("Content-Language"), lang)
		}
	}
	wantError(t, admin.do(http.MethodGet, "/pages?locale-tag=not_a_tag", nil), 400, "invalid_locale", "locale-tag")
	wantError(t, admin.do(http.MethodGet, "/pages?locale-tag=x-pig", nil), 400, "invalid_locale", "locale-tag")
	wantError(t, admin.do(http.MethodGet, "/pages?locale-tag=fr", nil), 400, "unknown_locale", "locale-tag")
	// Tenancy: another site's locale does not validate here, nor ours there.
	wantError(t, admin.do(http.MethodGet, "/pages?locale-tag=ja", nil), 400, "unknown_locale", "locale-tag")
	wantError(t, other.do(http.MethodGet, "/pages?locale-tag=de", nil), 400, "unknown_locale", "locale-tag")
	if d := other.do(http.MethodGet, "/pages?locale-tag=ja", nil); d.Status != 200 || d.Header.Get("Content-Language") != "ja" {
		t.Errorf("the other site in ja: %d %q", d.Status, d.Header.Get("Content-Language"))
	}
	wantError(t, admin.do(http.MethodGet, "/pages?locale-tag=de&locale-tag=en", nil), 400, "repeated_parameter", "locale-tag")
	// Writes take it too.
	d := admin.do(http.MethodPost, "/pages?locale-tag=de", map[string]any{"data": map[string]any{"type": "pages",
		"attributes": map[string]any{"title": "Home", "slug": "", "page-type": "home"}}})
	if d.Status != 201 || d.Header.Get("Content-Language") != "de" {
		t.Errorf("POST /pages?locale-tag=de = %d %q %s", d.Status, d.Header.Get("Content-Language"), d.Raw)
	}
	wantError(t, admin.do(http.MethodPost, "/pages?locale-tag=xx-YY-zz-1", map[string]any{"data": map[string]any{"type": "pages",
		"attributes": map[string]any{"title": "Home"}}}), 400, "invalid_locale", "locale-tag")
}

// TestLocaleRemoval: removing a locale with content is 409 locale_in_use
// until meta.force; the base locale cannot be removed.
func TestLocaleRemoval(t *testing.T) {
	s := start(t)
	ctx := context.Background()
	admin := s.editor(t, "editor@demo.test")
	admin.setLocales([]string{"en", "de", "fr"}, nil)
	page, draft := admin.page("About", "about", "")
	if d := admin.publish(draft); d.Status >= 300 {
		t.Fatalf("publish: %d %s", d.Status, d.Raw)
	}
	// Part 1 has no API that writes a translation yet: the value is put
	// in place as the drafting of part 2 will store it.
	if _, err := s.DB.NewRaw(`UPDATE pages SET translations = '{"title@de": "Über uns", "slug@de": "ueber-uns"}' WHERE id = ?`, page).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	wantError(t, admin.patchSite(map[string]any{"locales": []string{"en", "fr"}}, nil), 409, "locale_in_use", "/data/attributes/locales")
	wantError(t, admin.patchSite(map[string]any{"locales": []string{"de", "fr"}}, nil), 409, "base_locale", "/data/attributes/locales")
	wantError(t, admin.patchSite(map[string]any{"locales": []string{"en"}}, map[string]any{"force": "yes"}), 422, "invalid_force", "/meta/force")
	// fr has no content: removed without force.
	admin.setLocales([]string{"en", "de"}, nil)
	if d := admin.patchSite(map[string]any{"locales": []string{"en"}}, map[string]any{"force": true}); d.Status != 200 {
		t.Fatalf("removal with meta.force = %d %s", d.Status, d.Raw)
	}
	var tr string
	if err := s.DB.NewRaw("SELECT translations::text FROM pages WHERE id = ?", page).Scan(ctx, &tr); err != nil || tr != "{}" {
		t.Errorf("after a forced removal the page's translations are %s (%v), want {}", tr, err)
	}
	var n int
	if err := s.DB.NewRaw("SELECT count(*) FROM page_locale_paths WHERE site_id = ?", s.Site.ID).Scan(ctx, &n); err != nil || n != 0 {
		t.Errorf("page_locale_paths left: %d (%v)", n, err)
	}
	if d := admin.do(http.MethodGet, "/pages/"+page, nil); d.Status != 200 || d.resource(t).Attributes["title"] != "About" {
		t.Errorf("the base value after the removal: %d %s", d.Status, d.Raw)
	}
}

func strs(v any) []string {
	list, _ := v.([]any)
	out := make([]string, len(list))
	for i, x := range list {
		out[i], _ = x.(string)
	}
	return out
}
