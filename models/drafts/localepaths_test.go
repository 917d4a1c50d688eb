package drafts_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
)

// Per-locale paths on the engine (docs/locales.md, "Paths in a locale"),
// with translations seeded by SQL: the engine's writes in a locale are part
// 2's (e2e/locales_paths_test.go drives them through the API).

// multiLocale gives w's site en (base), de and fr, both falling back to en.
func (w *engineWorld) multiLocale() {
	w.t.Helper()
	if _, err := w.db.NewRaw(`UPDATE sites SET locales = '{en,de,fr}',
    locale_chains = '{"en": ["en"], "de": ["de", "en"], "fr": ["fr", "en"]}' WHERE id = ?`, w.site).Exec(context.Background()); err != nil {
		w.t.Fatal(err)
	}
	w.tx(func(ctx context.Context, tx bun.Tx) error { return drafts.RefreshSiteLocalePaths(ctx, tx, w.site) })
}

// translate sets the named page's translations (its row, as an
// unpublished page's write or a publish leaves them) and re-derives the
// site's paths.
func (w *engineWorld) translate(name, translations string) {
	w.t.Helper()
	if _, err := w.db.NewRaw("UPDATE pages SET translations = ?::jsonb WHERE id = ?", translations, w.ids[name]).Exec(context.Background()); err != nil {
		w.t.Fatal(err)
	}
	w.tx(func(ctx context.Context, tx bun.Tx) error { return drafts.RefreshSiteLocalePaths(ctx, tx, w.site) })
}

// localePaths are the site's page_locale_paths rows as "locale path live".
func (w *engineWorld) localePaths() []string {
	w.t.Helper()
	var out []string
	if err := w.db.NewRaw(`SELECT locale || ' ' || path || ' ' || live FROM page_locale_paths WHERE site_id = ? ORDER BY locale, path`, w.site).
		Scan(context.Background(), &out); err != nil {
		w.t.Fatal(err)
	}
	return out
}

// check runs Engine.Check of a page's drafted state (id nil: a create).
func (w *engineWorld) check(id *uuid.UUID, state, prev drafts.Row) error {
	w.t.Helper()
	var out error
	w.tx(func(ctx context.Context, tx bun.Tx) error {
		out = w.e.Check(ctx, tx, drafts.Pages, w.site, id, state, prev)
		return nil
	})
	return out
}

// pageState is a new page's drafted state under parent (nil: a root).
func pageState(slug string, parent *uuid.UUID, more map[string]any) drafts.Row {
	r := drafts.Row{"page_type": "page", "slug": slug, "title": slug, "search_engine_indexable": true,
		"search_engine_followable": true, "parent_id": nil}
	if parent != nil {
		r["parent_id"] = parent.String()
	}
	maps.Copy(r, more)
	return r
}

// wantTaken fails unless err is 409 path_taken naming page other in
// locale (none: the base).
func wantTaken(t *testing.T, err error, other uuid.UUID, locale string) {
	t.Helper()
	var e *models.Error
	if !errors.As(err, &e) || e.Code != drafts.PathTaken {
		t.Fatalf("err = %v, want path_taken", err)
	}
	page, _ := e.Meta["page"].(map[string]any)
	if page["id"] != other.String() || e.Meta["locale"] != nil && e.Meta["locale"] != locale || locale != "" && e.Meta["locale"] != locale {
		t.Errorf("path_taken meta = %v, want page %s locale %q", e.Meta, other, locale)
	}
}

