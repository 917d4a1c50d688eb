package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pressroom/pressroom/auth"
	"github.com/pressroom/pressroom/models"
)

// listPage is one page of a list: its ids in order and its links.
type listPage struct {
	ids   []string
	links map[string]string
}

// list GETs path (200 expected) and answers its ids in order and links.
func (e *editor) list(path string) listPage {
	e.t.Helper()
	d := e.do(http.MethodGet, path, nil)
	if d.Status != 200 {
		e.t.Fatalf("GET %s = %d %s", path, d.Status, d.Raw)
	}
	var body struct {
		Data  []struct{ ID string }
		Links map[string]string
	}
	if err := json.Unmarshal(d.Raw, &body); err != nil {
		e.t.Fatalf("GET %s: %v %s", path, err, d.Raw)
	}
	p := listPage{links: body.Links}
	for _, r := range body.Data {
		p.ids = append(p.ids, r.ID)
	}
	return p
}

// relative is a link's path and query, for e.do.
func relative(t *testing.T, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	return u.RequestURI()
}

// TestListFilters: every operator of the filter syntax (issue 32 §2) on
// pages, contents and content blocks, LIKE wildcards matching themselves,
// filter[parent]=null, filter[user] (live and drafted), filters combined
// with filter[q], and another site's records never listed.
func TestListFilters(t *testing.T) {
	t.Parallel()
	s := start(t)
	hash, _ := auth.HashPassword(password)
	second, err := models.CreateUser(context.Background(), s.DB, s.Site.ID, "second@demo.test", "Second", hash)
	if err != nil {
		t.Fatal(err)
	}
	a, b, o := s.editor(t, "editor@demo.test"), s.editor(t, "second@demo.test"), s.editor(t, "editor@other.test")
	me := a.do(http.MethodGet, "/users/me", nil).resource(t).ID

	// Two groups, published apart: mid is after the first, before the second.
	blog, blogDraft := a.page("Blog", "blog", "")
	hello, helloDraft := a.page("Hello 100% world", "hello", blog)
	a.mustPublish(blogDraft, helloDraft)
	time.Sleep(50 * time.Millisecond)
	mid := time.Now().UTC().Format(time.RFC3339Nano)
	time.Sleep(50 * time.Millisecond)
	snake, snakeDraft := a.page("Snake_case notes", "snake", blog)
	missing, missingDraft := a.create("pages", map[string]any{"title": "Not found", "slug": "missing", "page-type": "not_found"}, nil)
	intro, introDraft := a.create("contents", map[string]any{"title": "Intro TEXT"}, map[string]any{"page": ref("pages", hello)})
	other, otherDraft := a.create("contents", map[string]any{"title": "Other"}, map[string]any{"page": ref("pages", snake)})
	html, htmlDraft := a.create("content-blocks", map[string]any{"var-name": "main_body", "data-type": "html", "body": "<p>x</p>"},
		map[string]any{"content": ref("contents", intro)})
	text, textDraft := a.create("content-blocks", map[string]any{"var-name": "mainXbody", "data-type": "text", "body": "y"},
		map[string]any{"content": ref("contents", intro)})
	a.mustPublish(snakeDraft, missingDraft, introDraft, otherDraft, htmlDraft, textDraft)
	bee, beeDraft := b.page("Bee page", "bee", "")
	b.mustPublish(beeDraft)
	// Another site with the same titles and paths.
	oBlog, oBlogDraft := o.page("Blog", "blog", "")
	_, oHelloDraft := o.page("Hello 100% world", "hello", oBlog)
	o.mustPublish(oBlogDraft, oHelloDraft)

	for path, want := range map[string][]string{
		"/pages?filter[title][contains]=" + url.QueryEscape("100%"):         {hello},
		"/pages?filter[title][contains]=%25":                                {hello},
		"/pages?filter[title][contains]=_":                                  {snake},
		"/pages?filter[title][contains]=HELLO":                              {hello},
		"/pages?filter[title]=Blog":                                         {blog},
		"/pages?filter[title][in]=Blog,Bee%20page":                          {blog, bee},
		"/pages?filter[path][prefix]=/blog/":                                {hello, snake},
		"/pages?filter[path][prefix]=/BLOG/":                                nil,
		"/pages?filter[slug][prefix]=sn":                                    {snake},
		"/pages?filter[page-type][in]=not_found,home":                       {missing},
		"/pages?filter[page-type]=not_found":                                {missing},
		"/pages?filter[parent]=" + blog:                                     {hello, snake},
		"/pages?filter[parent]=null":                                        {blog, missing, bee},
		"/pages?filter[layout]=null&filter[parent]=null":                    {blog, missing, bee},
		"/pages?filter[updated-at][lt]=" + mid:                              {blog, hello},
		"/pages?filter[updated-at][lte]=" + mid:                             {blog, hello},
		"/pages?filter[updated-at][gt]=" + mid:                              {snake, missing, bee},
		"/pages?filter[updated-at][gte]=" + mid:                             {snake, missing, bee},
		"/pages?filter[created-at][gte]=" + mid + "&filter[parent]=" + blog: {snake},
		"/pages?filter[published-at][lt]=" + mid:                            {blog, hello},
		"/pages?filter[user]=" + second.ID.String():                         {bee},
		"/pages?filter[user]=" + me:                                         {blog, hello, snake, missing},
		"/pages?filter[q]=hello&filter[path][prefix]=/blog/":                {hello},
		"/pages?filter[q]=hello&filter[path][prefix]=/nowhere/":             nil,
		"/pages?filter[path][prefix]=/blog/&sort=-title":                    {snake, hello},
		"/contents?filter[title][contains]=intro":                           {intro},
		"/contents?filter[page]=" + snake:                                   {other},
		"/contents?filter[updated-at][gt]=" + mid:                           {intro, other},
		"/content-blocks?filter[var-name][prefix]=main_":                    {html},
		"/content-blocks?filter[var-name][contains]=n_b":                    {html},
		"/content-blocks?filter[data-type][in]=html,markdown":               {html},
		"/content-blocks?filter[data-type]=text&filter[content]=" + intro:   {text},
		"/content-blocks?filter[asset]=null&filter[user]=" + me:             {html, text},
		"/assets?filter[title][contains]=x&filter[asset-type][in]=image":    nil,
	} {
		if got := a.list(path).ids; !slices.Equal(got, want) {
			t.Errorf("GET %s = %v, want %v", path, got, want)
		}
	}
	// The other site sees its own blog only.
	if got := o.list("/pages?filter[path][prefix]=/blog/").ids; len(got) != 1 || slices.Contains(got, hello) {
		t.Errorf("other site's /blog/ pages = %v", got)
	}

	// filter[user] is who last changed it: a's pending draft of b's page
	// counts in the drafted view only.
	d := a.do(http.MethodPatch, "/pages/"+bee, map[string]any{"data": map[string]any{"type": "pages", "id": bee,
		"attributes": map[string]any{"title": "Bee page, edited"}}})
	if d.Status != 200 {
		t.Fatalf("PATCH /pages/%s = %d %s", bee, d.Status, d.Raw)
	}
	if got := a.list("/pages?filter[user]=" + second.ID.String()).ids; !slices.Equal(got, []string{bee}) {
		t.Errorf("live filter[user]=second = %v, want [%s]", got, bee)
	}
	if got := a.list("/pages?include=draft&filter[user]=" + second.ID.String()).ids; len(got) != 0 {
		t.Errorf("drafted filter[user]=second = %v, want none", got)
	}
	if got := a.list("/pages?include=draft&filter[user]=" + me).ids; !slices.Equal(got, []string{blog, hello, snake, missing, bee}) {
		t.Errorf("drafted filter[user]=me = %v", got)
	}
	// Under a release's preview only the release's drafts count: a's
	// pending draft of bee, outside the release, neither makes a its
	// last changer nor hides second; staged, it does.
	release := s.pvRelease(t, s.Site.ID, "Filters")
	pv := "/pages?preview-release=" + release + "&filter[user]="
	if got := a.list(pv + me).ids; slices.Contains(got, bee) {
		t.Errorf("preview filter[user]=me = %v: an unrelated draft's author matched", got)
	}
	if got := a.list(pv + second.ID.String()).ids; !slices.Equal(got, []string{bee}) {
		t.Errorf("preview filter[user]=second = %v, want [%s] (the page as live)", got, bee)
	}
	staged := draftOf(t, d.resource(t))
	if st := a.do(http.MethodPost, "/releases/"+release+"/relationships/drafts", map[string]any{"data": []any{map[string]any{"type": "drafts", "id": staged}}}).Status; st != 204 {
		t.Fatalf("stage = %d", st)
	}
	if got := a.list(pv + me).ids; !slices.Contains(got, bee) {
		t.Errorf("preview filter[user]=me after staging = %v, want %s in it", got, bee)
	}
	if got := a.list(pv + second.ID.String()).ids; len(got) != 0 {
		t.Errorf("preview filter[user]=second after staging = %v, want none", got)
	}
	checkFilterIndexes(t, s, blog)
}

