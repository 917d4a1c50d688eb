package models

import (
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

func TestEscapeLike(t *testing.T) {
	for in, want := range map[string]string{`100%`: `100\%`, `a_b`: `a\_b`, `c:\x`: `c:\\x`, `\%_`: `\\\%\_`, `plain`: `plain`} {
		if got := EscapeLike(in); got != want {
			t.Errorf("EscapeLike(%q) = %q, want %q", in, got, want)
		}
	}
}

// renderDB renders queries only: no driver is registered.
func renderDB(t *testing.T) *bun.DB {
	sqldb, err := sql.Open("render-only", "")
	if err == nil {
		t.Cleanup(func() { _ = sqldb.Close() })
	}
	return bun.NewDB(sqldb, pgdialect.New())
}

// The operators' SQL: wildcards escaped, typed comparisons, the last
// changer read from the user's drafts (only the preview's set under a
// preview) and versions of the right item type in the site, and every
// value a literal.
func TestListQueryFilters(t *testing.T) {
	db := renderDB(t)
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	user := uuid.MustParse("0b7c5f2e-6f1c-4d55-9b8e-3f4a2d1c0e9b")
	site, release, extra := uuid.New(), uuid.New(), uuid.New()
	set := `(d.release_id = '` + release.String() + `' OR d.id = ANY('{"` + extra.String() + `"}'::uuid[]))`
	l := ListQuery{DefaultSort: OrderOldest, Limit: 20, Drafted: true, Filters: []ColumnValue{
		{Column: "title", Op: OpContains, Value: "100%_x"},
		{Column: "path", Op: OpPrefix, Value: "/blog/"},
		{Column: "updated_at", Op: OpGte, Arg: at},
		{Column: "page_type", Op: OpIn, Arg: []string{"home", "page"}},
		{Column: "parent_id", None: true},
		{Op: OpEq, Arg: user, LastUser: "pages", SiteID: site, Drafts: &DraftSet{Release: release, Extra: []string{extra.String()}}},
	}}
	got := l.Apply(db.NewSelect().TableExpr("pages AS t")).String()
	for _, want := range []string{
		`"title" ILIKE '%100\%\_x%' ESCAPE '\'`,
		`"path" LIKE '/blog/%' ESCAPE '\'`,
		`"updated_at" >= '2026-11-01 00:00:00+00:00'`,
		`"page_type" IN ('home', 'page')`,
		`"parent_id" IS NULL`,
		// filter[user]: the user's drafts in the site (under a preview only
		// the set's), else the records whose latest version is theirs.
		`"t"."id" IN (SELECT d.item_id FROM drafts d WHERE d.site_id = '` + site.String() + `' AND d.item_type = 'pages' AND d.user_id = '0b7c5f2e-6f1c-4d55-9b8e-3f4a2d1c0e9b' AND ` + set + `)`,
		`"t"."id" IN (SELECT l.item_id FROM last_versions l WHERE l.site_id = '` + site.String() + `' AND l.item_type = 'pages' AND l.user_id = '0b7c5f2e-6f1c-4d55-9b8e-3f4a2d1c0e9b')`,
		`NOT EXISTS (SELECT 1 FROM drafts d WHERE d.item_type = 'pages' AND d.item_id = "t"."id" AND d.user_id IS NOT NULL AND ` + set + `)`,
		`ORDER BY created_at, id LIMIT 20`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("SQL lacks %s:\n%s", want, got)
		}
	}
}

