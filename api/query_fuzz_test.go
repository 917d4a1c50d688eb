package api

import (
	"database/sql"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/valyala/fasthttp"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/models"
)

// fuzzSpecs are the query specs of real endpoints: a collection with
// includes, sorts and a filter; a single resource; a collection with
// several filters; and a simple endpoint with one extra parameter.
var fuzzSpecs = []QuerySpec{
	themeSpec(true),
	siteSpec(),
	{Collection: true, Fields: []string{"assets"},
		Sorts:       map[string]string{"title": "title", "created-at": "created_at", "updated-at": "updated_at"},
		DefaultSort: models.OrderNewest,
		Filters:     map[string]string{"asset-type": "asset_type", "content-type": "content_type", "title": "title"}},
	{Extra: []string{"download"}},
}

// FuzzParseQuery checks the query-string parser against every spec. A
// query string ends in exactly one of two ways:
//   - a 400 (422 allowed) *jsonapi.Error whose source.parameter names a
//     parameter of the query string; only a query string that is not
//     form-encoded at all, or holds a NUL, may fail without naming one;
//   - a Query within bounds: page size 1..100, page number 1..1,000,000,
//     only the includes, fieldsets, sorts and filters the spec offers, and
//     SQL from Apply in which every filter value stays inside a literal.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{
		"",
		"include=user,theme-assets.asset&fields[themes]=title,description&sort=-created-at,title&filter[title]=Spring&page[number]=2&page[size]=100",
		"include=theme&fields[sites]=title",
		"page[size]=0",
		"page[size]=101",
		"page[size]=-1",
		"page[number]=1000001",
		"page[number]=99999999999999999999",
		"page[size]=1e2",
		"page%5Bsize%5D=10",
		"page[size]=10&page[size]=20",
		"include=nope",
		"include=",
		"include=theme-assets..asset",
		"sort=,",
		"sort=--title",
		"fields[themes]=",
		"fields[nope]=x",
		"fields[THEMES]=x",
		"filter[title]=%27%3B%20DROP%20TABLE%20themes%3B--",
		"filter[title]=a'b\\'c&filter[asset-type]=image",
		"filter[title]=%00",
		"filter[title]=%FF",
		"filter[title][contains]=%C3%28",
		"filter[nope]=x",
		"page[after]=&page[size]=5",
		"page[before]=cjowMDAwMDAwMC0wMDAwLTAwMDAtMDAwMC0wMDAwMDAwMDAwMDE&sort=-title",
		"page[after]=x&page[number]=2",
		"download=1",
		"download",
		"a=%zz",
		"a;b=c",
		"%ff=%fe",
		"&&&",
		"=",
	} {
		for i := range fuzzSpecs {
			f.Add(s, uint8(i))
		}
	}
	app := fiber.New()
	// Apply's SQL is rendered, never run: the driver is not even registered.
	sqldb, err := sql.Open("fuzz-no-driver", "")
	if err == nil {
		defer sqldb.Close()
	}
	db := bun.NewDB(sqldb, pgdialect.New())
	f.Fuzz(func(t *testing.T, raw string, which uint8) {
		spec := fuzzSpecs[int(which)%len(fuzzSpecs)]
		c := app.AcquireCtx(&fasthttp.RequestCtx{})
		defer app.ReleaseCtx(c)
		// Every collection route is behind RequireToken: a cursor is
		// scoped by the caller's site.
		oauth.WithPrincipal(c, &oauth.Principal{SiteID: uuid.New()})
		c.Request().URI().SetQueryString(raw)
		raw = string(c.Request().URI().QueryString()) // what parseQuery reads
		q, err := parseQuery(c, spec)
		if err != nil {
			checkQueryError(t, raw, err)
			return
		}
		checkQuery(t, raw, spec, q)
		checkApply(t, db, q)
	})
}

// A query value or name that is not UTF-8 (%FF decodes without error) is
// 400 invalid_character at the parameter, before any SQL: PostgreSQL
// refuses the bytes (SQLSTATE 22021), which was a 500.
func TestQueryRejectsInvalidUTF8(t *testing.T) {
	app := fiber.New()
	spec := fuzzSpecs[2]
	for raw, param := range map[string]string{
		"filter[title]=%FF":              "filter[title]",
		"filter[title]=ok%C3%28":         "filter[title]",
		"sort=title&filter[title]=a%80b": "filter[title]",
		"%FF=x":                          "\xff",
	} {
		c := app.AcquireCtx(&fasthttp.RequestCtx{})
		oauth.WithPrincipal(c, &oauth.Principal{SiteID: uuid.New()})
		c.Request().URI().SetQueryString(raw)
		_, err := parseQuery(c, spec)
		var je *jsonapi.Error
		if !errors.As(err, &je) || je.Status != "400" || je.Code != "invalid_character" || je.Source == nil || je.Source.Parameter != param {
			t.Errorf("parseQuery(%q) = %v, want 400 invalid_character at %q", raw, err, param)
		}
		app.ReleaseCtx(c)
	}
}

func checkQueryError(t *testing.T, raw string, err error) {
	t.Helper()
	var je *jsonapi.Error
	if !errors.As(err, &je) {
		t.Fatalf("parseQuery(%q): %T %v, want a *jsonapi.Error", raw, err, err)
	}
	if je.Status != "400" && je.Status != "422" {
		t.Fatalf("parseQuery(%q): status %s, want 400: %v", raw, je.Status, je)
	}
	values, perr := url.ParseQuery(raw)
	if je.Source == nil {
		if perr == nil && !strings.Contains(raw, "%00") && !strings.ContainsRune(raw, 0) {
			t.Fatalf("parseQuery(%q): %v names no parameter", raw, je)
		}
		return
	}
	if _, ok := values[je.Source.Parameter]; !ok {
		t.Fatalf("parseQuery(%q): source.parameter %q is not a parameter of the query", raw, je.Source.Parameter)
	}
}