// checkFilterIndexes: on a site of 3,000 pages, contents and assets (and
// fresh statistics, sequential scans priced out as a site of 100,000
// pages prices them), the predicates contains and prefix write (an ILIKE
// '%…%' and a LIKE '…%' with ESCAPE, within a site) are answered by their
// indexes, not by reading the site's rows through its site_id index.
func checkFilterIndexes(t *testing.T, s *system, page string) {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO pages (id, site_id, page_type, slug, path, title, published_at)
		 SELECT gen_random_uuid(), ?, 'page', 'bulk-' || n, '/bulk-' || n, 'bulk page ' || n, now() FROM generate_series(1, 3000) n`,
		`INSERT INTO contents (id, site_id, page_id, title, published_at)
		 SELECT gen_random_uuid(), ?0, ?1, 'bulk content ' || n, now() FROM generate_series(1, 3000) n`,
		`INSERT INTO assets (id, site_id, title, content_type, asset_type, sub_type)
		 SELECT gen_random_uuid(), ?, 'bulk asset ' || n, 'image/png', 'image', 'png' FROM generate_series(1, 3000) n`,
		`VACUUM ANALYZE pages, contents, assets`, // VACUUM merges the GIN pending lists, as autovacuum does
	} {
		if _, err := s.DB.ExecContext(ctx, q, s.Site.ID, page); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for index, where := range map[string]string{
		"pages_title_trgm_idx":    `title ILIKE '%hello\%%' ESCAPE '\'`,
		"contents_title_trgm_idx": `title ILIKE '%intro%' ESCAPE '\'`,
		"assets_title_trgm_idx":   `title ILIKE '%cat%' ESCAPE '\'`,
		"pages_path_prefix_idx":   `path LIKE '/blog/%' ESCAPE '\'`,
	} {
		table := strings.SplitN(index, "_", 2)[0]
		var plan []string
		tx, err := s.DB.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		// 3,000 rows are still few enough to read whole: price that out,
		// as a real site's size does, so the plan shows which index
		// answers (the trigram index, not the site's 3,000 rows).
		if _, err := tx.ExecContext(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
			t.Fatal(err)
		}
		err = tx.NewRaw("EXPLAIN SELECT id FROM "+table+" WHERE site_id = ? AND "+where, s.Site.ID).Scan(ctx, &plan)
		_ = tx.Rollback()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(plan, "\n"), index) {
			t.Errorf("%s: the plan uses no %s:\n%s", where, index, strings.Join(plan, "\n"))
		}
	}
}

