package history_test

// The history's read paths on a realistic versions table (issue 31,
// docs/history.md): one page with 10,000 versions among 1,000 pages of 100
// versions each (110,000 versions), contents pointing at the pages. It
// reports p50 and p99 of
//
//   - the first page of the busy page's history (drafts.ItemVersions, 20),
//   - an as-of read at a random time of its life (drafts.VersionAsOf),
//   - the children of a page as of a time (drafts.ChildrenAsOf),
//
// and the plan of ChildrenAsOf's query (EXPLAIN ANALYZE) and the bytes a
// version takes (pg_column_size, and the table with its indexes over the
// rows). The versions are seeded with SQL, not published: the reads are
// what is measured. Run with the services (devstack exec):
//
//	go test ./bench/history -run XXX -bench . -benchtime 1x -v

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
	"github.com/pressroom/pressroom/testsupport"
)

const (
	busyVersions = 10000
	otherPages   = 1000
	otherEach    = 100
	samples      = 1000
)

// lastQuery keeps the text of the last query a connection ran.
type lastQuery struct{ q string }

func (h *lastQuery) BeforeQuery(ctx context.Context, e *bun.QueryEvent) context.Context {
	h.q = e.Query
	return ctx
}
func (h *lastQuery) AfterQuery(context.Context, *bun.QueryEvent) {}

