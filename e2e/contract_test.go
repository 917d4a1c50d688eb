package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/testsupport"
)

// rawRequest sends a request with the given headers and returns the
// response with its body, for plain-JSON and HTML endpoints.
func (s *system) rawRequest(t *testing.T, method, url string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := s.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// TestAssetTypesNeedsABearerToken: GET /asset-types is behind the token
// like every endpoint of the spec but /oauth/token (issue 11 item 1), while
// health, readiness, discovery, JWKS and the authorize page stay public.
func TestAssetTypesNeedsABearerToken(t *testing.T) {
	t.Parallel()
	s := start(t)
	for _, auth := range []string{"", "Bearer ", "Bearer not-a-token", "Basic ZWRpdG9yOnB3"} {
		h := []string{"Accept", "application/json"}
		if auth != "" {
			h = append(h, "Authorization", auth)
		}
		resp, body := s.rawRequest(t, http.MethodGet, s.URL+"/asset-types", h...)
		if resp.StatusCode != 401 {
			t.Fatalf("GET /asset-types with Authorization %q = %d, want 401: %s", auth, resp.StatusCode, body)
		}
		if got := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
			t.Errorf("WWW-Authenticate = %q, want a Bearer challenge", got)
		}
		if strings.Contains(string(body), "asset_image") {
			t.Errorf("the 401 leaks the table: %s", body)
		}
		testsupport.ValidateJSONAPI(t, body) // a JSON:API error document, as everywhere
	}
	// With a token: the plain-JSON table, not for shared caches.
	token := s.token(t, "editor@demo.test")
	resp, body := s.rawRequest(t, http.MethodGet, s.URL+"/asset-types", "Authorization", "Bearer "+token)
	var table map[string]json.RawMessage
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || json.Unmarshal(body, &table) != nil || table["image"] == nil {
		t.Fatalf("GET /asset-types with a token = %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if cc := resp.Header.Get("Cache-Control"); strings.Contains(cc, "public") {
		t.Errorf("Cache-Control = %q: a shared cache could hand the table to a caller without a token", cc)
	}

	// The public endpoints answer without a token.
	resp, body = s.rawRequest(t, http.MethodGet, s.URL+"/.well-known/openid-configuration")
	var disc struct {
		JWKS      string `json:"jwks_uri"`
		Authorize string `json:"authorization_endpoint"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &disc) != nil || disc.JWKS == "" {
		t.Fatalf("discovery without a token = %d %s", resp.StatusCode, body)
	}
	for _, u := range []string{s.URL + "/healthz", s.URL + "/readyz", disc.JWKS} {
		if resp, body := s.rawRequest(t, http.MethodGet, u); resp.StatusCode != 200 {
			t.Errorf("GET %s without a token = %d, want 200 (public): %s", u, resp.StatusCode, body)
		}
	}
	// The authorize endpoint answers the browser (an error page or a
	// redirect to the login form for this unknown client), never 401.
	noRedirect := *s.http
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, _ := http.NewRequest(http.MethodGet, disc.Authorize+"?client_id=nobody&response_type=code&scope=openid&redirect_uri=urn:ietf:wg:oauth:2.0:oob", nil)
	if resp, err := noRedirect.Do(req); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
		if resp.StatusCode == 401 || resp.Header.Get("WWW-Authenticate") != "" {
			t.Errorf("GET /oauth/authorize without a token = %d with a bearer challenge; it is public", resp.StatusCode)
		}
	}
}

// toManyOf fails unless the resource's relationship name is an array
// (never null, never left out: issue 24 item 3), and returns the ids of
// its linkage.
func toManyOf(t *testing.T, r resource, name string) (ids []string, present bool) {
	t.Helper()
	rel, ok := r.Relationships[name]
	if !ok {
		t.Fatalf("%s %s has no %s relationship", r.Type, r.ID, name)
	}
	if rel.Links.Self == "" || rel.Links.Related == "" {
		t.Errorf("%s %s: %s lacks links.self or links.related", r.Type, r.ID, name)
	}
	if rel.Data == nil {
		t.Errorf("%s %s: %s has no data", r.Type, r.ID, name)
		return nil, false
	}
	var idents []struct{ Type, ID string }
	if err := json.Unmarshal(rel.Data, &idents); err != nil || idents == nil {
		t.Fatalf("%s %s: %s.data = %s, want an array", r.Type, r.ID, name, rel.Data)
	}
	for _, i := range idents {
		ids = append(ids, i.ID)
	}
	return ids, true
}

func resources(t *testing.T, d *doc) []resource {
	t.Helper()
	var rs []resource
	if err := json.Unmarshal(d.Data, &rs); err != nil {
		t.Fatalf("data is not an array of resources: %s", d.Raw)
	}
	return rs
}

func includedOf(t *testing.T, d *doc) []resource {
	t.Helper()
	var body struct{ Included []resource }
	if err := json.Unmarshal(d.Raw, &body); err != nil {
		t.Fatal(err)
	}
	return body.Included
}

// nullToMany names the first relationship of d's resources (data and
// included) that the schema declares to-many (jsonapi.Relationships) but
// that renders data null or without data, "" when there is none. A to-one
// relationship's null (a draft in no release) is linkage as JSON:API
// defines it.
func nullToMany(t *testing.T, d *doc) string {
	t.Helper()
	var rs []resource
	if d.Status < 300 {
		if strings.HasPrefix(strings.TrimSpace(string(d.Data)), "[") {
			rs = resources(t, d)
		} else {
			rs = []resource{d.resource(t)}
		}
	}
	for _, r := range append(rs, includedOf(t, d)...) {
		for name, rel := range r.Relationships {
			if !jsonapi.Relationships[r.Type][name].ToMany {
				continue
			}
			if !strings.HasPrefix(strings.TrimSpace(string(rel.Data)), "[") {
				return r.Type + " " + r.ID + " " + name
			}
		}
	}
	return ""
}

// TestToManyLinkageIsNeverNull: drafts (in GET /drafts, in included of a
// drafted read, alone) and revisions (in GET /revisions, in a 202) render
// their to-many relationships as arrays, never "data": null
// (issue 11 item 2); call's ValidateJSONAPI checks the same for every
// response of every e2e test.
func TestToManyLinkageIsNeverNull(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	id, draft := e.page("About", "about", "")
	draftRels := []string{"publication-dependencies", "reversion-dependencies", "hyperlinks"}

	list := e.do(http.MethodGet, "/drafts", nil)
	if list.Status != 200 || nullToMany(t, list) != "" {
		t.Fatalf("GET /drafts = %d %s", list.Status, list.Raw)
	}
	for _, r := range resources(t, list) {
		for _, name := range draftRels {
			toManyOf(t, r, name)
		}
	}
	read := e.do(http.MethodGet, "/pages/"+id+"?include=draft", nil)
	inc := includedOf(t, read)
	if len(inc) != 1 || inc[0].ID != draft || nullToMany(t, read) != "" {
		t.Fatalf("GET /pages/:id?include=draft = %s", read.Raw)
	}
	for _, name := range draftRels {
		toManyOf(t, inc[0], name)
	}
	// GET /drafts/:id computes the linkage: arrays, [] when empty.
	one := e.do(http.MethodGet, "/drafts/"+draft, nil).resource(t)
	for _, name := range draftRels {
		if ids, present := toManyOf(t, one, name); !present || len(ids) != 0 {
			t.Errorf("GET /drafts/:id %s = %v (present %v), want []", name, ids, present)
		}
	}

	e.mustPublish(draft)
	revs := e.do(http.MethodGet, "/revisions", nil)
	for _, r := range resources(t, revs) {
		toManyOf(t, r, "versions")
		if ids, present := toManyOf(t, r, "drafts"); !present || len(ids) != 1 {
			t.Errorf("revision drafts = %v", ids)
		}
	}
	if where := nullToMany(t, revs); where != "" {
		t.Errorf("GET /revisions has null to-many linkage at %s: %s", where, revs.Raw)
	}
}

// TestReferenceToAMissingRecordIs404: a create or update naming a record the
// caller's site does not have (no such id, not a UUID, or another site's)
// answers 404 with source.pointer at the identifier's id (issue 11 item 3;
// themes, layouts, theme assets and the site's theme are covered in
// themes_test.go, revisions in TestRevisionErrors). A record that exists but
// may not be referenced stays 422.
func TestReferenceToAMissingRecordIs404(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	o := s.editor(t, "editor@other.test")
	theirPage, _ := o.page("Theirs", "theirs", "")
	theirContent, _ := o.create("contents", map[string]any{"title": "Theirs"}, map[string]any{"page": ref("pages", theirPage)})
	page, pageDraft := e.page("Mine", "mine", "")
	content, contentDraft := e.create("contents", map[string]any{"title": "Main"}, map[string]any{"page": ref("pages", page)})
	block, blockDraft := e.create("content-blocks", map[string]any{"var-name": "intro"}, map[string]any{"content": ref("contents", content)})
	e.mustPublish(pageDraft, contentDraft, blockDraft)
	const none = "00000000-0000-4000-8000-000000000000"

	body := func(typ, id string, attrs map[string]any, rel, relType, relID string) map[string]any {
		data := map[string]any{"type": typ, "attributes": attrs, "relationships": map[string]any{rel: ref(relType, relID)}}
		if id != "" {
			data["id"] = id
		}
		return map[string]any{"data": data}
	}
	cases := []struct {
		name, method, path string
		body               map[string]any
		pointer            string
	}{
		{"page under no page", "POST", "/pages", body("pages", "", map[string]any{"title": "X", "slug": "x"}, "parent", "pages", none), "/data/relationships/parent/data/id"},
		{"page under another site's page", "POST", "/pages", body("pages", "", map[string]any{"title": "X", "slug": "x"}, "parent", "pages", theirPage), "/data/relationships/parent/data/id"},
		{"page under a non-UUID", "POST", "/pages", body("pages", "", map[string]any{"title": "X", "slug": "x"}, "parent", "pages", "nope"), "/data/relationships/parent/data/id"},
		{"page with no layout", "POST", "/pages", body("pages", "", map[string]any{"title": "X", "slug": "x"}, "layout", "layouts", none), "/data/relationships/layout/data/id"},
		{"page moved under no page", "PATCH", "/pages/" + page, body("pages", page, map[string]any{}, "parent", "pages", none), "/data/relationships/parent/data/id"},
		{"page given another site's layout", "PATCH", "/pages/" + page, body("pages", page, map[string]any{}, "layout", "layouts", theirPage), "/data/relationships/layout/data/id"},
		{"content on no page", "POST", "/contents", body("contents", "", map[string]any{"title": "X"}, "page", "pages", none), "/data/relationships/page/data/id"},
		{"content on another site's page", "POST", "/contents", body("contents", "", map[string]any{"title": "X"}, "page", "pages", theirPage), "/data/relationships/page/data/id"},
		{"content moved to no page", "PATCH", "/contents/" + content, body("contents", content, map[string]any{}, "page", "pages", none), "/data/relationships/page/data/id"},
		{"block in no content", "POST", "/content-blocks", body("content-blocks", "", map[string]any{"var-name": "x"}, "content", "contents", none), "/data/relationships/content/data/id"},
		{"block in another site's content", "POST", "/content-blocks", body("content-blocks", "", map[string]any{"var-name": "x"}, "content", "contents", theirContent), "/data/relationships/content/data/id"},
		{"block moved to another site's content", "PATCH", "/content-blocks/" + block, body("content-blocks", block, map[string]any{}, "content", "contents", theirContent), "/data/relationships/content/data/id"},
		{"block with no asset", "PATCH", "/content-blocks/" + block, body("content-blocks", block, map[string]any{}, "asset", "assets", none), "/data/relationships/asset/data/id"},
	}
	for _, tc := range cases {
		d := e.do(tc.method, tc.path, tc.body)
		if d.Status != 404 || len(d.Errors) != 1 || d.Errors[0].Code != "not_found" || d.Errors[0].Source.Pointer != tc.pointer {
			t.Errorf("%s: %s %s = %d %s, want 404 not_found at %s", tc.name, tc.method, tc.path, d.Status, d.Raw, tc.pointer)
		}
	}
	// Nothing was drafted by the refused writes.
	if d := e.do(http.MethodGet, "/drafts", nil); !strings.Contains(string(d.Raw), `"total":0`) {
		t.Errorf("drafts after refused writes: %s", d.Raw)
	}

	// A page that exists but is drafted for deletion may not be a parent: 422.
	if d := e.do(http.MethodDelete, "/pages/"+page, nil); d.Status != 200 {
		t.Fatalf("DELETE /pages/:id = %d %s", d.Status, d.Raw)
	}
	d := e.do(http.MethodPost, "/pages", body("pages", "", map[string]any{"title": "X", "slug": "x"}, "parent", "pages", page))
	if d.Status != 422 || len(d.Errors) != 1 || d.Errors[0].Code != "drafted_for_deletion" || d.Errors[0].Source.Pointer != "/data/relationships/parent/data" {
		t.Errorf("page under a page drafted for deletion = %d %s, want 422 drafted_for_deletion", d.Status, d.Raw)
	}
}

// ids lists the ids of resources (or identifiers) in data.
func idsOf(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var xs []struct{ Type, ID string }
	if err := json.Unmarshal(raw, &xs); err != nil || xs == nil {
		t.Fatalf("not an array: %s", raw)
	}
	out := []string{}
	for _, x := range xs {
		out = append(out, x.ID)
	}
	return out
}

// linksTo tells whether a hyperlink included in d links to the page.
func linksTo(t *testing.T, d *doc, page string) bool {
	t.Helper()
	for _, r := range includedOf(t, d) {
		if r.Type == "hyperlinks" && string(r.Relationships["linked-to"].Data) == `{"type":"pages","id":"`+page+`"}` {
			return true
		}
	}
	return false
}

func typesOf(rs []resource) map[string]int {
	out := map[string]int{}
	for _, r := range rs {
		out[r.Type]++
	}
	return out
}

// TestContentBlocksAndHyperlinksRelationships: contents have a read-only
// content-blocks relationship and content blocks a read-only hyperlinks
// one (DESIGN.md §3; issue 11 item 4), with related and relationship
// endpoints, include, live and drafted (include=draft) views, paging, and
// another site's records as 404.
func TestContentBlocksAndHyperlinksRelationships(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	o := s.editor(t, "editor@other.test")
	about, aboutDraft := e.page("About", "about", "")
	home, homeDraft := e.create("pages", map[string]any{"title": "Home", "slug": "", "page-type": "home"}, nil)
	content, contentDraft := e.create("contents", map[string]any{"title": "Main"}, map[string]any{"page": ref("pages", home)})
	block := func(name string, pos int, body string) (string, string) {
		return e.create("content-blocks", map[string]any{"var-name": name, "position": pos, "data-type": "html", "body": body},
			map[string]any{"content": ref("contents", content)})
	}
	b1, b1Draft := block("first", 1, `<a href="/about">about</a>`)
	b2, b2Draft := block("second", 2, `<p>no links</p>`)
	e.mustPublish(aboutDraft, homeDraft, contentDraft, b1Draft, b2Draft)
	// Drafted: a new block, and the second moved first and linking /about.
	b3, b3Draft := block("third", 3, `<a href="/about#x">more</a>`)
	upd := e.do(http.MethodPatch, "/content-blocks/"+b2, map[string]any{"data": map[string]any{"type": "content-blocks", "id": b2,
		"attributes": map[string]any{"position": 0, "body": `<a href="/about">moved</a>`}}})
	if upd.Status != 200 {
		t.Fatalf("PATCH block = %d %s", upd.Status, upd.Raw)
	}
	b2Draft = draftOf(t, upd.resource(t))

	// Without include: the linkage too (issue 24 item 3), and links
	// pointing at the endpoints.
	c := e.do(http.MethodGet, "/contents/"+content, nil).resource(t)
	if ids, present := toManyOf(t, c, "content-blocks"); !present || strings.Join(ids, ",") != b1+","+b2 {
		t.Errorf("content-blocks linkage without include = %v (present %v), want [%s %s]", ids, present, b1, b2)
	}
	if l := c.Relationships["content-blocks"].Links; l.Self != s.URL+"/contents/"+content+"/relationships/content-blocks" || l.Related != s.URL+"/contents/"+content+"/content-blocks" {
		t.Errorf("content-blocks links = %+v", l)
	}
	blk := e.do(http.MethodGet, "/content-blocks/"+b1, nil).resource(t)
	if l := blk.Relationships["hyperlinks"].Links; l.Self != s.URL+"/content-blocks/"+b1+"/relationships/hyperlinks" || l.Related != s.URL+"/content-blocks/"+b1+"/hyperlinks" {
		t.Errorf("hyperlinks links = %+v", l)
	}

	// Live: the published blocks in position order.
	d := e.do(http.MethodGet, "/contents/"+content+"?include=content-blocks", nil)
	if ids, _ := toManyOf(t, d.resource(t), "content-blocks"); strings.Join(ids, ",") != b1+","+b2 {
		t.Errorf("live content-blocks = %v, want [%s %s]", ids, b1, b2)
	}
	if got := typesOf(includedOf(t, d)); got["content-blocks"] != 2 || len(got) != 1 {
		t.Errorf("included = %v: %s", got, d.Raw)
	}
	for _, path := range []string{"/contents/" + content + "/content-blocks", "/contents/" + content + "/relationships/content-blocks"} {
		d := e.do(http.MethodGet, path, nil)
		if d.Status != 200 || strings.Join(idsOf(t, d.Data), ",") != b1+","+b2 || !strings.Contains(string(d.Raw), `"total":2`) {
			t.Errorf("GET %s = %d %s", path, d.Status, d.Raw)
		}
	}
	d = e.do(http.MethodGet, "/contents/"+content+"/relationships/content-blocks?page[size]=1&page[number]=2", nil)
	if ids := idsOf(t, d.Data); len(ids) != 1 || ids[0] != b2 || !strings.Contains(string(d.Raw), `"first":`) {
		t.Errorf("second page of one = %s", d.Raw)
	}
	list := e.do(http.MethodGet, "/contents?include=content-blocks", nil)
	if rs := resources(t, list); len(rs) != 1 || len(includedOf(t, list)) != 2 {
		t.Errorf("GET /contents?include=content-blocks = %s", list.Raw)
	} else if ids, _ := toManyOf(t, rs[0], "content-blocks"); len(ids) != 2 {
		t.Errorf("listed content's blocks = %v", ids)
	}

	// Drafted: the new block too, in drafted order; the endpoints include
	// the drafts the drafted state comes from.
	d = e.do(http.MethodGet, "/contents/"+content+"?include=content-blocks,draft", nil)
	if ids, _ := toManyOf(t, d.resource(t), "content-blocks"); strings.Join(ids, ",") != b2+","+b1+","+b3 {
		t.Errorf("drafted content-blocks = %v, want [%s %s %s]", ids, b2, b1, b3)
	}
	d = e.do(http.MethodGet, "/contents/"+content+"/content-blocks?include=draft", nil)
	inc := includedOf(t, d)
	if strings.Join(idsOf(t, d.Data), ",") != b2+","+b1+","+b3 || len(inc) != 2 || typesOf(inc)["drafts"] != 2 {
		t.Errorf("drafted related blocks = %s", d.Raw)
	}
	if rs := resources(t, d); len(rs) == 3 && rs[0].Attributes["position"] != float64(0) {
		t.Errorf("drafted block position = %v, want 0", rs[0].Attributes["position"])
	}

	// Hyperlinks: the live body's, or the drafted body's.
	d = e.do(http.MethodGet, "/content-blocks/"+b1+"?include=hyperlinks", nil)
	if ids, _ := toManyOf(t, d.resource(t), "hyperlinks"); len(ids) != 1 || !linksTo(t, d, about) {
		t.Errorf("hyperlinks of the live block = %s", d.Raw)
	}
	if d := e.do(http.MethodGet, "/content-blocks/"+b2+"/hyperlinks", nil); d.Status != 200 || len(idsOf(t, d.Data)) != 0 {
		t.Errorf("live hyperlinks of the second block = %s", d.Raw)
	}
	d = e.do(http.MethodGet, "/content-blocks/"+b2+"/hyperlinks?include=draft", nil)
	if inc := includedOf(t, d); len(idsOf(t, d.Data)) != 1 || len(inc) != 1 || inc[0].ID != b2Draft {
		t.Errorf("drafted hyperlinks of the second block = %s", d.Raw)
	}
	if d := e.do(http.MethodGet, "/content-blocks/"+b2+"/relationships/hyperlinks", nil); d.Status != 200 || len(idsOf(t, d.Data)) != 0 {
		t.Errorf("live hyperlink linkage of the second block = %s", d.Raw)
	}
	if d := e.do(http.MethodGet, "/content-blocks/"+b3+"/hyperlinks", nil); d.Status != 404 {
		t.Errorf("hyperlinks of an unpublished block, live = %d, want 404", d.Status)
	}
	d = e.do(http.MethodGet, "/content-blocks/"+b3+"/relationships/hyperlinks?include=draft", nil)
	if inc := includedOf(t, d); len(idsOf(t, d.Data)) != 1 || len(inc) != 1 || inc[0].ID != b3Draft {
		t.Errorf("drafted hyperlink linkage of the new block = %s", d.Raw)
	}

	// Another site's records are not found; include is checked.
	for _, path := range []string{"/contents/" + content + "/content-blocks", "/contents/" + content + "/relationships/content-blocks",
		"/content-blocks/" + b1 + "/hyperlinks", "/content-blocks/" + b1 + "/relationships/hyperlinks?include=draft"} {
		if d := o.do(http.MethodGet, path, nil); d.Status != 404 {
			t.Errorf("another site's GET %s = %d %s", path, d.Status, d.Raw)
		}
	}
	if d := e.do(http.MethodGet, "/pages/"+home+"?include=content-blocks", nil); d.Status != 400 || d.Errors[0].Source.Parameter != "include" {
		t.Errorf("include=content-blocks on a page = %d %s", d.Status, d.Raw)
	}
	if d := e.do(http.MethodGet, "/contents/"+content+"/content-blocks?page[size]=101", nil); d.Status != 400 {
		t.Errorf("page[size]=101 = %d", d.Status)
	}
}

// TestIncludedContentBlocksArePaged: include lists at most 100 blocks per
// content; links.next on the relationship pages on through its
// relationship endpoint.
func TestIncludedContentBlocksArePaged(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	page, _ := e.page("Long", "long", "")
	content, _ := e.create("contents", map[string]any{"title": "Many"}, map[string]any{"page": ref("pages", page)})
	for i := range 101 {
		e.create("content-blocks", map[string]any{"var-name": fmt.Sprintf("b%03d", i), "position": i}, map[string]any{"content": ref("contents", content)})
	}
	d := e.do(http.MethodGet, "/contents/"+content+"?include=content-blocks,draft", nil)
	r := d.resource(t)
	ids, _ := toManyOf(t, r, "content-blocks")
	var raw struct {
		Relationships map[string]struct{ Links struct{ Next string } }
	}
	_ = json.Unmarshal(d.Data, &raw)
	nextURL := raw.Relationships["content-blocks"].Links.Next
	if len(ids) != 100 || typesOf(includedOf(t, d))["content-blocks"] != 100 || nextURL == "" {
		t.Fatalf("included blocks = %d, next %q", len(ids), nextURL)
	}
	next := e.do(http.MethodGet, strings.TrimPrefix(nextURL, s.URL), nil)
	if rest := idsOf(t, next.Data); next.Status != 200 || len(rest) != 1 || slices.Contains(ids, rest[0]) || !strings.Contains(string(next.Raw), `"total":101`) {
		t.Errorf("GET links.next = %d %s", next.Status, next.Raw)
	}
}