// TestListFilterErrors: each refused filter or page is 400 with the
// parameter as sent in source.parameter.
func TestListFilterErrors(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	cursor := "cjowMDAwMDAwMC0wMDAwLTAwMDAtMDAwMC0wMDAwMDAwMDAwMDA" // r:<nil uuid>
	for path, want := range map[string]struct{ code, param string }{
		"/pages?filter[nope]=1":                                                          {"unknown_parameter", "filter[nope]"},
		"/pages?filter[nope][contains]=1":                                                {"unknown_parameter", "filter[nope][contains]"},
		"/pages?filter[title][bogus]=1":                                                  {"invalid_filter", "filter[title][bogus]"},
		"/pages?filter[title][gte]=a":                                                    {"invalid_filter", "filter[title][gte]"},
		"/pages?filter[title][contains]=":                                                {"invalid_filter", "filter[title][contains]"},
		"/pages?filter[updated-at]=2026-01-01T00:00:00Z":                                 {"invalid_filter", "filter[updated-at]"},
		"/pages?filter[updated-at][gte]=yesterday":                                       {"invalid_filter", "filter[updated-at][gte]"},
		"/pages?filter[updated-at][lt]=2026-13-01":                                       {"invalid_filter", "filter[updated-at][lt]"},
		"/pages?filter[parent]=nobody":                                                   {"invalid_filter", "filter[parent]"},
		"/pages?filter[parent][contains]=a":                                              {"invalid_filter", "filter[parent][contains]"},
		"/pages?filter[user]=null":                                                       {"invalid_filter", "filter[user]"},
		"/pages?filter[page-type][in]=page,bogus":                                        {"invalid_filter", "filter[page-type][in]"},
		"/pages?filter[page-type]=bogus":                                                 {"invalid_filter", "filter[page-type]"},
		"/pages?filter[title][contains]=" + strings.Repeat("a", 501):                     {"invalid_filter", "filter[title][contains]"},
		"/contents?filter[page]=x":                                                       {"invalid_filter", "filter[page]"},
		"/content-blocks?filter[data-type][in]=html,video":                               {"invalid_filter", "filter[data-type][in]"},
		"/assets?filter[title][gte]=a":                                                   {"invalid_filter", "filter[title][gte]"},
		"/assets?filter[user]=1":                                                         {"invalid_filter", "filter[user]"},
		"/pages?page[number]=2&page[after]=" + cursor:                                    {"invalid_page", "page[number]"},
		"/pages?page[after]=not-a-cursor":                                                {"invalid_page", "page[after]"},
		"/pages?page[before]=" + cursor + "&page[after]=":                                {"invalid_page", "page[before]"},
		"/pages?filter[q]=hello&page[after]=":                                            {"invalid_page", "page[after]"},
		"/search?filter[q]=hello&page[after]=" + cursor:                                  {"invalid_page", "page[after]"}, // a list's cursor, not a search's
		"/pages?filter[trashed]=true&page[after]=x":                                      {"invalid_page", "page[after]"},
		"/contents/" + uuid.Nil.String() + "/content-blocks?page[before]=x":              {"invalid_page", "page[before]"},
		"/contents/" + uuid.Nil.String() + "/relationships/content-blocks?page[after]=x": {"invalid_page", "page[after]"},
		"/themes?filter[title][contains]=a":                                              {"unknown_parameter", "filter[title][contains]"},
		"/pages?filter[title][contains]=%FF":                                             {"invalid_character", "filter[title][contains]"}, // not UTF-8: was a 500 (SQLSTATE 22021)
		"/search?filter[q]=a%C3%28":                                                      {"invalid_character", "filter[q]"},
	} {
		d := e.do(http.MethodGet, path, nil)
		if d.Status != 400 || len(d.Errors) == 0 || d.Errors[0].Code != want.code || d.Errors[0].Source.Parameter != want.param {
			t.Errorf("GET %s = %d %s, want 400 %s at %s", path, d.Status, d.Raw, want.code, want.param)
		}
	}
}