func checkQuery(t *testing.T, raw string, spec QuerySpec, q *Query) {
	t.Helper()
	if q.Page.size < 1 || q.Page.size > maxPageSize || q.Page.number < 1 || q.Page.number > 1_000_000 {
		t.Fatalf("parseQuery(%q): page %+v out of bounds", raw, q.Page)
	}
	if q.Page.offset() < 0 || q.Page.offset() > 1_000_000*maxPageSize {
		t.Fatalf("parseQuery(%q): offset %d", raw, q.Page.offset())
	}
	if !spec.Collection && (q.Page != page{number: 1, size: defaultPageSize} || len(q.sort) > 0 || len(q.filters) > 0) {
		t.Fatalf("parseQuery(%q): page, sort or filter on a single resource: %+v", raw, q)
	}
	for name, vs := range q.Values {
		if len(vs) != 1 {
			t.Fatalf("parseQuery(%q): parameter %q accepted %d times", raw, name, len(vs))
		}
	}
	for path := range q.Include {
		if !slices.ContainsFunc(spec.Includes, func(s string) bool { return s == path || strings.HasPrefix(s, path+".") }) {
			t.Fatalf("parseQuery(%q): include %q is not offered (%v)", raw, path, spec.Includes)
		}
	}
	for typ := range q.Fields {
		if !slices.Contains(spec.Fields, typ) {
			t.Fatalf("parseQuery(%q): fields[%s] is not offered", raw, typ)
		}
	}
	columns := map[string]bool{}
	for _, col := range spec.Sorts {
		columns[col] = true
	}
	for _, s := range q.sort {
		if !columns[s.column] {
			t.Fatalf("parseQuery(%q): sorts by %q", raw, s.column)
		}
	}
	for name := range q.filters {
		if spec.Filters[name] == "" {
			t.Fatalf("parseQuery(%q): filter[%s] is not offered", raw, name)
		}
	}
}

// checkApply renders the SQL twice, with the filter values given and with
// every value replaced by "v": with the string literals taken out, both
// must have the same bytes (Apply writes the filters in map order, so the
// bytes are compared sorted). A value that leaked out of its literal would
// add bytes to the first.
func checkApply(t *testing.T, db *bun.DB, q *Query) {
	t.Helper()
	for _, v := range q.filters {
		if strings.ContainsRune(v, 0) {
			return // bun refuses to quote NUL; the parser is to refuse it first
		}
	}
	got := q.Apply(db.NewSelect().TableExpr("t")).String()
	plain := *q
	plain.filters = map[string]string{}
	for name := range q.filters {
		plain.filters[name] = "v"
	}
	want := plain.Apply(db.NewSelect().TableExpr("t")).String()
	if a, b := sortedBytes(withoutLiterals(got)), sortedBytes(withoutLiterals(want)); a != b {
		t.Fatalf("filter values leak out of their SQL literals:\n%s\n%s", got, want)
	}
	tail := " LIMIT " + strconv.Itoa(q.Page.size)
	if q.Page.cursor() {
		// A cursor page reads one row past the page (which tells that
		// another follows: models.Keyset), still bounded.
		tail = " LIMIT " + strconv.Itoa(q.Page.size+1)
	}
	if q.Page.offset() > 0 {
		tail += " OFFSET " + strconv.Itoa(q.Page.offset())
	}
	if !strings.HasSuffix(got, tail) {
		t.Fatalf("SQL %q does not end in %q", got, tail)
	}
}

// withoutLiterals removes the quoted string literals from SQL (a doubled
// quote inside one stands for a quote).
func withoutLiterals(sql string) string {
	var b strings.Builder
	in := false
	for i := 0; i < len(sql); i++ {
		switch {
		case sql[i] == '\'' && in && i+1 < len(sql) && sql[i+1] == '\'':
			i++
		case sql[i] == '\'':
			in = !in
		case !in:
			b.WriteByte(sql[i])
		}
	}
	return b.String()
}

func sortedBytes(s string) string {
	b := []byte(s)
	slices.Sort(b)
	return string(b)
}

// TestEndpointParametersBeforeOperatorFilters: a list's own filter
// parameter (the trash's filter[trashed]) reaches its handler although the
// list's operator table does not know it; a filter neither knows is 400.
func TestEndpointParametersBeforeOperatorFilters(t *testing.T) {
	app := fiber.New()
	spec := QuerySpec{Collection: true, Operators: filterTable("pages"), Type: "pages", DefaultSort: models.OrderOldest,
		Extra: []string{trashedParam}}
	parse := func(raw string) (*Query, error) {
		c := app.AcquireCtx(&fasthttp.RequestCtx{})
		defer app.ReleaseCtx(c)
		oauth.WithPrincipal(c, &oauth.Principal{SiteID: uuid.New()})
		c.Request().URI().SetQueryString(raw)
		return parseQuery(c, spec)
	}
	if q, err := parse("filter[trashed]=true&filter[title][contains]=x"); err != nil || q.Values.Get(trashedParam) != "true" {
		t.Fatalf("filter[trashed]=true: %v", err)
	}
	_, err := parse("filter[nope]=x")
	var je *jsonapi.Error
	if !errors.As(err, &je) || je.Code != "unknown_parameter" || je.Source == nil || je.Source.Parameter != "filter[nope]" {
		t.Fatalf("filter[nope]=x: %v, want 400 unknown_parameter at filter[nope]", err)
	}
}
