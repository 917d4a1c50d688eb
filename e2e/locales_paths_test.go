package e2e

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"testing"

	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
)

// Paths per locale (issue 33, docs/locales.md "Paths in a locale"): a page
// has a path in every locale of its site, made of its ancestors' slugs in
// that locale (their own, or their fallback's); one page per path and
// locale, on writes (409 path_taken with meta.locale), at publish and in
// the database; GET /pages?locale-tag=de&filter[path]=… finds a page by
// its German path; meta.alternates lists a page's path in every locale.

// translate gives page id the translations (JSON of flat keys, "slug@de")
// as its row and re-derives the site's paths, as a publish of German
// values does.
func (s *system) translate(t *testing.T, id, translations string) {
	t.Helper()
	ctx := context.Background()
	err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewRaw("UPDATE pages SET translations = ?::jsonb WHERE id = ?", translations, id).Exec(ctx); err != nil {
			return err
		}
		return drafts.RefreshSiteLocalePaths(ctx, tx, s.Site.ID)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// pathTakenIn fails t unless d is 409 path_taken naming page other, in
// locale (absent for the base locale).
func pathTakenIn(t *testing.T, d *doc, other, locale string) {
	t.Helper()
	var body struct {
		Errors []struct {
			Code string
			Meta map[string]any
		}
	}
	if d.Status != http.StatusConflict || json.Unmarshal(d.Raw, &body) != nil || len(body.Errors) == 0 {
		t.Fatalf("status %d %s, want 409 path_taken", d.Status, d.Raw)
	}
	e := body.Errors[0]
	page, _ := e.Meta["page"].(map[string]any)
	if e.Code != "path_taken" || page["id"] != other || (locale == "" && e.Meta["locale"] != nil) || (locale != "" && e.Meta["locale"] != locale) {
		t.Errorf("error %s meta %v, want path_taken page %s locale %q", e.Code, e.Meta, other, locale)
	}
}

// TestLocalePathsUniquePerLocale: the same German slug under one parent is
// 409, under another parent fine, and the same slug in German and French
// fine; a page without a German slug is at its English slug in German, so
// an English slug that is a sibling's German one is refused (plan §2.5);
// the database refuses a second live page at a German path from a raw
// statement.
func TestLocalePathsUniquePerLocale(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	e.setLocales([]string{"en", "de", "fr"}, nil)
	p1, p1d := e.page("One", "one", "")
	p2, p2d := e.page("Two", "two", "")
	about, aboutD := e.page("About", "about", p1)
	e.mustPublish(p1d, p2d, aboutD)
	s.translate(t, about, `{"slug@de": "ueber-uns", "title@de": "Über uns"}`)

	// English slug ueber-uns under One: no German slug of its own, so it
	// would be at /one/ueber-uns in German, About's German path.
	d := e.do(http.MethodPost, "/pages", map[string]any{"data": map[string]any{"type": "pages",
		"attributes":    map[string]any{"title": "Other", "slug": "ueber-uns"},
		"relationships": map[string]any{"parent": ref("pages", p1)}}})
	pathTakenIn(t, d, about, "de")
	// Under Two it is free in every locale.
	other, otherD := e.page("Other", "ueber-uns", p2)
	// The same slug in French as About's German one: free.
	s.translate(t, other, `{"slug@fr": "ueber-uns"}`)
	e.mustPublish(otherD)
	// ... and moving Other under One: its French slug is free there, its
	// German one (its English ueber-uns) is not.
	d = e.do(http.MethodPatch, "/pages/"+other, map[string]any{"data": map[string]any{"type": "pages", "id": other,
		"relationships": map[string]any{"parent": ref("pages", p1)}}})
	pathTakenIn(t, d, about, "de")
	// The base check is unchanged, and names no locale.
	d = e.do(http.MethodPost, "/pages", map[string]any{"data": map[string]any{"type": "pages",
		"attributes":    map[string]any{"title": "About again", "slug": "about"},
		"relationships": map[string]any{"parent": ref("pages", p1)}}})
	pathTakenIn(t, d, about, "")

	// The database: a second live page at /one/ueber-uns in German.
	ctx := context.Background()
	err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewRaw("UPDATE page_locale_paths SET path = '/one/ueber-uns' WHERE page_id = ? AND locale = 'de'", other).Exec(ctx)
		return err
	})
	if !models.IsExclusionViolation(err, "page_locale_paths_live_excl") {
		t.Errorf("a second live page at a German path from a raw statement: %v, want page_locale_paths_live_excl", err)
	}
}