// TestCursorPages: page[after] and page[before] walk a list larger than
// a page forward and back, in the list's order (its sort, then created-at
// and id), with first/last/prev/next links; another site's records never
// appear.
func TestCursorPages(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	o := s.editor(t, "editor@other.test")
	var drafts []string
	for _, title := range []string{"b", "a", "c", "a", "e", "d", "b"} { // repeated titles: ties broken by created-at, id
		_, draft := e.create("pages", map[string]any{"title": title, "slug": "p" + string(rune('0'+len(drafts)))}, nil)
		drafts = append(drafts, draft)
	}
	e.mustPublish(drafts...)
	op, od := o.page("a", "x", "")
	o.mustPublish(od)

	for _, sort := range []string{"", "&sort=title", "&sort=-title,-created-at", "&sort=-published-at"} {
		all := e.list("/pages?page[size]=100" + sort).ids
		if len(all) != 7 {
			t.Fatalf("GET /pages%s = %d pages", sort, len(all))
		}
		// Forward from the start.
		var fwd []string
		p := e.list("/pages?page[size]=3&page[after]=" + sort)
		if p.links["prev"] != "" || p.links["first"] == "" || p.links["last"] == "" {
			t.Errorf("first cursor page links %v", p.links)
		}
		for i := 0; ; i++ {
			fwd = append(fwd, p.ids...)
			if p.links["next"] == "" || i > 5 {
				break
			}
			p = e.list(relative(t, p.links["next"]))
			if p.links["prev"] == "" {
				t.Errorf("a page after another has no prev: %v", p.links)
			}
		}
		if !slices.Equal(fwd, all) {
			t.Errorf("sort %q forward = %v, want %v", sort, fwd, all)
		}
		// Back from the end.
		var back [][]string
		p = e.list(relative(t, p.links["last"]))
		for i := 0; ; i++ {
			back = append([][]string{p.ids}, back...)
			if p.links["prev"] == "" || i > 5 {
				break
			}
			p = e.list(relative(t, p.links["prev"]))
		}
		if got := slices.Concat(back...); !slices.Equal(got, all) || len(back[0]) != 1 || len(back[len(back)-1]) != 3 {
			t.Errorf("sort %q backward = %v, want %v in pages of 1, 3, 3", sort, back, all)
		}
		// next then prev comes back to the first page.
		first := e.list("/pages?page[size]=3&page[after]=" + sort)
		second := e.list(relative(t, first.links["next"]))
		if again := e.list(relative(t, second.links["prev"])); !slices.Equal(again.ids, first.ids) || !slices.Equal(second.ids, all[3:6]) {
			t.Errorf("sort %q: next %v then prev %v, want %v then %v", sort, second.ids, again.ids, all[3:6], first.ids)
		}
	}
	// The ends: a page that holds exactly the rest of the list has no next
	// (the list read one row past it and found none), and the first page
	// has no prev, either way round.
	if p := e.list("/pages?page[size]=7&page[after]="); len(p.ids) != 7 || p.links["next"] != "" || p.links["prev"] != "" {
		t.Errorf("the whole list as one page after the start: %v %v", p.ids, p.links)
	}
	if p := e.list("/pages?page[size]=7&page[before]="); len(p.ids) != 7 || p.links["next"] != "" || p.links["prev"] != "" {
		t.Errorf("the whole list as one page before the end: %v %v", p.ids, p.links)
	}
	if p := e.list("/pages?page[size]=6&page[after]="); len(p.ids) != 6 || p.links["next"] == "" || p.links["prev"] != "" {
		t.Errorf("six of seven: %v %v, want a next and no prev", p.ids, p.links)
	} else if last := e.list(relative(t, p.links["next"])); len(last.ids) != 1 || last.links["next"] != "" || last.links["prev"] == "" {
		t.Errorf("the last one: %v %v, want a prev and no next", last.ids, last.links)
	}
	// A cursor list of another kind: GET /revisions (one).
	if p := e.list("/revisions?page[size]=1&page[after]="); len(p.ids) != 1 || p.links["next"] != "" {
		t.Errorf("revisions by cursor = %v %v", p.ids, p.links)
	}
	// Every other list in a fixed order pages by cursor too, both ways
	// (GET /drafts: two pending, sorted by a column of its own).
	e.page("Pending one", "pending-1", "")
	e.page("Pending two", "pending-2", "")
	for _, path := range []string{"/drafts?sort=-updated-at", "/drafts", "/revisions?sort=publish-at", "/releases", "/preview-links", "/oauth-clients",
		"/themes", "/webhooks", "/memberships", "/assets", "/contents?sort=position", "/content-blocks"} {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		for _, cursor := range []string{"page[after]=", "page[before]="} {
			d := e.do(http.MethodGet, path+sep+"page[size]=1&"+cursor, nil)
			if d.Status == 403 {
				continue // the editor's role may not read it
			}
			p := e.list(path + sep + "page[size]=1&" + cursor)
			var seen []string
			for i := 0; i < 5; i++ {
				seen = append(seen, p.ids...)
				link := p.links["next"]
				if cursor == "page[before]=" {
					link = p.links["prev"]
				}
				if link == "" {
					break
				}
				p = e.list(relative(t, link))
			}
			if strings.HasPrefix(path, "/drafts") && len(seen) != 2 || slices.Contains(seen, od) {
				t.Errorf("GET %s by %s walked %v", path, cursor, seen)
			}
		}
	}

	checkGoneCursors(t, e, op)

	checkCursorPlan(t, s, e)
}