// TestLocalePathsFollowWrites: page_locale_paths holds every page's path
// in every non-base locale, re-derived for a locale added, a create, a
// move and a publish (live follows published_at).
func TestLocalePathsFollowWrites(t *testing.T) {
	t.Parallel()
	w := newEngineWorld(t)
	w.create(drafts.Pages, "About", "")
	w.create(drafts.Pages, "Team", "About")
	w.multiLocale()
	want := []string{"de /about false", "de /about/team false", "fr /about false", "fr /about/team false"}
	if got := w.localePaths(); !slices.Equal(got, want) {
		t.Errorf("after adding de and fr: %v, want %v", got, want)
	}
	w.translate("About", `{"slug@de": "ueber-uns", "title@de": "Über uns"}`)
	w.create(drafts.Pages, "Jobs", "About") // Engine.Create derives its rows
	want = []string{"de /ueber-uns false", "de /ueber-uns/jobs false", "de /ueber-uns/team false",
		"fr /about false", "fr /about/jobs false", "fr /about/team false"}
	if got := w.localePaths(); !slices.Equal(got, want) {
		t.Errorf("after a German slug and a create: %v, want %v", got, want)
	}
	w.update("Team", drafts.Change{"parent_id": nil}) // an unpublished page's move
	want = []string{"de /team false", "de /ueber-uns false", "de /ueber-uns/jobs false",
		"fr /about false", "fr /about/jobs false", "fr /team false"}
	if got := w.localePaths(); !slices.Equal(got, want) {
		t.Errorf("after a move: %v, want %v", got, want)
	}
	w.publish("About", "Jobs", "Team")
	for i := range want {
		want[i] = strings.Replace(want[i], "false", "true", 1)
	}
	if got := w.localePaths(); !slices.Equal(got, want) {
		t.Errorf("after publishing: %v, want %v", got, want)
	}
	// A live page moved by a publish: its subtree follows in every locale.
	w.update("Jobs", drafts.Change{"parent_id": w.ids["Team"].String()})
	w.publish("Jobs")
	got := w.localePaths()
	if !slices.Contains(got, "de /team/jobs true") || !slices.Contains(got, "fr /team/jobs true") {
		t.Errorf("after publishing a move: %v, want jobs under /team in de and fr", got)
	}
	// Live and drafted reads of the paths in every locale.
	ctx := context.Background()
	// The render route finds a page by its path in the request's locale.
	de := drafts.WithLocale(ctx, drafts.Locale{Tag: "de", Base: "en", Default: "en", Chain: []string{"de", "en"}})
	for path, want := range map[string]uuid.UUID{"/ueber-uns": w.ids["About"], "/team/jobs": w.ids["Jobs"]} {
		if page, err := w.e.PageToRender(de, w.db, w.site, path); err != nil || page.Page.ID != want {
			t.Errorf("PageToRender in de at %s = %v, %v; want %s", path, page, err, want)
		}
	}
	if _, err := w.e.PageToRender(de, w.db, w.site, "/about"); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("PageToRender in de at the English path: %v, want not found", err)
	}
	site := models.SiteLocales{Locales: []string{"en", "de", "fr"}, Base: "en",
		Chains: map[string][]string{"en": {"en"}, "de": {"de", "en"}, "fr": {"fr", "en"}}}
	live, err := drafts.LocalePaths(ctx, w.db, w.site, []uuid.UUID{w.ids["About"]})
	if err != nil || live[w.ids["About"]]["de"] != "/ueber-uns" || live[w.ids["About"]]["fr"] != "/about" {
		t.Errorf("LocalePaths = %v, %v", live, err)
	}
	w.update("Team", drafts.Change{"parent_id": w.ids["About"].String()}) // drafted, not published
	drafted, err := w.e.DraftedLocalePaths(ctx, w.db, w.site, site, []uuid.UUID{w.ids["Jobs"]})
	if want := map[string]string{"en": "/about/team/jobs", "de": "/ueber-uns/team/jobs", "fr": "/about/team/jobs"}; err != nil ||
		!maps.Equal(drafted[w.ids["Jobs"]], want) {
		t.Errorf("DraftedLocalePaths = %v, %v; want %v", drafted, err, want)
	}
	// A locale draft's slug (part 2 writes them) moves the drafted path
	// in its locale only.
	if _, err := w.db.NewRaw(`INSERT INTO drafts (id, site_id, item_type, item_id, event, locale, drafted, object_changes, created_at, updated_at, version)
    VALUES (?, ?, 'pages', ?, 'update', 'fr', '{"slug@fr": "equipe", "title@fr": null}', '{}', now(), now(), 1)`,
		uuid.New(), w.site, w.ids["Team"]).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	drafted, err = w.e.DraftedLocalePaths(ctx, w.db, w.site, site, []uuid.UUID{w.ids["Jobs"]})
	if want := map[string]string{"en": "/about/team/jobs", "de": "/ueber-uns/team/jobs", "fr": "/about/equipe/jobs"}; err != nil ||
		!maps.Equal(drafted[w.ids["Jobs"]], want) {
		t.Errorf("DraftedLocalePaths with a French draft = %v, %v; want %v", drafted, err, want)
	}
}

