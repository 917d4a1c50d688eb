package models_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/testsupport"
)

// TestSearchConfigOfAgreesWithSQL: Go's table of configurations
// (models.SearchConfigOf, which names them in SQL) and the migration's
// pressroom_locale_config (which indexes the documents) answer the same
// for every language of the table, their regions, and languages without
// a stemmer; and every name Go may answer exists.
func TestSearchConfigOfAgreesWithSQL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testsupport.NewDatabase(t)
	tags := []string{"ja", "zh-Hant", "ko", "pl", "uk", "x", "DE", "de-AT", "fr-CA", "pt-BR", "sr-Latn", "nb", "in", "mo", "ji"}
	for _, primary := range []string{"ar", "hy", "eu", "ca", "da", "nl", "en", "fi", "fr", "de", "el", "hi", "hu", "id", "ga",
		"it", "lt", "ne", "no", "nn", "pt", "ro", "ru", "sr", "es", "sv", "ta", "tr", "yi"} {
		tags = append(tags, primary, primary+"-XY")
	}
	for _, tag := range tags {
		var got string
		if err := db.NewRaw("SELECT pressroom_locale_config(?)::text", tag).Scan(ctx, &got); err != nil {
			t.Fatal(err)
		}
		if want := models.SearchConfigOf(tag); got != want {
			t.Errorf("%s: SQL %s, Go %s", tag, got, want)
		}
	}
	var have []string
	if err := db.NewRaw("SELECT cfgname::text FROM pg_ts_config WHERE cfgname LIKE 'pressroom\\_%' ORDER BY 1").Scan(ctx, &have); err != nil {
		t.Fatal(err)
	}
	for _, c := range models.SearchConfigs() {
		if !slices.Contains(have, c) {
			t.Errorf("configuration %s does not exist (have %v)", c, have)
		}
	}
	var german string
	if err := db.NewRaw("SELECT to_tsvector('pressroom_german', 'Häuser und Gärten')::text").Scan(ctx, &german); err != nil {
		t.Fatal(err)
	}
	if german != "'gart':3 'haus':1" {
		t.Errorf("pressroom_german stems 'Häuser und Gärten' to %s", german)
	}
}