// checkGoneCursors: a cursor naming no row of the site (forged, another
// site's page, a page deleted since) answers an empty page without prev
// or next, both ways round and on descending orders too (where the
// missing row's keys, read NULL, used to let every row through: the
// first page again, with its links, so a client paging looped).
func checkGoneCursors(t *testing.T, e *editor, otherSitePage string) {
	t.Helper()
	gone, draft := e.page("Soon gone", "soon-gone", "")
	e.mustPublish(draft)
	del := e.do(http.MethodDelete, "/pages/"+gone, nil)
	if del.Status != 200 {
		t.Fatalf("DELETE /pages/%s = %d %s", gone, del.Status, del.Raw)
	}
	e.mustPublish(draftOf(t, del.resource(t)))
	cursorOf := func(id string) string { return base64.RawURLEncoding.EncodeToString([]byte("r:" + id)) }
	for _, id := range []string{uuid.NewString(), otherSitePage, gone} {
		for _, path := range []string{"/pages?", "/pages?sort=-title&", "/pages?sort=-created-at&", "/pages?sort=title&", "/assets?", "/webhooks?", "/revisions?"} {
			for _, dir := range []string{"page[after]=", "page[before]="} {
				url := path + "page[size]=2&" + dir + cursorOf(id)
				if e.do(http.MethodGet, url, nil).Status == 403 {
					continue // the editor's role may not read it
				}
				if p := e.list(url); len(p.ids) != 0 || p.links["next"] != "" || p.links["prev"] != "" {
					t.Errorf("GET %s (a cursor naming no row of the site) = %v %v, want an empty page without prev or next", url, p.ids, p.links)
				}
			}
		}
	}
}