// seed writes the versions: a state like a typical page's row (title,
// a 160-character description, keywords, the flags and timestamps).
func seed(b *testing.B, db bun.IDB, siteID, busy uuid.UUID, others []uuid.UUID, start time.Time) {
	ctx := context.Background()
	rev := uuid.New()
	if _, err := db.NewRaw(`INSERT INTO revisions (id, site_id, status, draft_ids) VALUES (?, ?, 'published', '{}')`, rev, siteID).Exec(ctx); err != nil {
		b.Fatal(err)
	}
	state := `jsonb_build_object('id', ?0::text, 'site_id', ?1::text, 'parent_id', NULL, 'layout_id', NULL, 'page_type', 'page',
  'slug', 'page-' || g, 'path', '/page-' || g, 'title', 'A page title, revision ' || g,
  'description', repeat('A description of the page as search engines show it. ', 3),
  'keywords', 'news, launch, product', 'search_engine_indexable', true, 'search_engine_followable', true,
  'canonical_url', NULL, 'published_at', ?2::timestamptz, 'trashed_at', NULL, 'created_at', ?2::timestamptz,
  'updated_at', ?2::timestamptz + g * interval '1 minute', 'version', g)`
	insert := `INSERT INTO versions (id, site_id, revision_id, item_type, item_id, event, object_changes, state, created_at)
  SELECT gen_random_uuid(), ?1, ?3, 'pages', ?0, CASE WHEN g = 1 THEN 'create' ELSE 'update' END,
         jsonb_build_object('title', jsonb_build_array('A page title, revision ' || (g - 1), 'A page title, revision ' || g)),
         ` + state + `, ?2::timestamptz + g * interval '1 minute'
    FROM generate_series(1, ?4) g`
	if _, err := db.NewRaw(insert, busy, siteID, start, rev, busyVersions).Exec(ctx); err != nil {
		b.Fatal(err)
	}
	for _, p := range others {
		if _, err := db.NewRaw(insert, p, siteID, start, rev, otherEach).Exec(ctx); err != nil {
			b.Fatal(err)
		}
		// Two contents per page, each with three versions.
		for range 2 {
			if _, err := db.NewRaw(`INSERT INTO versions (id, site_id, revision_id, item_type, item_id, event, object_changes, state, created_at)
  SELECT gen_random_uuid(), ?1, ?3, 'contents', ?4, 'update', '{}', jsonb_build_object('id', ?4::text, 'page_id', ?0::text, 'title', 'Main'),
         ?2::timestamptz + g * interval '1 hour' FROM generate_series(1, 3) g`, p, siteID, start, rev, uuid.New()).Exec(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if _, err := db.NewRaw("ANALYZE versions").Exec(ctx); err != nil {
		b.Fatal(err)
	}
}

// percentiles reports the p50 and p99 of run over samples calls, in ms.
func percentiles(b *testing.B, name string, run func(i int) error) {
	d := make([]time.Duration, samples)
	for i := range d {
		t0 := time.Now()
		if err := run(i); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		d[i] = time.Since(t0)
	}
	slices.Sort(d)
	p50, p99 := d[len(d)/2], d[len(d)*99/100]
	b.ReportMetric(float64(p50.Microseconds())/1000, name+"-p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, name+"-p99-ms")
	b.Logf("%s: p50 %s, p99 %s over %d calls", name, p50, p99, samples)
}

func BenchmarkHistory(b *testing.B) {
	ctx := context.Background()
	db := testsupport.NewDatabase(b)
	site, err := models.CreateSite(ctx, db, "Bench", "bench")
	if err != nil {
		b.Fatal(err)
	}
	busy := uuid.New()
	others := make([]uuid.UUID, otherPages)
	for i := range others {
		others[i] = uuid.New()
	}
	start := time.Now().Add(-400 * 24 * time.Hour).UTC().Truncate(time.Second)
	seed(b, db, site.ID, busy, others, start)
	b.ResetTimer()
	for range b.N {
		percentiles(b, "history", func(int) error {
			vs, more, err := drafts.ItemVersions(ctx, db, site.ID, drafts.Pages, busy, drafts.HistoryPage{Limit: 20})
			if err == nil && (len(vs) != 20 || !more) {
				err = fmt.Errorf("first page %d versions, more %v", len(vs), more)
			}
			return err
		})
		percentiles(b, "as-of", func(int) error {
			at := start.Add(time.Duration(1+rand.IntN(busyVersions)) * time.Minute)
			_, err := drafts.VersionAsOf(ctx, db, site.ID, drafts.Pages, busy, drafts.AsOf{At: &at})
			return err
		})
		percentiles(b, "children-as-of", func(i int) error {
			rows, err := drafts.ChildrenAsOf(ctx, db, site.ID, drafts.Contents, "page_id", others[i%len(others):i%len(others)+1], time.Now())
			if err == nil && len(rows) != 2 {
				err = fmt.Errorf("%d children, want 2", len(rows))
			}
			return err
		})
	}
	b.StopTimer()
	report(b, db, site.ID, busy, others[0])
}

// report logs ChildrenAsOf's plan and the bytes per version.
func report(b *testing.B, db *testsupport.Database, siteID, busy, parent uuid.UUID) {
	ctx := context.Background()
	hook := &lastQuery{}
	db.AddQueryHook(hook)
	if _, err := drafts.ChildrenAsOf(ctx, db, siteID, drafts.Contents, "page_id", []uuid.UUID{parent}, time.Now()); err != nil {
		b.Fatal(err)
	}
	var plan []string
	if err := db.NewRaw("EXPLAIN (ANALYZE, BUFFERS) "+hook.q).Scan(ctx, &plan); err != nil {
		b.Fatal(err)
	}
	b.Logf("ChildrenAsOf plan:\n%s", strings.Join(plan, "\n"))
	var sz struct {
		Row   float64 `bun:"row"`
		State float64 `bun:"state"`
		Count int64   `bun:"count"`
		Table int64   `bun:"tbl"`
		Total int64   `bun:"total"`
	}
	if err := db.NewRaw(`SELECT avg(pg_column_size(v.*)) AS row, avg(pg_column_size(v.state)) AS state,
  (SELECT count(*) FROM versions) AS count, pg_table_size('versions') AS tbl, pg_total_relation_size('versions') AS total
  FROM versions v WHERE v.item_id = ?`, busy).Scan(ctx, &sz); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(sz.Row, "row-bytes/version")
	b.ReportMetric(float64(sz.Total)/float64(sz.Count), "total-bytes/version")
	b.Logf("a typical page's version: row %.0f bytes (state %.0f); versions table %d rows: heap+toast %d bytes (%.0f/version), with indexes %d bytes (%.0f/version); 1,000,000 versions ≈ %.0f MB with indexes",
		sz.Row, sz.State, sz.Count, sz.Table, float64(sz.Table)/float64(sz.Count), sz.Total, float64(sz.Total)/float64(sz.Count),
		float64(sz.Total)/float64(sz.Count)*1e6/(1<<20))
}