// A keyset page compares each key of the order with the cursor's row's,
// read by id within the site, and orders by the same keys (backwards
// for page[before]); no OFFSET, and one row more than the page (which
// tells that another follows), as part of the ORDER BY so that bun's
// ScanAndCount runs no count query. With a nullable key (title) or mixed
// directions it is the expanded form.
func TestListQueryKeyset(t *testing.T) {
	db := renderDB(t)
	id, site := uuid.New(), uuid.New()
	l := ListQuery{Sort: []SortColumn{{Column: "title", Desc: true}}, DefaultSort: OrderOldest, Limit: 5, Offset: 40,
		Keyset: &Keyset{ID: id, SiteID: site}}
	cursor := `(SELECT "title" FROM "pages" AS "t" WHERE "t"."id" = '` + id.String() + `' AND "t"."site_id" = '` + site.String() + `')`
	got := l.Apply(db.NewSelect().TableExpr("pages AS t")).String()
	for _, want := range []string{`("title" IS NOT NULL AND (` + cursor + ` IS NULL OR "title" < ` + cursor + `))`,
		`ORDER BY "title" DESC, created_at ASC, id ASC LIMIT 6`} {
		if !strings.Contains(got, want) || strings.Contains(got, "OFFSET") {
			t.Errorf("SQL lacks %s (or has an OFFSET):\n%s", want, got)
		}
	}
	l.Keyset.Before = true
	if got := l.Apply(db.NewSelect().TableExpr("pages AS t")).String(); !strings.Contains(got, `ORDER BY "title" ASC, created_at DESC, id DESC LIMIT 6`) {
		t.Errorf("a page before orders backwards:\n%s", got)
	}
	l.Keyset.ID = uuid.Nil
	if got := l.Apply(db.NewSelect().TableExpr("pages AS t")).String(); strings.Contains(got, "WHERE") {
		t.Errorf("the last page (page[before]=) has no cursor to compare:\n%s", got)
	}
}

// A cursor whose row does not exist in the site answers an empty page
// in every direction and order: each keyset first checks that the row
// exists (a missing row's keys read NULL, which a descending key's
// comparison lets every row through).
func TestListQueryKeysetCursorRowMustExist(t *testing.T) {
	db := renderDB(t)
	id, site := uuid.New(), uuid.New()
	exists := `EXISTS (SELECT 1 FROM "pages" AS cursor_row WHERE cursor_row.id = '` + id.String() + `' AND cursor_row.site_id = '` + site.String() + `')`
	for _, before := range []bool{false, true} {
		for _, l := range []ListQuery{
			{DefaultSort: OrderOldest, Limit: 20},
			{DefaultSort: OrderNewest, Limit: 20},
			{Sort: []SortColumn{{Column: "title", Desc: true}}, DefaultSort: OrderOldest, Limit: 20},
		} {
			l.Keyset = &Keyset{ID: id, SiteID: site, Before: before}
			if got := l.Apply(db.NewSelect().TableExpr("pages AS t")).String(); !strings.Contains(got, exists) {
				t.Errorf("keyset (before %v, order %v %v) lacks %s:\n%s", before, l.DefaultSort, l.Sort, exists, got)
			}
		}
	}
}

// An order of NOT NULL keys in one direction is one row comparison (an
// index range scan from the cursor), the id compared with the cursor
// itself; page[before] turns it around.
func TestListQueryKeysetRowComparison(t *testing.T) {
	db := renderDB(t)
	id, site := uuid.New(), uuid.New()
	cursor := `(SELECT created_at FROM "pages" AS "t" WHERE "t"."id" = '` + id.String() + `' AND "t"."site_id" = '` + site.String() + `')`
	for _, c := range []struct {
		l    ListQuery
		want string
	}{
		{ListQuery{DefaultSort: OrderOldest, Limit: 20, Keyset: &Keyset{ID: id, SiteID: site}},
			`AND ((created_at, id) > (` + cursor + `, '` + id.String() + `')) ORDER BY created_at ASC, id ASC LIMIT 21`},
		{ListQuery{DefaultSort: OrderOldest, Limit: 20, Keyset: &Keyset{ID: id, SiteID: site, Before: true}},
			`AND ((created_at, id) < (` + cursor + `, '` + id.String() + `')) ORDER BY created_at DESC, id DESC LIMIT 21`},
		{ListQuery{Sort: []SortColumn{{Column: "updated_at", Desc: true}}, DefaultSort: OrderNewest, Limit: 20, Keyset: &Keyset{ID: id, SiteID: site}},
			`"updated_at" IS NOT NULL AND`}, // updated_at DESC, created_at DESC, id ASC: mixed
	} {
		if got := c.l.Apply(db.NewSelect().TableExpr("pages AS t")).String(); !strings.Contains(got, c.want) {
			t.Errorf("SQL lacks %s:\n%s", c.want, got)
		}
	}
}