// checkCursorPlan: a cursor page 9,000 rows deep in a site of 10,000 pages
// is an index range scan from the cursor (the row comparison of
// models.Keyset on pages_site_created_idx), not a read of the 9,000 rows
// before it; and the API serves that page with a next link.
func checkCursorPlan(t *testing.T, s *system, e *editor) {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO pages (id, site_id, page_type, slug, path, title, created_at, published_at)
		 SELECT gen_random_uuid(), ?, 'page', 'deep-' || n, '/deep-' || n, 'deep page ' || n, now() + n * interval '1 ms', now() FROM generate_series(1, 10000) n`,
		`ANALYZE pages`,
	} {
		if _, err := s.DB.ExecContext(ctx, q, s.Site.ID); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var id uuid.UUID
	if err := s.DB.NewRaw("SELECT id FROM pages WHERE site_id = ? AND published_at IS NOT NULL ORDER BY created_at, id OFFSET 9000 LIMIT 1", s.Site.ID).Scan(ctx, &id); err != nil {
		t.Fatal(err)
	}
	// The query drafts.ListViews runs for GET /pages?page[after]=….
	l := models.ListQuery{DefaultSort: models.OrderOldest, Limit: 20, Keyset: &models.Keyset{ID: id, SiteID: s.Site.ID}}
	sel := l.Apply(s.DB.NewSelect().TableExpr("pages AS t").ColumnExpr("to_jsonb(t)").Where("t.site_id = ?", s.Site.ID).Where("t.published_at IS NOT NULL"))
	var plan []string
	if err := s.DB.NewRaw("EXPLAIN ANALYZE "+sel.String()).Scan(ctx, &plan); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	if !strings.Contains(text, "Index Scan using pages_site_created_idx on pages t") || !strings.Contains(text, "ROW(created_at, id) > ROW(") ||
		strings.Contains(text, "Rows Removed by Filter: 9") {
		t.Errorf("a cursor page 9,000 rows deep is no index range scan:\n%s", text)
	}
	cursor := base64.RawURLEncoding.EncodeToString([]byte("r:" + id.String())) // as links.next writes it
	if p := e.list("/pages?page[size]=20&page[after]=" + cursor); len(p.ids) != 20 || p.links["next"] == "" || p.links["prev"] == "" {
		t.Errorf("GET /pages 9,000 deep: %d pages, links %v", len(p.ids), p.links)
	}
}