// TestLocalePathCheck: the write-time check (Engine.Check → pathFree)
// refuses a page's place in any locale, resolved along the locale's chain:
// a German slug a sibling has in German is 409 path_taken with
// meta.locale; under another parent, or the same slug in French, is free;
// a sibling without a German slug is at its English slug in German (plan
// §2.5: both directions); a locale draft's slug counts.
func TestLocalePathCheck(t *testing.T) {
	t.Parallel()
	w := newEngineWorld(t)
	w.create(drafts.Pages, "About", "")
	w.create(drafts.Pages, "Team", "")
	w.create(drafts.Pages, "Contact", "")
	w.multiLocale()
	w.translate("About", `{"slug@de": "ueber-uns"}`)
	about, team, contact := w.ids["About"], w.ids["Team"], w.ids["Contact"]

	wantTaken(t, w.check(nil, pageState("x", nil, map[string]any{"slug@de": "ueber-uns"}), nil), about, "de")
	if err := w.check(nil, pageState("x", &contact, map[string]any{"slug@de": "ueber-uns"}), nil); err != nil {
		t.Errorf("the German slug under another parent: %v", err)
	}
	if err := w.check(nil, pageState("x", nil, map[string]any{"slug@fr": "ueber-uns"}), nil); err != nil {
		t.Errorf("the German slug as a French one: %v", err)
	}
	// The base check still runs, and names no locale.
	wantTaken(t, w.check(nil, pageState("about", nil, nil), nil), about, "")
	// Fallbacks: Team has no German slug, so it is at /team in German.
	wantTaken(t, w.check(nil, pageState("y", nil, map[string]any{"slug@de": "team"}), nil), team, "de")
	// A page whose English slug is its German one, where a sibling has
	// that German slug: the English rename is refused in German.
	w.translate("Contact", `{"slug@de": "x"}`)
	prev := w.row("Team")
	state := maps.Clone(prev)
	state["slug"] = "x"
	wantTaken(t, w.check(&team, state, prev), contact, "de")
	// Only the title changed: no check, whatever the places.
	state = maps.Clone(prev)
	state["title"] = "Crew"
	if err := w.check(&team, state, prev); err != nil {
		t.Errorf("a title-only write: %v", err)
	}
	// Live pages with a German locale draft: its slug counts.
	w.publish("About", "Team", "Contact")
	if _, err := w.db.NewRaw(`INSERT INTO drafts (id, site_id, item_type, item_id, event, locale, drafted, object_changes, created_at, updated_at, version)
    VALUES (?, ?, 'pages', ?, 'update', 'de', '{"slug@de": "mannschaft"}', '{}', now(), now(), 1)`,
		uuid.New(), w.site, team).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantTaken(t, w.check(nil, pageState("z", nil, map[string]any{"slug@de": "mannschaft"}), nil), team, "de")
	// ... and frees the German slug it replaces.
	if err := w.check(nil, pageState("z", nil, map[string]any{"slug@de": "team"}), nil); err != nil {
		t.Errorf("the German slug a locale draft gives up: %v", err)
	}
	// A page drafted for deletion frees its places.
	w.remove("About")
	if err := w.check(nil, pageState("z", nil, map[string]any{"slug@de": "ueber-uns"}), nil); err != nil {
		t.Errorf("the German slug of a page drafted for deletion: %v", err)
	}
}

// TestLocalePathsExclusion: the database keeps one live page per path and
// locale whatever a statement writes (page_locale_paths_live_excl, checked
// at commit).
func TestLocalePathsExclusion(t *testing.T) {
	t.Parallel()
	w := newEngineWorld(t)
	w.create(drafts.Pages, "About", "")
	w.create(drafts.Pages, "Team", "")
	w.multiLocale()
	w.publish("About", "Team")
	err := w.db.RunInTx(context.Background(), nil, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewRaw("UPDATE page_locale_paths SET path = '/about' WHERE page_id = ? AND locale = 'de'", w.ids["Team"]).Exec(ctx)
		return err
	})
	if !models.IsExclusionViolation(err, "page_locale_paths_live_excl") {
		t.Errorf("a second live page at /about in German: %v, want page_locale_paths_live_excl", err)
	}
}

// TestLocalePathsOnePublishSwaps: one publish that moves a page to a
// German place a sibling's German slug change frees succeeds: the places
// are checked once every page of the revision has its paths.
func TestLocalePathsOnePublishSwaps(t *testing.T) {
	t.Parallel()
	w := newEngineWorld(t)
	w.create(drafts.Pages, "P", "")
	w.create(drafts.Pages, "X", "")
	w.create(drafts.Pages, "Y", "P")
	w.multiLocale()
	w.translate("X", `{"slug@de": "a"}`)
	w.translate("Y", `{"slug@de": "a"}`)
	w.publish("P", "X", "Y")
	w.update("Y", drafts.Change{"slug@de": "b"})
	w.update("X", drafts.Change{"parent_id": w.ids["P"].String()})
	var ids []uuid.UUID
	if err := w.db.NewRaw("SELECT id FROM drafts WHERE item_id IN (?) /* every locale */", bun.In([]uuid.UUID{w.ids["X"], w.ids["Y"]})).
		Scan(context.Background(), &ids); err != nil || len(ids) != 2 {
		t.Fatalf("drafts of X and Y: %v %v", ids, err)
	}
	rev := &drafts.Revision{SiteRecord: models.NewSiteRecord(w.site), UserID: &w.user, Status: drafts.Publishing, DraftIDs: ids}
	w.tx(func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(rev).Exec(ctx); err != nil {
			return err
		}
		_, err := w.e.Publish(ctx, tx, rev.ID)
		return err
	})
	got := w.localePaths()
	if !slices.Contains(got, "de /p/a true") || !slices.Contains(got, "de /p/b true") {
		t.Errorf("after one publish of the swap: %v, want X at /p/a and Y at /p/b in German", got)
	}
}
