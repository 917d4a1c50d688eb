package drafts

import (
	"context"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/testsupport"
)

// TestHyperlinksPerLocale: a German body's hrefs resolve against German
// paths (page_locale_paths, seeded here as the path engine writes them),
// the base body's against pages.path; each body key of a draft is indexed
// in its locale; the links to a locale's draft are its locale's; a
// publish replaces the live links of the draft's locale only.
func TestHyperlinksPerLocale(t *testing.T) {
	ctx := context.Background()
	db := testsupport.NewDatabase(t)
	site, err := models.CreateSite(ctx, db, "Links", "links-locales")
	if err != nil {
		t.Fatal(err)
	}
	about, home, content, block := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	for _, q := range []string{
		`UPDATE sites SET locales = '{en,de}', locale_chains = '{"en": ["en"], "de": ["de", "en"]}' WHERE id = ?0`,
		`INSERT INTO pages (id, site_id, page_type, slug, path, title, translations, published_at)
		 VALUES (?1, ?0, 'page', 'about', '/about', 'About', '{"slug@de": "ueber-uns"}', now())`,
		`INSERT INTO pages (id, site_id, page_type, slug, path, title, published_at) VALUES (?2, ?0, 'home', '', '/', 'Home', now())`,
		`INSERT INTO page_locale_paths (site_id, page_id, locale, parent_id, slug, path, live) VALUES (?0, ?1, 'de', NULL, 'ueber-uns', '/ueber-uns', true)`,
		`INSERT INTO page_locale_paths (site_id, page_id, locale, parent_id, slug, path, live) VALUES (?0, ?2, 'de', NULL, '', '/', true)`,
		`INSERT INTO contents (id, site_id, page_id, title, published_at) VALUES (?3, ?0, ?2, 'Main', now())`,
		`INSERT INTO content_blocks (id, site_id, content_id, var_name, data_type, body, published_at) VALUES (?4, ?0, ?3, 'intro', 'html', '', now())`,
	} {
		if _, err := db.ExecContext(ctx, q, site.ID, about, home, content, block); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	draft := func(itemType string, item uuid.UUID, event, locale string) *Draft {
		t.Helper()
		d := &Draft{ID: uuid.New(), ItemType: itemType, ItemID: item, Event: event, Locale: locale}
		if _, err := db.ExecContext(ctx, `INSERT INTO drafts (id, site_id, item_type, item_id, event, drafted, object_changes, locale)
  VALUES (?, ?, ?, ?, ?, '{}', '{}', ?)`, d.ID, site.ID, itemType, item, event, locale); err != nil {
			t.Fatal(err)
		}
		return d
	}
	type link struct{ Locale, Href string }
	linksOf := func(where string, args ...any) []link {
		t.Helper()
		var ls []link
		if err := db.NewRaw("SELECT locale, href FROM hyperlinks WHERE "+where+" ORDER BY locale, href", args...).Scan(ctx, &ls); err != nil {
			t.Fatal(err)
		}
		return ls
	}
	e := NewEngine(config.Storage{})
	state := Row{
		"body":    `<a href="/about">en</a> <a href="/ueber-uns">not an English path</a>`,
		"body@de": `<a href="/ueber-uns#team">de</a> <a href="/about">not a German path</a> <a href="/">home</a>`,
	}

	// A German draft indexes the German body only, against German paths.
	de := draft("content-blocks", block, EventUpdate, "de")
	if err := e.indexLinks(ctx, db, ContentBlocks, site.ID, de, state); err != nil {
		t.Fatal(err)
	}
	if got, want := linksOf("draft_id = ?", de.ID), []link{{"de", "/"}, {"de", "/ueber-uns"}}; !slices.Equal(got, want) {
		t.Errorf("German draft's links = %v, want %v", got, want)
	}
	// The shared draft of the same block: the base body, base paths.
	shared := draft("content-blocks", block, EventUpdate, "")
	if err := e.indexLinks(ctx, db, ContentBlocks, site.ID, shared, state); err != nil {
		t.Fatal(err)
	}
	if got, want := linksOf("draft_id = ?", shared.ID), []link{{"", "/about"}}; !slices.Equal(got, want) {
		t.Errorf("shared draft's links = %v, want %v", got, want)
	}
	// A create holds every locale's body: each indexed in its own.
	created := uuid.New()
	if _, err := db.ExecContext(ctx, `INSERT INTO content_blocks (id, site_id, content_id, var_name, data_type, body) VALUES (?, ?, ?, 'more', 'html', '')`,
		created, site.ID, content); err != nil {
		t.Fatal(err)
	}
	create := draft("content-blocks", created, EventCreate, "")
	if err := e.indexLinks(ctx, db, ContentBlocks, site.ID, create, state); err != nil {
		t.Fatal(err)
	}
	if got, want := linksOf("draft_id = ?", create.ID), []link{{"", "/about"}, {"de", "/"}, {"de", "/ueber-uns"}}; !slices.Equal(got, want) {
		t.Errorf("create's links = %v, want %v", got, want)
	}

	// The links to the about page's drafts: a German slug change concerns
	// the German links, a deletion every locale's.
	slugDE := draft("pages", about, EventUpdate, "de")
	deletion := draft("pages", about, EventDelete, "")
	ranked, err := HyperlinksToDrafts(ctx, db, site.ID, []uuid.UUID{slugDE.ID, deletion.ID}, models.Window{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	count := map[uuid.UUID]int{}
	for _, r := range ranked {
		count[r.Parent]++
	}
	if count[slugDE.ID] != 2 || count[deletion.ID] != 4 {
		t.Errorf("links to the German slug draft %d (want 2), to the deletion %d (want 4): %+v", count[slugDE.ID], count[deletion.ID], ranked)
	}

	// Publishing the German draft: the block's live German links are its,
	// the live English ones stay.
	if _, err := db.ExecContext(ctx, `INSERT INTO hyperlinks (id, site_id, linkable_id, linked_type, linked_id, href, locale, created_at)
  VALUES (gen_random_uuid(), ?0, ?1, 'pages', ?2, '/about', '', now()), (gen_random_uuid(), ?0, ?1, 'pages', ?3, '/', 'de', now())`,
		site.ID, block, about, home); err != nil {
		t.Fatal(err)
	}
	if err := publishLinks(ctx, db, []*Draft{de}); err != nil {
		t.Fatal(err)
	}
	if got, want := linksOf("linkable_id = ? AND draft_id IS NULL", block), []link{{"", "/about"}, {"de", "/"}, {"de", "/ueber-uns"}}; !slices.Equal(got, want) {
		t.Errorf("live links after the German publish = %v, want %v", got, want)
	}
}