// TestLocaleFindByPath: filter[path] (and its prefix operator) in a locale
// compares the pages' paths in that locale; a page's path attribute is
// its path in the request's locale and meta.alternates lists every
// locale's (live, and drafted with include=draft).
func TestLocaleFindByPath(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	e.setLocales([]string{"en", "de", "fr"}, nil)
	about, aboutD := e.page("About", "about", "")
	team, teamD := e.page("Team", "team", about)
	e.mustPublish(aboutD, teamD)
	s.translate(t, about, `{"slug@de": "ueber-uns"}`)

	for _, c := range []struct {
		query string
		want  []string
	}{
		{"locale-tag=de&filter[path]=/ueber-uns", []string{about}},
		{"locale-tag=de&filter[path]=/about", nil},
		{"locale-tag=de&filter[path][prefix]=/ueber-uns", []string{about, team}},
		{"locale-tag=de&filter[path][prefix]=/ueber-uns/", []string{team}},
		{"locale-tag=de&filter[path][in]=/ueber-uns/team,/about", []string{team}},
		{"locale-tag=fr&filter[path]=/about", []string{about}},
		{"filter[path]=/about", []string{about}},
		{"locale-tag=en&filter[path]=/ueber-uns", nil},
	} {
		got := e.list("/pages?" + c.query).ids
		slices.Sort(got)
		want := slices.Clone(c.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("GET /pages?%s = %v, want %v", c.query, got, want)
		}
	}

	alternates := map[string]any{"en": "/about/team", "de": "/ueber-uns/team", "fr": "/about/team"}
	for _, c := range []struct{ query, path string }{
		{"?locale-tag=de", "/ueber-uns/team"}, {"", "/about/team"}, {"?locale-tag=fr", "/about/team"},
		{"?locale-tag=de&include=draft", "/ueber-uns/team"},
	} {
		r := e.do(http.MethodGet, "/pages/"+team+c.query, nil).resource(t)
		if r.Attributes["path"] != c.path || !maps.Equal(asMap(r.Meta["alternates"]), alternates) {
			t.Errorf("GET /pages/team%s: path %v alternates %v, want %s %v", c.query, r.Attributes["path"], r.Meta["alternates"], c.path, alternates)
		}
	}
	// Drafted: Team moved to the root (not published) is at /team in
	// every locale with include=draft, and where it was on a live read.
	if d := e.do(http.MethodPatch, "/pages/"+team, map[string]any{"data": map[string]any{"type": "pages", "id": team,
		"relationships": map[string]any{"parent": ref("pages", "")}}}); d.Status != 200 {
		t.Fatalf("PATCH team's parent = %d %s", d.Status, d.Raw)
	}
	r := e.do(http.MethodGet, "/pages/"+team+"?locale-tag=de&include=draft", nil).resource(t)
	if want := map[string]any{"en": "/team", "de": "/team", "fr": "/team"}; r.Attributes["path"] != "/team" || !maps.Equal(asMap(r.Meta["alternates"]), want) {
		t.Errorf("drafted move: path %v alternates %v, want /team %v", r.Attributes["path"], r.Meta["alternates"], want)
	}
	r = e.do(http.MethodGet, "/pages/"+team+"?locale-tag=de", nil).resource(t)
	if r.Attributes["path"] != "/ueber-uns/team" {
		t.Errorf("live read of a drafted move: path %v, want /ueber-uns/team", r.Attributes["path"])
	}
	// A site with one locale has no alternates.
	if d := e.patchSite(map[string]any{"locales": []string{"en"}}, map[string]any{"force": true}); d.Status != 200 {
		t.Fatalf("PATCH /site locales [en] with force = %d %s", d.Status, d.Raw)
	}
	if r := e.do(http.MethodGet, "/pages/"+about, nil).resource(t); r.Meta["alternates"] != nil || r.Attributes["path"] != "/about" {
		t.Errorf("one locale: path %v alternates %v", r.Attributes["path"], r.Meta["alternates"])
	}
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
