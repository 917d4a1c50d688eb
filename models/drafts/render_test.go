package drafts_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
	"github.com/pressroom/pressroom/testsupport"
)

// The render route finds the page at a path among the pages stored at it
// or sharing its last slug: by an index, not a scan of the site's pages,
// and with the page stored at the path always among the bounded
// candidates, however many pages share its slug (1,100 here, past the
// bound of 1,000, the exact one stored last).
func TestPageToRenderFindsThePathAmongManySlugs(t *testing.T) {
	db := testsupport.NewDatabase(t)
	ctx := context.Background()
	site, err := models.CreateSite(ctx, db, "Render", "render")
	if err != nil {
		t.Fatal(err)
	}
	exact := uuid.MustParse("ffffffff-ffff-4fff-bfff-ffffffffffff")
	for _, q := range []string{
		`INSERT INTO pages (id, site_id, page_type, slug, path, title, published_at)
		 SELECT gen_random_uuid(), ?0, 'page', 'other-' || n, '/other-' || n, 'Other ' || n, now() FROM generate_series(1, 5000) n`,
		`INSERT INTO pages (id, site_id, page_type, slug, path, title, published_at)
		 SELECT gen_random_uuid(), ?0, 'page', 'news', '/s-' || n || '/news', 'News ' || n, now() FROM generate_series(1, 1100) n`,
		`INSERT INTO pages (id, site_id, page_type, slug, path, title, published_at) VALUES (?1, ?0, 'page', 'news', '/news', 'The news', now())`,
		`ANALYZE pages`,
	} {
		if _, err := db.ExecContext(ctx, q, site.ID, exact); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	e := drafts.NewEngine(config.Storage{})
	var page *models.RenderedPage
	stmts := db.Statements.During(func() {
		if page, err = e.PageToRender(ctx, db.DB, site.ID, "/news"); err != nil {
			t.Fatal(err)
		}
	})
	if page.Page.ID != exact {
		t.Errorf("the page rendered at /news = %s (%s), want %s", page.Page.ID, page.Page.Title, exact)
	}
	var lookup string
	for _, s := range stmts {
		if strings.Contains(s, "slug = ") {
			lookup = s
			break
		}
	}
	if lookup == "" {
		t.Fatalf("no candidates statement among %q", stmts)
	}
	var plan []string
	if err := db.NewRaw("EXPLAIN "+lookup).Scan(ctx, &plan); err != nil {
		t.Fatal(err)
	}
	if text := strings.Join(plan, "\n"); strings.Contains(text, "Seq Scan on pages") {
		t.Errorf("the render's page lookup scans the site's pages:\n%s", text)
	}
}
