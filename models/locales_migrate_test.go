package models_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/testsupport"
)

const localesMigration = "migrations/20261202010000_locales.tx"

// TestLocalesMigrationKeepsValues: the locales migration moves no value.
// The schema is taken to just before it (every migration up, then its
// down), records of every kind are written, the migration runs again, and
// every row is what it was but for translations = {}; every draft and
// version is the shared one (locale ”), sites have the one locale en.
func TestLocalesMigrationKeepsValues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testsupport.NewEmptyDatabase(t)
	m, err := models.NewMigrator(db.DB)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Up(ctx); err != nil {
		t.Fatal(err)
	}
	run := func(file string) {
		t.Helper()
		sql, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, string(sql)); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	// The later migrations first, newest first (some depend on the
	// columns the locales migration adds), then it.
	later := migrationsAfter(t, localesMigration)
	for i := len(later) - 1; i >= 0; i-- {
		run(later[i] + ".down.sql")
	}
	run(localesMigration + ".down.sql")
	site, err := models.CreateSite(ctx, db, "Before", "before")
	if err != nil {
		t.Fatal(err)
	}
	page, content, block, draft := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO pages (id, site_id, page_type, slug, path, title, description, published_at) VALUES (?, ?, 'page', 'about', '/about', 'About', 'All about us', now())`, []any{page, site.ID}},
		{`INSERT INTO contents (id, site_id, page_id, title, published_at) VALUES (?, ?, ?, 'Intro', now())`, []any{content, site.ID, page}},
		{`INSERT INTO content_blocks (id, site_id, content_id, var_name, data_type, body, published_at) VALUES (?, ?, ?, 'headline', 'text', 'Hello', now())`, []any{block, site.ID, content}},
		{`INSERT INTO drafts (id, site_id, item_type, item_id, event, drafted, object_changes) VALUES (?, ?, 'pages', ?, 'update', '{"title": "About us"}', '{"title": ["About", "About us"]}')`, []any{draft, site.ID, page}},
	} {
		if _, err := db.NewRaw(q.sql, q.args...).Exec(ctx); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	snapshot := func(without string) map[string]string {
		t.Helper()
		out := map[string]string{}
		for _, table := range []string{"pages", "contents", "content_blocks", "drafts"} {
			var rows []string
			if err := db.NewRaw("SELECT (to_jsonb(t) - ?::text[])::text FROM ? t ORDER BY id", pgTextArray(without), bunIdent(table)).Scan(ctx, &rows); err != nil {
				t.Fatal(err)
			}
			for i, r := range rows {
				out[table+"/"+string(rune('0'+i))] = r
			}
		}
		return out
	}
	before := snapshot("")
	run(localesMigration + ".up.sql")
	for _, m := range later {
		run(m + ".up.sql")
	}
	after := snapshot("translations,locale")
	if len(after) != len(before) || len(before) != 4 {
		t.Fatalf("rows before %d, after %d, want 4", len(before), len(after))
	}
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed:\n before %s\n after  %s", k, v, after[k])
		}
	}
	var bad int
	if err := db.NewRaw(`SELECT (SELECT count(*) FROM pages WHERE translations <> '{}') + (SELECT count(*) FROM contents WHERE translations <> '{}')
		+ (SELECT count(*) FROM content_blocks WHERE translations <> '{}') + (SELECT count(*) FROM drafts WHERE locale <> '')
		+ (SELECT count(*) FROM sites WHERE locales <> '{en}' OR base_locale <> 'en' OR locale_chains <> '{"en": ["en"]}')`).Scan(ctx, &bad); err != nil {
		t.Fatal(err)
	}
	if bad != 0 {
		t.Errorf("%d rows are not in the base locale after the migration", bad)
	}
	// The down refuses while a locale holds content.
	if _, err := db.ExecContext(ctx, `UPDATE pages SET translations = '{"title@de": "Über uns"}'`); err != nil {
		t.Fatal(err)
	}
	sql, _ := os.ReadFile(localesMigration + ".down.sql")
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck
	if _, err := tx.ExecContext(ctx, string(sql)); err == nil {
		t.Error("the down dropped a page's German title")
	}
}

func pgTextArray(csv string) any {
	if csv == "" {
		return pgdialect.Array([]string{})
	}
	return pgdialect.Array(strings.Split(csv, ","))
}

func bunIdent(name string) bun.Ident { return bun.Ident(name) }

// migrationsAfter are the migrations (paths without .up.sql) that sort
// after name, oldest first.
func migrationsAfter(t *testing.T, name string) []string {
	t.Helper()
	ups, err := filepath.Glob("migrations/*.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, u := range ups {
		if m := strings.TrimSuffix(u, ".up.sql"); m > name {
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return out
}