// TestSearchInLocaleSQL: documents per locale, written by the triggers from
// translations and locale drafts seeded by SQL (the engine's writes in a
// locale are another part's), and searched as a reader in de (chain de,
// en) or en sees the records.
func TestSearchInLocaleSQL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testsupport.NewDatabase(t)
	site, err := models.CreateSite(ctx, db, "Locales", "search-locales")
	if err != nil {
		t.Fatal(err)
	}
	other, err := models.CreateSite(ctx, db, "Other", "search-locales-other")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []uuid.UUID{site.ID, other.ID} {
		if _, err := db.NewRaw(`UPDATE sites SET locales = '{en,de}', locale_chains = '{"en": ["en"], "de": ["de", "en"]}' WHERE id = ?`, s).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	houses, cars, bikes, theirs := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	page := func(id, siteID uuid.UUID, slug, title, translations string) {
		t.Helper()
		if _, err := db.NewRaw(`INSERT INTO pages (id, site_id, page_type, slug, path, title, translations, published_at)
  VALUES (?, ?, 'page', ?, '/' || ?, ?, ?::jsonb, now())`, id, siteID, slug, slug, title, translations).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	page(houses, site.ID, "houses", "Houses and gardens", `{"title@de": "Häuser und Gärten", "slug@de": "haeuser"}`)
	page(cars, site.ID, "cars", "Houses of cars", `{}`)
	page(bikes, site.ID, "bikes", "Bicycles", `{}`)
	page(theirs, other.ID, "theirs", "Their houses", `{"title@de": "Ihre Häuser"}`)
	// A German draft of the bicycles page: drafted values only.
	if _, err := db.NewRaw(`INSERT INTO drafts (id, site_id, item_type, item_id, event, drafted, object_changes, locale)
  VALUES (?, ?, 'pages', ?, 'update', '{"title@de": "Fahrräder"}', '{"title@de": [null, "Fahrräder"]}', 'de')`, uuid.New(), site.ID, bikes).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	de := models.Search{SiteID: site.ID, Type: "pages", Chain: []string{"de", "en"}, Base: "en"}
	en := models.Search{SiteID: site.ID, Type: "pages"}
	search := func(s models.Search, words string, drafted bool) []uuid.UUID {
		t.Helper()
		var ok bool
		if s.Terms, ok = models.SearchTerms(words); !ok {
			t.Fatalf("terms %q", words)
		}
		s.Drafted = drafted
		s.Type = ""
		hits, total, err := models.SearchAll(ctx, db, s, 20, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if int(total) != len(hits) {
			t.Errorf("total %d, %d hits", total, len(hits))
		}
		ids := make([]uuid.UUID, len(hits))
		for i, h := range hits {
			ids[i] = h.ID
		}
		slices.SortFunc(ids, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
		return ids
	}
	sorted := func(ids ...uuid.UUID) []uuid.UUID {
		slices.SortFunc(ids, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
		return ids
	}
	for _, c := range []struct {
		name    string
		s       models.Search
		words   string
		drafted bool
		want    []uuid.UUID
	}{
		{"German stemming: haus finds Häuser", de, "haus", false, sorted(houses)},
		{"the German slug", de, "haeuser", false, sorted(houses)},
		{"shadowed: English words of a German page", de, "gardens", false, nil},
		{"an English-only page falls back", de, "cars", false, sorted(cars)},
		{"English", en, "houses", false, sorted(houses, cars)},
		{"English does not read German", en, "häuser", false, nil},
		{"a German draft only with include=draft", de, "fahrrad", false, nil},
		{"a German draft with include=draft", de, "fahrrad", true, sorted(bikes)},
		{"a German draft shadows the English values in the drafted view", de, "bicycles", true, nil},
		{"but not the live view", de, "bicycles", false, sorted(bikes)},
		{"nor English", en, "bicycles", true, sorted(bikes)},
	} {
		if got := search(c.s, c.words, c.drafted); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q found %v, want %v", c.name, c.words, got, c.want)
		}
	}
	// Lists (filter[q] on GET /pages) and the highlight, from the German values.
	s := de
	s.Terms, _ = models.SearchTerms("haus")
	hl, err := models.Highlights(ctx, db, s, []uuid.UUID{houses, cars, theirs})
	if err != nil {
		t.Fatal(err)
	}
	if len(hl) != 1 || hl[houses].Locale != "de" || !strings.Contains(hl[houses].Highlight, "<mark>Häuser</mark>") {
		t.Errorf("highlights in de: %+v", hl)
	}
	s = de
	s.Terms, _ = models.SearchTerms("fahrrad")
	s.Drafted = true
	hl, err = models.Highlights(ctx, db, s, []uuid.UUID{bikes})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(hl[bikes].Highlight, "<mark>Fahrräder</mark>") {
		t.Errorf("drafted highlight in de: %+v", hl)
	}
	// Clearing the German values drops the German document and uncovers
	// the English one.
	if _, err := db.NewRaw(`UPDATE pages SET translations = '{}' WHERE id = ?`, houses).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if got := search(de, "gardens", false); !slices.Equal(got, sorted(houses)) {
		t.Errorf("after clearing German: gardens found %v", got)
	}
	if got := search(de, "haus", false); len(got) != 0 {
		t.Errorf("after clearing German: haus found %v", got)
	}
}

// TestSearchBaseOnlyHighlights: a search without a locale (every site
// with one locale) ranks and highlights from the base documents.
func TestSearchBaseOnlyHighlights(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testsupport.NewDatabase(t)
	site, err := models.CreateSite(ctx, db, "One", "search-one-locale")
	if err != nil {
		t.Fatal(err)
	}
	id := uuid.New()
	if _, err := db.NewRaw(`INSERT INTO pages (id, site_id, page_type, slug, path, title, published_at) VALUES (?, ?, 'page', 'photos', '/photos', 'Photography', now())`, id, site.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	s := models.Search{SiteID: site.ID, Type: "pages"}
	s.Terms, _ = models.SearchTerms("photographs")
	hl, err := models.Highlights(ctx, db, s, []uuid.UUID{id})
	if err != nil {
		t.Fatal(err)
	}
	if h := hl[id]; h.Locale != "" || !strings.Contains(h.Highlight, "<mark>Photography</mark>") || h.Rank <= 0 {
		t.Errorf("highlight %+v", h)
	}
}
