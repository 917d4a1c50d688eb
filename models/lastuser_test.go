package models_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
	"github.com/pressroom/pressroom/testsupport"
)

// filter[user] on a site of 10,000 pages is driven by the user's own
// drafts (drafts_user_idx), each checked to be the record's latest by an
// index probe, and by the records whose last version is the user's
// (last_versions_user_idx; before migration 20261202020100 the user's
// versions, each probed for a newer one): it used to run a
// correlated subquery for every page of the site, in the list and in its
// count (SubPlan loops=10000; 131 ms for one page at 30,000 pages, 420 ms
// with include=draft). The answers are those of "who last changed it":
// the draft's author with drafts, else the last version's user.
func TestListQueryLastUserIsIndexDriven(t *testing.T) {
	db := testsupport.NewDatabase(t)
	ctx := context.Background()
	site, err := models.CreateSite(ctx, db, "Last user", "last-user")
	if err != nil {
		t.Fatal(err)
	}
	a, err := models.CreateUser(ctx, db, site.ID, "a@last.test", "A", "x")
	if err != nil {
		t.Fatal(err)
	}
	b, err := models.CreateUser(ctx, db, site.ID, "b@last.test", "B", "x")
	if err != nil {
		t.Fatal(err)
	}
	// Page n: created by A; its second, latest version by B when n is a
	// multiple of 100, else by A. A draft on every 50th page: by A on the
	// multiples of 100, by B on the others. So B last changed 100 pages
	// live, and 100 others (the drafts' pages) with drafts.
	rev := uuid.New()
	for _, q := range []string{
		`INSERT INTO revisions (id, site_id, status, draft_ids) VALUES (?1, ?0, 'published', '{}')`,
		`INSERT INTO pages (id, site_id, page_type, slug, path, title, created_at, published_at)
		 SELECT gen_random_uuid(), ?0, 'page', 'u-' || n, '/u-' || n, 'page ' || n, now() + n * interval '1 ms', now() FROM generate_series(1, 10000) n`,
		`INSERT INTO versions (id, site_id, revision_id, item_type, item_id, event, object_changes, user_id, created_at)
		 SELECT gen_random_uuid(), ?0, ?1, 'pages', p.id, 'create', '{}', ?2, p.created_at FROM pages p WHERE p.site_id = ?0`,
		`INSERT INTO versions (id, site_id, revision_id, item_type, item_id, event, object_changes, user_id, created_at)
		 SELECT gen_random_uuid(), ?0, ?1, 'pages', p.id, 'update', '{}', CASE WHEN split_part(p.slug, '-', 2)::int % 100 = 0 THEN ?3 ELSE ?2 END::uuid,
		   p.created_at + interval '1 s' FROM pages p WHERE p.site_id = ?0`,
		`INSERT INTO drafts (id, site_id, item_type, item_id, event, drafted, object_changes, user_id)
		 SELECT gen_random_uuid(), ?0, 'pages', p.id, 'update', to_jsonb(p), '{}', CASE WHEN split_part(p.slug, '-', 2)::int % 100 = 0 THEN ?2 ELSE ?3 END::uuid
		 FROM pages p WHERE p.site_id = ?0 AND split_part(p.slug, '-', 2)::int % 50 = 0`,
		`ANALYZE pages; ANALYZE versions; ANALYZE drafts; ANALYZE last_versions`,
	} {
		if _, err := db.ExecContext(ctx, q, site.ID, rev, a.ID, b.ID); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	k, _ := drafts.KindOf("pages")
	// A, who last changed 9,900 pages either way, is answered rightly too
	// (not index-bounded: the list is most of the site).
	for _, drafted := range []bool{false, true} {
		l := models.ListQuery{DefaultSort: models.OrderOldest, Limit: 20, Drafted: drafted,
			Filters: []models.ColumnValue{{Op: models.OpEq, Arg: a.ID, LastUser: "pages", SiteID: site.ID}}}
		var total int64
		stmts := db.Statements.During(func() {
			if _, total, err = drafts.ListViews(ctx, db, k, site.ID, drafted, l.Apply); err != nil {
				t.Fatal(err)
			}
		})
		if total != 9900 {
			t.Errorf("drafted %v: A last changed %d pages, want 9,900", drafted, total)
		}
		for _, stmt := range stmts {
			var plan []string
			if err := db.NewRaw("EXPLAIN ANALYZE "+stmt).Scan(ctx, &plan); err != nil {
				t.Fatal(err)
			}
			t.Logf("A, drafted %v: %s", drafted, plan[len(plan)-1])
		}
	}
	for _, drafted := range []bool{false, true} {
		l := models.ListQuery{DefaultSort: models.OrderOldest, Limit: 20, Drafted: drafted,
			Filters: []models.ColumnValue{{Op: models.OpEq, Arg: b.ID, LastUser: "pages", SiteID: site.ID}}}
		var total int64
		stmts := db.Statements.During(func() {
			if _, total, err = drafts.ListViews(ctx, db, k, site.ID, drafted, l.Apply); err != nil {
				t.Fatal(err)
			}
		})
		if total != 100 {
			t.Errorf("drafted %v: B last changed %d pages, want 100", drafted, total)
		}
		for _, stmt := range stmts {
			if !strings.Contains(stmt, "last_versions") {
				continue // the page's drafts, read by id
			}
			var plan []string
			if err := db.NewRaw("EXPLAIN ANALYZE "+stmt).Scan(ctx, &plan); err != nil {
				t.Fatal(err)
			}
			text := strings.Join(plan, "\n")
			t.Logf("drafted %v: %s", drafted, plan[len(plan)-1])
			if m := regexp.MustCompile(`loops=(\d{4,})`).FindString(text); m != "" || !strings.Contains(text, "last_versions_user_idx") {
				t.Errorf("drafted %v: filter[user] is not driven by the user's versions (%s):\n%s", drafted, m, text)
			}
		}
	}
}

// TestLastVersionsFollowVersions: last_versions holds each record's newest
// version (created_at, then id) through inserts in any order and deletes
// of the newest (the history's retention, the trash's purge), in the
// statement that writes versions.
func TestLastVersionsFollowVersions(t *testing.T) {
	db := testsupport.NewDatabase(t)
	ctx := context.Background()
	site, err := models.CreateSite(ctx, db, "Last versions", "last-versions")
	if err != nil {
		t.Fatal(err)
	}
	a, err := models.CreateUser(ctx, db, site.ID, "a@lastv.test", "A", "x")
	if err != nil {
		t.Fatal(err)
	}
	b, err := models.CreateUser(ctx, db, site.ID, "b@lastv.test", "B", "x")
	if err != nil {
		t.Fatal(err)
	}
	rev, item := uuid.New(), uuid.New()
	if _, err := db.ExecContext(ctx, `INSERT INTO revisions (id, site_id, status, draft_ids) VALUES (?, ?, 'published', '{}')`, rev, site.ID); err != nil {
		t.Fatal(err)
	}
	put := func(user uuid.UUID, at string) uuid.UUID {
		id := uuid.New()
		_, err := db.ExecContext(ctx, `INSERT INTO versions (id, site_id, revision_id, item_type, item_id, event, object_changes, user_id, created_at)
  VALUES (?, ?, ?, 'pages', ?, 'update', '{}', ?, ?::timestamptz)`, id, site.ID, rev, item, user, at)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	last := func(label string, want *uuid.UUID) {
		t.Helper()
		var got []uuid.UUID
		if err := db.NewRaw(`SELECT user_id FROM last_versions WHERE item_type = 'pages' AND item_id = ?`, item).Scan(ctx, &got); err != nil && !models.IsNoRows(err) {
			t.Fatal(err)
		}
		switch {
		case want == nil && len(got) != 0:
			t.Errorf("%s: last_versions holds %v, want no row", label, got)
		case want != nil && (len(got) != 1 || got[0] != *want):
			t.Errorf("%s: last version's user %v, want %v", label, got, *want)
		}
	}
	put(a.ID, "2026-01-01T00:00:00Z")
	last("one version", &a.ID)
	newest := put(b.ID, "2026-01-03T00:00:00Z")
	last("a newer version", &b.ID)
	put(a.ID, "2026-01-02T00:00:00Z") // written late, older
	last("an older version written after", &b.ID)
	if _, err := db.ExecContext(ctx, `DELETE FROM versions WHERE id = ?`, newest); err != nil {
		t.Fatal(err)
	}
	last("the newest deleted", &a.ID)
	if _, err := db.ExecContext(ctx, `DELETE FROM versions WHERE item_id = ?`, item); err != nil {
		t.Fatal(err)
	}
	last("every version deleted", nil)
}
