package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pressroom/pressroom/config"
)

// Themes, layouts, theme assets and publishing (docs/themes.md). Helpers
// here carry a thm prefix so they cannot collide with other features' tests.

// thmRes is a resource object, meta included.
type thmRes struct {
	Type          string
	ID            string
	Attributes    map[string]any
	Relationships map[string]struct {
		Data  json.RawMessage
		Links struct{ Self, Related string }
	}
	Links struct{ Self string }
	Meta  map[string]any
}

// thmDoc is a decoded response.
type thmDoc struct {
	*doc
	Body struct {
		Data     json.RawMessage
		Included *[]thmRes
		Links    map[string]string
		Meta     map[string]any
	}
}

type thmIdent struct{ Type, ID string }

func (d *thmDoc) one(t *testing.T) thmRes {
	t.Helper()
	var r thmRes
	if err := json.Unmarshal(d.Body.Data, &r); err != nil || r.ID == "" {
		t.Fatalf("data is not one resource: %d %s", d.Status, d.Raw)
	}
	return r
}

func (d *thmDoc) many(t *testing.T) []thmRes {
	t.Helper()
	var rs []thmRes
	if err := json.Unmarshal(d.Body.Data, &rs); err != nil {
		t.Fatalf("data is not a collection: %d %s", d.Status, d.Raw)
	}
	return rs
}

func (d *thmDoc) included(t *testing.T) []thmRes {
	t.Helper()
	if d.Body.Included == nil {
		t.Fatalf("included is missing: %s", d.Raw)
	}
	return *d.Body.Included
}

// thmIDs lists the ids of resources.
func thmIDs(rs []thmRes) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// thmLinkage decodes relationship data: null, one identifier or many.
func thmLinkage(t *testing.T, raw json.RawMessage) []thmIdent {
	t.Helper()
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "null":
		return nil
	case strings.HasPrefix(s, "["):
		var out []thmIdent
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatal(err)
		}
		return out
	default:
		var one thmIdent
		if err := json.Unmarshal(raw, &one); err != nil {
			t.Fatal(err)
		}
		return []thmIdent{one}
	}
}

func thmLinkIDs(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var out []string
	for _, id := range thmLinkage(t, raw) {
		out = append(out, id.ID)
	}
	return out
}

// thmCall sends a JSON:API request with extra headers (name, value pairs),
// validates the response document and decodes it.
func (s *system) thmCall(t *testing.T, token, method, path string, body any, headers ...string) *thmDoc {
	t.Helper()
	d := &thmDoc{doc: s.callWith(t, token, method, path, body, headers...)}
	if len(d.Raw) > 0 {
		if err := json.Unmarshal(d.Raw, &d.Body); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
	return d
}

func (s *system) thmGet(t *testing.T, token, path string, headers ...string) *thmDoc {
	t.Helper()
	return s.thmCall(t, token, http.MethodGet, path, nil, headers...)
}

// thmWant fails unless d has the status; it returns d for chaining.
func thmWant(t *testing.T, d *thmDoc, status int, what string) *thmDoc {
	t.Helper()
	if d.Status != status {
		t.Fatalf("%s = %d, want %d: %s", what, d.Status, status, d.Raw)
	}
	return d
}

func thmData(typ string, attrs map[string]any, rels map[string]any) map[string]any {
	data := map[string]any{"type": typ}
	if attrs != nil {
		data["attributes"] = attrs
	}
	if rels != nil {
		data["relationships"] = rels
	}
	return map[string]any{"data": data}
}

func thmRel(typ, id string) map[string]any {
	return map[string]any{"data": map[string]any{"type": typ, "id": id}}
}

func (s *system) thmTheme(t *testing.T, token, title string) thmRes {
	t.Helper()
	d := s.thmCall(t, token, http.MethodPost, "/themes", thmData("themes", map[string]any{"title": title}, nil))
	return thmWant(t, d, 201, "POST /themes").one(t)
}

func (s *system) thmLayout(t *testing.T, token, themeID, fileName string) thmRes {
	t.Helper()
	d := s.thmCall(t, token, http.MethodPost, "/layouts", thmData("layouts",
		map[string]any{"title": "Layout " + fileName, "file-name": fileName, "content": "<main>{{ content }}</main> " + fileName},
		map[string]any{"theme": thmRel("themes", themeID)}))
	return thmWant(t, d, 201, "POST /layouts").one(t)
}

func (s *system) thmLink(t *testing.T, token, themeID, assetID, path string) thmRes {
	t.Helper()
	d := s.thmCall(t, token, http.MethodPost, "/theme-assets", thmData("theme-assets", map[string]any{"path": path},
		map[string]any{"theme": thmRel("themes", themeID), "asset": thmRel("assets", assetID)}))
	return thmWant(t, d, 201, "POST /theme-assets").one(t)
}

func (s *system) thmPublish(t *testing.T, token, themeID string, headers ...string) *thmDoc {
	t.Helper()
	return s.thmCall(t, token, http.MethodPatch, "/site", thmData("sites", nil, map[string]any{"theme": thmRel("themes", themeID)}), headers...)
}

// thmAsset uploads a small PNG through the real pipeline and returns its asset id.
func (s *system) thmAsset(t *testing.T, token, name string) string {
	t.Helper()
	up := s.ingest(t, token, name, "image/png", pngFile(t, 8, 8))
	if up.Attributes["status"] != "finished" {
		t.Fatalf("upload = %v", up.Attributes)
	}
	var ref struct{ ID string }
	_ = json.Unmarshal(up.Relationships["asset"].Data, &ref)
	return ref.ID
}

func thmVersion(r thmRes) int {
	v, _ := r.Meta["version"].(float64)
	return int(v)
}

func thmETag(id string, version int) string { return fmt.Sprintf(`"%s.%d"`, id, version) }

// ---------------------------------------------------------------------------

func TestThemesCreateReadUpdate(t *testing.T) {
	t.Parallel()
	s := start(t)
	token := s.token(t, "editor@demo.test")
	me := s.thmGet(t, token, "/users/me").one(t)

	d := thmWant(t, s.thmCall(t, token, http.MethodPost, "/themes",
		thmData("themes", map[string]any{"title": "  Spring  ", "description": "Light\nand airy"}, nil)), 201, "POST /themes")
	th := d.one(t)
	if d.Header.Get("Location") != th.Links.Self || !strings.HasPrefix(th.Links.Self, s.URL+"/themes/") {
		t.Errorf("Location %q, links.self %q", d.Header.Get("Location"), th.Links.Self)
	}
	if d.Header.Get("ETag") != thmETag(th.ID, 1) || thmVersion(th) != 1 {
		t.Errorf("ETag %q, meta %v", d.Header.Get("ETag"), th.Meta)
	}
	a := th.Attributes
	if th.Type != "themes" || a["title"] != "Spring" || a["description"] != "Light\nand airy" || a["published-at"] != nil ||
		a["created-at"] != a["updated-at"] || len(a["created-at"].(string)) != len("2026-11-21T12:04:05.123Z") {
		t.Errorf("created theme = %s", d.Raw)
	}
	if got := thmLinkage(t, th.Relationships["user"].Data); len(got) != 1 || got[0] != (thmIdent{"users", me.ID}) {
		t.Errorf("user = %v, want %s", got, me.ID)
	}
	for _, rel := range []string{"layouts", "theme-assets"} {
		r := th.Relationships[rel]
		if string(r.Data) != "[]" || r.Links.Self != th.Links.Self+"/relationships/"+rel || r.Links.Related != th.Links.Self+"/"+rel {
			t.Errorf("%s relationship = %+v", rel, r)
		}
	}

	got := thmWant(t, s.thmGet(t, token, "/themes/"+th.ID), 200, "GET /themes/:id")
	if got.one(t).Attributes["title"] != "Spring" || got.Header.Get("ETag") != thmETag(th.ID, 1) {
		t.Errorf("GET = %s", got.Raw)
	}

	// PATCH changes what is sent; version and ETag move on.
	p := thmWant(t, s.thmCall(t, token, http.MethodPatch, "/themes/"+th.ID,
		map[string]any{"data": map[string]any{"type": "themes", "id": th.ID, "attributes": map[string]any{"title": "Summer"}}}), 200, "PATCH /themes/:id")
	pt := p.one(t)
	if pt.Attributes["title"] != "Summer" || pt.Attributes["description"] != "Light\nand airy" || thmVersion(pt) != 2 || p.Header.Get("ETag") != thmETag(th.ID, 2) {
		t.Errorf("PATCH = %s (ETag %s)", p.Raw, p.Header.Get("ETag"))
	}
	if pt.Attributes["updated-at"].(string) < pt.Attributes["created-at"].(string) {
		t.Errorf("updated-at before created-at: %v", pt.Attributes)
	}

	// A PATCH that sends nothing changes nothing, not even the version.
	same := thmWant(t, s.thmCall(t, token, http.MethodPatch, "/themes/"+th.ID,
		map[string]any{"data": map[string]any{"type": "themes", "id": th.ID}}), 200, "empty PATCH")
	if thmVersion(same.one(t)) != 2 {
		t.Errorf("empty PATCH moved the version: %s", same.Raw)
	}

	list := thmWant(t, s.thmGet(t, token, "/themes"), 200, "GET /themes")
	if ids := thmIDs(list.many(t)); !slices.Equal(ids, []string{th.ID}) || list.Body.Meta["total"] != float64(1) {
		t.Errorf("GET /themes = %s", list.Raw)
	}
	for _, l := range []string{"self", "first", "last"} {
		if !strings.HasPrefix(list.Body.Links[l], s.URL+"/themes?") {
			t.Errorf("links.%s = %q", l, list.Body.Links[l])
		}
	}

	// The user relationship's links.
	u := thmWant(t, s.thmGet(t, token, "/themes/"+th.ID+"/user"), 200, "GET /themes/:id/user")
	if u.one(t).ID != me.ID || u.one(t).Type != "users" {
		t.Errorf("related user = %s", u.Raw)
	}
	ul := thmWant(t, s.thmGet(t, token, "/themes/"+th.ID+"/relationships/user"), 200, "relationships/user")
	if ids := thmLinkIDs(t, ul.Body.Data); !slices.Equal(ids, []string{me.ID}) || ul.Body.Links["self"] != th.Links.Self+"/relationships/user" {
		t.Errorf("relationships/user = %s", ul.Raw)
	}
	if d := s.thmGet(t, token, "/themes/"+th.ID+"?include=user"); d.Status != 200 || len(d.included(t)) != 1 || d.included(t)[0].ID != me.ID {
		t.Errorf("include=user = %s", d.Raw)
	}
}

func TestThemeValidation(t *testing.T) {
	t.Parallel()
	s := start(t)
	token, other := s.token(t, "editor@demo.test"), s.token(t, "editor@other.test")
	theirs := s.thmTheme(t, other, "Theirs")
	mine := s.thmTheme(t, token, "Mine")
	long := strings.Repeat("é", 201)

	post := []struct {
		name    string
		data    map[string]any
		status  int
		pointer string
	}{
		{"no title", map[string]any{"type": "themes", "attributes": map[string]any{"description": "x"}}, 422, "/data/attributes/title"},
		{"no attributes", map[string]any{"type": "themes"}, 422, "/data/attributes/title"},
		{"blank title", map[string]any{"type": "themes", "attributes": map[string]any{"title": " \t "}}, 422, "/data/attributes/title"},
		{"null title", map[string]any{"type": "themes", "attributes": map[string]any{"title": nil}}, 422, "/data/attributes/title"},
		{"title too long", map[string]any{"type": "themes", "attributes": map[string]any{"title": long}}, 422, "/data/attributes/title"},
		{"description too long", map[string]any{"type": "themes", "attributes": map[string]any{"title": "T", "description": strings.Repeat("d", 2001)}}, 422, "/data/attributes/description"},
		{"published-at is read-only", map[string]any{"type": "themes", "attributes": map[string]any{"title": "T", "published-at": "2026-01-01T00:00:00.000Z"}}, 422, "/data/attributes/published-at"},
		{"created-at is read-only", map[string]any{"type": "themes", "attributes": map[string]any{"title": "T", "created-at": nil}}, 422, "/data/attributes/created-at"},
		{"unknown source", map[string]any{"type": "themes", "attributes": map[string]any{"title": "T"},
			"relationships": map[string]any{"source": thmRel("themes", "00000000-0000-4000-8000-000000000000")}}, 404, "/data/relationships/source/data/id"},
		{"source not a uuid", map[string]any{"type": "themes", "attributes": map[string]any{"title": "T"},
			"relationships": map[string]any{"source": thmRel("themes", "nope")}}, 404, "/data/relationships/source/data/id"},
		{"another site's source", map[string]any{"type": "themes", "attributes": map[string]any{"title": "T"},
			"relationships": map[string]any{"source": thmRel("themes", theirs.ID)}}, 404, "/data/relationships/source/data/id"},
		{"source of the wrong type", map[string]any{"type": "themes", "attributes": map[string]any{"title": "T"},
			"relationships": map[string]any{"source": thmRel("layouts", mine.ID)}}, 422, "/data/relationships/source/data/type"},
		{"user is read-only", map[string]any{"type": "themes", "attributes": map[string]any{"title": "T"},
			"relationships": map[string]any{"user": thmRel("users", mine.ID)}}, 422, "/data/relationships/user"},
		{"layouts are read-only", map[string]any{"type": "themes", "attributes": map[string]any{"title": "T"},
			"relationships": map[string]any{"layouts": map[string]any{"data": []any{}}}}, 422, "/data/relationships/layouts"},
		{"unknown relationship", map[string]any{"type": "themes", "attributes": map[string]any{"title": "T"},
			"relationships": map[string]any{"colour": thmRel("colours", "x")}}, 400, "/data/relationships/colour"},
		{"malformed source", map[string]any{"type": "themes", "attributes": map[string]any{"title": "T"},
			"relationships": map[string]any{"source": map[string]any{"data": "x"}}}, 400, "/data/relationships/source/data"},
		{"unknown attribute", map[string]any{"type": "themes", "attributes": map[string]any{"title": "T", "colour": "red"}}, 400, "/data/attributes/colour"},
		{"title not a string", map[string]any{"type": "themes", "attributes": map[string]any{"title": 7}}, 400, "/data/attributes/title"},
		{"wrong type", map[string]any{"type": "layouts", "attributes": map[string]any{"title": "T"}}, 409, "/data/type"},
		{"client id", map[string]any{"type": "themes", "id": "00000000-0000-4000-8000-000000000000", "attributes": map[string]any{"title": "T"}}, 403, "/data/id"},
	}
	for _, tc := range post {
		t.Run("POST "+tc.name, func(t *testing.T) {
			d := s.thmCall(t, token, http.MethodPost, "/themes", map[string]any{"data": tc.data})
			if d.Status != tc.status || len(d.Errors) != 1 || d.Errors[0].Source.Pointer != tc.pointer {
				t.Errorf("%d %s, want %d at %s", d.Status, d.Raw, tc.status, tc.pointer)
			}
		})
	}

	patch := []struct {
		name    string
		data    map[string]any
		status  int
		pointer string
	}{
		{"null title", map[string]any{"attributes": map[string]any{"title": nil}}, 422, "/data/attributes/title"},
		{"blank title", map[string]any{"attributes": map[string]any{"title": ""}}, 422, "/data/attributes/title"},
		{"title too long", map[string]any{"attributes": map[string]any{"title": long}}, 422, "/data/attributes/title"},
		{"description too long", map[string]any{"attributes": map[string]any{"description": strings.Repeat("d", 2001)}}, 422, "/data/attributes/description"},
		{"updated-at is read-only", map[string]any{"attributes": map[string]any{"updated-at": "2026-01-01T00:00:00.000Z"}}, 422, "/data/attributes/updated-at"},
		{"theme-assets are read-only", map[string]any{"relationships": map[string]any{"theme-assets": map[string]any{"data": []any{}}}}, 422, "/data/relationships/theme-assets"},
		{"source only on create", map[string]any{"relationships": map[string]any{"source": thmRel("themes", mine.ID)}}, 400, "/data/relationships/source"},
		{"bad meta.version", map[string]any{"meta": map[string]any{"version": 0}, "attributes": map[string]any{"title": "T"}}, 400, "/data/meta/version"},
		{"no id", map[string]any{"id": nil, "attributes": map[string]any{"title": "T"}}, 400, "/data/id"},
		{"another id", map[string]any{"id": theirs.ID, "attributes": map[string]any{"title": "T"}}, 409, "/data/id"},
		{"wrong type", map[string]any{"type": "sites", "attributes": map[string]any{"title": "T"}}, 409, "/data/type"},
	}
	for _, tc := range patch {
		t.Run("PATCH "+tc.name, func(t *testing.T) {
			data := map[string]any{"type": "themes", "id": mine.ID}
			for k, v := range tc.data {
				if v == nil {
					delete(data, k)
				} else {
					data[k] = v
				}
			}
			d := s.thmCall(t, token, http.MethodPatch, "/themes/"+mine.ID, map[string]any{"data": data})
			if d.Status != tc.status || len(d.Errors) != 1 || d.Errors[0].Source.Pointer != tc.pointer {
				t.Errorf("%d %s, want %d at %s", d.Status, d.Raw, tc.status, tc.pointer)
			}
		})
	}
	// None of it changed anything.
	if got := s.thmGet(t, token, "/themes/"+mine.ID).one(t); got.Attributes["title"] != "Mine" || thmVersion(got) != 1 {
		t.Errorf("after refused writes: %+v", got)
	}
	if list := s.thmGet(t, token, "/themes"); list.Body.Meta["total"] != float64(1) {
		t.Errorf("refused creates left themes: %s", list.Raw)
	}
}

func TestLayoutsCreateReadUpdate(t *testing.T) {
	t.Parallel()
	s := start(t)
	token := s.token(t, "editor@demo.test")
	th := s.thmTheme(t, token, "Base")

	d := thmWant(t, s.thmCall(t, token, http.MethodPost, "/layouts", thmData("layouts",
		map[string]any{"title": "Default", "file-name": "default.liquid", "content": "<html>\n\t{{ content }}\n</html>", "description": "Most pages"},
		map[string]any{"theme": thmRel("themes", th.ID)})), 201, "POST /layouts")
	l := d.one(t)
	if d.Header.Get("Location") != l.Links.Self || l.Links.Self != s.URL+"/layouts/"+l.ID || d.Header.Get("ETag") != thmETag(l.ID, 1) {
		t.Errorf("Location %q ETag %q self %q", d.Header.Get("Location"), d.Header.Get("ETag"), l.Links.Self)
	}
	a := l.Attributes
	if a["title"] != "Default" || a["file-name"] != "default.liquid" || a["content"] != "<html>\n\t{{ content }}\n</html>" ||
		a["unique"] != false || a["pages-count"] != float64(0) || a["description"] != "Most pages" || thmVersion(l) != 1 {
		t.Errorf("layout = %s", d.Raw)
	}
	if got := thmLinkage(t, l.Relationships["theme"].Data); len(got) != 1 || got[0] != (thmIdent{"themes", th.ID}) {
		t.Errorf("theme linkage = %v", got)
	}

	g := thmWant(t, s.thmGet(t, token, "/layouts/"+l.ID+"?include=theme"), 200, "GET /layouts/:id?include=theme")
	inc := g.included(t)
	if len(inc) != 1 || inc[0].ID != th.ID || !slices.Equal(thmLinkIDs(t, inc[0].Relationships["layouts"].Data), []string{l.ID}) {
		t.Errorf("included theme = %s", g.Raw)
	}
	if g.Header.Get("ETag") != thmETag(l.ID, 1) {
		t.Errorf("ETag = %q", g.Header.Get("ETag"))
	}

	p := thmWant(t, s.thmCall(t, token, http.MethodPatch, "/layouts/"+l.ID, map[string]any{"data": map[string]any{
		"type": "layouts", "id": l.ID, "attributes": map[string]any{"unique": true, "content": "{{ content }}"},
		"relationships": map[string]any{"theme": thmRel("themes", th.ID)}}}), 200, "PATCH /layouts/:id")
	pa := p.one(t).Attributes
	if pa["unique"] != true || pa["content"] != "{{ content }}" || pa["title"] != "Default" || pa["file-name"] != "default.liquid" ||
		pa["description"] != "Most pages" || thmVersion(p.one(t)) != 2 {
		t.Errorf("PATCH = %s", p.Raw)
	}

	// The theme and its layouts, both ways.
	rel := thmWant(t, s.thmGet(t, token, "/layouts/"+l.ID+"/relationships/theme"), 200, "relationships/theme")
	if ids := thmLinkIDs(t, rel.Body.Data); !slices.Equal(ids, []string{th.ID}) || rel.Body.Links["related"] != s.URL+"/layouts/"+l.ID+"/theme" {
		t.Errorf("relationships/theme = %s", rel.Raw)
	}
	if rt := thmWant(t, s.thmGet(t, token, "/layouts/"+l.ID+"/theme"), 200, "GET /layouts/:id/theme"); rt.one(t).ID != th.ID {
		t.Errorf("related theme = %s", rt.Raw)
	}
	second := s.thmLayout(t, token, th.ID, "about.liquid")
	tl := thmWant(t, s.thmGet(t, token, "/themes/"+th.ID+"/relationships/layouts"), 200, "themes relationships/layouts")
	if ids := thmLinkIDs(t, tl.Body.Data); !slices.Equal(ids, []string{second.ID, l.ID}) {
		t.Errorf("relationships/layouts = %s (want about, default)", tl.Raw)
	}
	related := thmWant(t, s.thmGet(t, token, "/themes/"+th.ID+"/layouts?sort=-file-name&page[size]=1"), 200, "themes/:id/layouts")
	if ids := thmIDs(related.many(t)); !slices.Equal(ids, []string{l.ID}) || related.Body.Meta["total"] != float64(2) || related.Body.Links["next"] == "" {
		t.Errorf("themes/:id/layouts = %s", related.Raw)
	}
}

func TestLayoutValidation(t *testing.T) {
	t.Parallel()
	// A body limit above the 1 MiB content limit, so the content limit itself answers.
	s := start(t, func(c *config.Config) { c.BodyLimit = 4 << 20 })
	token, other := s.token(t, "editor@demo.test"), s.token(t, "editor@other.test")
	th := s.thmTheme(t, token, "Base")
	theirs := s.thmTheme(t, other, "Theirs")
	taken := s.thmLayout(t, token, th.ID, "Taken.liquid")
	sibling := s.thmLayout(t, token, th.ID, "sibling.liquid")
	otherTheme := s.thmTheme(t, token, "Second")

	valid := func() map[string]any {
		return map[string]any{"title": "T", "file-name": "page.liquid", "content": "{{ content }}"}
	}
	with := func(k string, v any) map[string]any {
		m := valid()
		if v == "<omit>" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	themeRel := map[string]any{"theme": thmRel("themes", th.ID)}
	cases := []struct {
		name    string
		attrs   map[string]any
		rels    map[string]any
		status  int
		pointer string
	}{
		{"no title", with("title", "<omit>"), themeRel, 422, "/data/attributes/title"},
		{"blank title", with("title", "  "), themeRel, 422, "/data/attributes/title"},
		{"title too long", with("title", strings.Repeat("t", 201)), themeRel, 422, "/data/attributes/title"},
		{"no file-name", with("file-name", "<omit>"), themeRel, 422, "/data/attributes/file-name"},
		{"file-name null", with("file-name", nil), themeRel, 422, "/data/attributes/file-name"},
		{"file-name not .liquid", with("file-name", "page.html"), themeRel, 422, "/data/attributes/file-name"},
		{"file-name only an extension", with("file-name", ".liquid"), themeRel, 422, "/data/attributes/file-name"},
		{"file-name with a folder", with("file-name", "layouts/page.liquid"), themeRel, 422, "/data/attributes/file-name"},
		{"file-name traversal", with("file-name", "../page.liquid"), themeRel, 422, "/data/attributes/file-name"},
		{"file-name with spaces", with("file-name", "my page.liquid"), themeRel, 422, "/data/attributes/file-name"},
		{"file-name too long", with("file-name", strings.Repeat("a", 250)+".liquid"), themeRel, 422, "/data/attributes/file-name"},
		{"file-name taken", with("file-name", "Taken.liquid"), themeRel, 422, "/data/attributes/file-name"},
		{"file-name taken in another case", with("file-name", "taken.LIQUID"), themeRel, 422, "/data/attributes/file-name"},
		{"no content", with("content", "<omit>"), themeRel, 422, "/data/attributes/content"},
		{"empty content", with("content", ""), themeRel, 422, "/data/attributes/content"},
		{"content with NUL", with("content", "a\x00b"), themeRel, 422, "/data/attributes/content"},
		{"content over 1 MiB", with("content", strings.Repeat("x", 1<<20+1)), themeRel, 422, "/data/attributes/content"},
		{"unique null", with("unique", nil), themeRel, 422, "/data/attributes/unique"},
		{"unique not a boolean", with("unique", "yes"), themeRel, 400, "/data/attributes/unique"},
		{"description too long", with("description", strings.Repeat("d", 2001)), themeRel, 422, "/data/attributes/description"},
		{"pages-count is read-only", with("pages-count", 3), themeRel, 422, "/data/attributes/pages-count"},
		{"created-at is read-only", with("created-at", "2026-01-01T00:00:00.000Z"), themeRel, 422, "/data/attributes/created-at"},
		{"no theme", valid(), nil, 422, "/data/relationships/theme"},
		{"theme null", valid(), map[string]any{"theme": map[string]any{"data": nil}}, 422, "/data/relationships/theme/data"},
		{"unknown theme", valid(), map[string]any{"theme": thmRel("themes", "00000000-0000-4000-8000-000000000000")}, 404, "/data/relationships/theme/data/id"},
		{"another site's theme", valid(), map[string]any{"theme": thmRel("themes", theirs.ID)}, 404, "/data/relationships/theme/data/id"},
		{"theme of the wrong type", valid(), map[string]any{"theme": thmRel("assets", th.ID)}, 422, "/data/relationships/theme/data/type"},
		{"unknown relationship", valid(), map[string]any{"theme": thmRel("themes", th.ID), "pages": map[string]any{"data": []any{}}}, 400, "/data/relationships/pages"},
	}
	for _, tc := range cases {
		t.Run("POST "+tc.name, func(t *testing.T) {
			d := s.thmCall(t, token, http.MethodPost, "/layouts", thmData("layouts", tc.attrs, tc.rels))
			if d.Status != tc.status || len(d.Errors) != 1 || d.Errors[0].Source.Pointer != tc.pointer {
				t.Errorf("%d %.300s, want %d at %s", d.Status, d.Raw, tc.status, tc.pointer)
			}
		})
	}
	// The same file name in another theme is fine.
	s.thmLayout(t, token, otherTheme.ID, "Taken.liquid")

	patches := []struct {
		name    string
		data    map[string]any
		status  int
		pointer string
	}{
		{"file-name of a sibling", map[string]any{"attributes": map[string]any{"file-name": "SIBLING.liquid"}}, 422, "/data/attributes/file-name"},
		{"file-name not .liquid", map[string]any{"attributes": map[string]any{"file-name": "x.txt"}}, 422, "/data/attributes/file-name"},
		{"null title", map[string]any{"attributes": map[string]any{"title": nil}}, 422, "/data/attributes/title"},
		{"null content", map[string]any{"attributes": map[string]any{"content": nil}}, 422, "/data/attributes/content"},
		{"empty content", map[string]any{"attributes": map[string]any{"content": ""}}, 422, "/data/attributes/content"},
		{"null unique", map[string]any{"attributes": map[string]any{"unique": nil}}, 422, "/data/attributes/unique"},
		{"pages-count is read-only", map[string]any{"attributes": map[string]any{"pages-count": 0}}, 422, "/data/attributes/pages-count"},
		{"move to another theme", map[string]any{"relationships": map[string]any{"theme": thmRel("themes", otherTheme.ID)}}, 422, "/data/relationships/theme/data"},
		{"move to a theme the site does not have", map[string]any{"relationships": map[string]any{"theme": thmRel("themes", "00000000-0000-4000-8000-000000000000")}}, 404, "/data/relationships/theme/data/id"},
		{"move to another site's theme", map[string]any{"relationships": map[string]any{"theme": thmRel("themes", theirs.ID)}}, 404, "/data/relationships/theme/data/id"},
		{"theme null", map[string]any{"relationships": map[string]any{"theme": map[string]any{"data": nil}}}, 422, "/data/relationships/theme/data"},
		{"another id", map[string]any{"id": sibling.ID, "attributes": map[string]any{"title": "x"}}, 409, "/data/id"},
		{"wrong type", map[string]any{"type": "themes", "attributes": map[string]any{"title": "x"}}, 409, "/data/type"},
	}
	for _, tc := range patches {
		t.Run("PATCH "+tc.name, func(t *testing.T) {
			data := map[string]any{"type": "layouts", "id": taken.ID}
			for k, v := range tc.data {
				data[k] = v
			}
			d := s.thmCall(t, token, http.MethodPatch, "/layouts/"+taken.ID, map[string]any{"data": data})
			if d.Status != tc.status || len(d.Errors) != 1 || d.Errors[0].Source.Pointer != tc.pointer {
				t.Errorf("%d %s, want %d at %s", d.Status, d.Raw, tc.status, tc.pointer)
			}
		})
	}
	got := s.thmGet(t, token, "/layouts/"+taken.ID).one(t)
	if got.Attributes["file-name"] != "Taken.liquid" || thmVersion(got) != 1 {
		t.Errorf("after refused PATCHes: %v %v", got.Attributes, got.Meta)
	}
	if ids := thmLinkIDs(t, s.thmGet(t, token, "/themes/"+th.ID).one(t).Relationships["layouts"].Data); len(ids) != 2 {
		t.Errorf("refused POSTs created layouts: %v", ids)
	}
}

func TestPublishingAThemeSwitchesTheLayouts(t *testing.T) {
	t.Parallel()
	s := start(t)
	token, other := s.token(t, "editor@demo.test"), s.token(t, "editor@other.test")

	// Nothing published: an empty list, not an error; the site has no theme.
	empty := thmWant(t, s.thmGet(t, token, "/layouts"), 200, "GET /layouts before any theme")
	if string(empty.Body.Data) != "[]" || empty.Body.Meta["total"] != float64(0) || empty.Body.Links["first"] == "" {
		t.Errorf("GET /layouts = %s", empty.Raw)
	}
	site := thmWant(t, s.thmGet(t, token, "/site"), 200, "GET /site").one(t)
	if string(site.Relationships["theme"].Data) != "null" || site.Relationships["theme"].Links.Related != s.URL+"/site/theme" {
		t.Errorf("site theme before publishing = %+v", site.Relationships["theme"])
	}
	if d := thmWant(t, s.thmGet(t, token, "/site/theme"), 200, "GET /site/theme"); string(d.Body.Data) != "null" {
		t.Errorf("GET /site/theme = %s", d.Raw)
	}

	a, b := s.thmTheme(t, token, "A"), s.thmTheme(t, token, "B")
	a1, a2 := s.thmLayout(t, token, a.ID, "a-home.liquid"), s.thmLayout(t, token, a.ID, "a-page.liquid")
	b1 := s.thmLayout(t, token, b.ID, "b-home.liquid")
	// The other site publishes too: it never shows here.
	theirs := s.thmTheme(t, other, "Theirs")
	s.thmLayout(t, other, theirs.ID, "theirs.liquid")
	thmWant(t, s.thmPublish(t, other, theirs.ID), 200, "other site publishes")

	layouts := func() []string {
		d := thmWant(t, s.thmGet(t, token, "/layouts"), 200, "GET /layouts")
		return thmIDs(d.many(t))
	}

	pa := thmWant(t, s.thmPublish(t, token, a.ID), 200, "publish A")
	ps := pa.one(t)
	if ids := thmLinkIDs(t, ps.Relationships["theme"].Data); !slices.Equal(ids, []string{a.ID}) || thmVersion(ps) != 2 || pa.Header.Get("ETag") != thmETag(s.Site.ID.String(), 2) {
		t.Errorf("PATCH /site publishing A = %s", pa.Raw)
	}
	if got := layouts(); !slices.Equal(got, []string{a1.ID, a2.ID}) {
		t.Errorf("after publishing A, layouts = %v, want %v", got, []string{a1.ID, a2.ID})
	}
	pubA := s.thmGet(t, token, "/themes/"+a.ID).one(t)
	if pubA.Attributes["published-at"] == nil || thmVersion(pubA) != 2 {
		t.Errorf("published A = %+v %+v", pubA.Attributes, pubA.Meta)
	}

	thmWant(t, s.thmPublish(t, token, b.ID), 200, "publish B")
	if got := layouts(); !slices.Equal(got, []string{b1.ID}) {
		t.Errorf("after publishing B, layouts = %v, want %v", got, []string{b1.ID})
	}
	pubB := s.thmGet(t, token, "/themes/"+b.ID).one(t)
	if pubB.Attributes["published-at"].(string) <= pubA.Attributes["published-at"].(string) {
		t.Errorf("B published at %v, not after A at %v", pubB.Attributes["published-at"], pubA.Attributes["published-at"])
	}
	if rt := s.thmGet(t, token, "/site/theme"); rt.one(t).ID != b.ID {
		t.Errorf("GET /site/theme = %s", rt.Raw)
	}
	// Related links of one theme take the themes' includes, nested ones too.
	for _, p := range []string{"/site/theme", "/layouts/" + b1.ID + "/theme"} {
		rt := thmWant(t, s.thmGet(t, token, p+"?include=user,layouts,theme-assets.asset"), 200, p+" with includes")
		types := map[string]int{}
		for _, in := range rt.included(t) {
			types[in.Type]++
			if !strings.HasPrefix(in.Links.Self, s.URL+"/") {
				t.Errorf("%s: included %s has links.self %q", p, in.Type, in.Links.Self)
			}
		}
		if rt.one(t).ID != b.ID || types["users"] != 1 || types["layouts"] != 1 || len(types) != 2 {
			t.Errorf("%s with includes = %s", p, rt.Raw)
		}
	}
	// Sorted by published-at, B is last.
	if ids := thmIDs(s.thmGet(t, token, "/themes?sort=published-at").many(t)); !slices.Equal(ids[:2], []string{a.ID, b.ID}) {
		t.Errorf("sort=published-at = %v", ids)
	}

	// Publishing through the relationship link, back to A.
	rel := thmWant(t, s.thmCall(t, token, http.MethodPatch, "/site/relationships/theme", thmRel("themes", a.ID)), 200, "PATCH /site/relationships/theme")
	if ids := thmLinkIDs(t, rel.Body.Data); !slices.Equal(ids, []string{a.ID}) {
		t.Errorf("relationship PATCH = %s", rel.Raw)
	}
	if got := layouts(); !slices.Equal(got, []string{a1.ID, a2.ID}) {
		t.Errorf("after publishing A again, layouts = %v", got)
	}
	if r := thmWant(t, s.thmGet(t, token, "/site/relationships/theme"), 200, "GET /site/relationships/theme"); !slices.Equal(thmLinkIDs(t, r.Body.Data), []string{a.ID}) {
		t.Errorf("GET /site/relationships/theme = %s", r.Raw)
	}
	// Naming the live theme again changes nothing.
	before := s.thmGet(t, token, "/site").one(t)
	again := thmWant(t, s.thmPublish(t, token, a.ID), 200, "publish the live theme").one(t)
	if thmVersion(again) != thmVersion(before) {
		t.Errorf("re-publishing the live theme moved the site version %d -> %d", thmVersion(before), thmVersion(again))
	}
	// GET /site?include=theme
	inc := thmWant(t, s.thmGet(t, token, "/site?include=theme&fields[themes]=title"), 200, "GET /site?include=theme")
	if in := inc.included(t); len(in) != 1 || in[0].ID != a.ID || len(in[0].Attributes) != 1 {
		t.Errorf("site include=theme = %s", inc.Raw)
	}

	// Errors: another site's theme, unknown, null, wrong type; nothing changes.
	cases := []struct {
		name    string
		method  string
		path    string
		body    any
		status  int
		pointer string
	}{
		{"another site's theme", http.MethodPatch, "/site", thmData("sites", nil, map[string]any{"theme": thmRel("themes", theirs.ID)}), 404, "/data/relationships/theme/data/id"},
		{"unknown theme", http.MethodPatch, "/site", thmData("sites", nil, map[string]any{"theme": thmRel("themes", "00000000-0000-4000-8000-000000000000")}), 404, "/data/relationships/theme/data/id"},
		{"null theme", http.MethodPatch, "/site", thmData("sites", nil, map[string]any{"theme": map[string]any{"data": nil}}), 422, "/data/relationships/theme/data"},
		{"wrong type", http.MethodPatch, "/site", thmData("sites", nil, map[string]any{"theme": thmRel("layouts", a1.ID)}), 422, "/data/relationships/theme/data/type"},
		{"unknown relationship", http.MethodPatch, "/site", thmData("sites", nil, map[string]any{"owner": thmRel("users", a1.ID)}), 400, "/data/relationships/owner"},
		{"relationship link: another site's theme", http.MethodPatch, "/site/relationships/theme", thmRel("themes", theirs.ID), 404, "/data/id"},
		{"relationship link: null", http.MethodPatch, "/site/relationships/theme", map[string]any{"data": nil}, 422, "/data"},
		{"relationship link: wrong type", http.MethodPatch, "/site/relationships/theme", thmRel("layouts", a1.ID), 409, "/data/type"},
	}
	for _, tc := range cases {
		d := s.thmCall(t, token, tc.method, tc.path, tc.body)
		if d.Status != tc.status || len(d.Errors) != 1 || d.Errors[0].Source.Pointer != tc.pointer {
			t.Errorf("%s: %d %s, want %d at %s", tc.name, d.Status, d.Raw, tc.status, tc.pointer)
		}
	}
	if got := layouts(); !slices.Equal(got, []string{a1.ID, a2.ID}) {
		t.Errorf("after refused publishes, layouts = %v", got)
	}
	if th := s.thmGet(t, other, "/themes/"+theirs.ID).one(t); th.Attributes["published-at"] == nil {
		t.Errorf("the other site's theme = %+v", th.Attributes)
	}
}

func TestThemeAssets(t *testing.T) {
	t.Parallel()
	s := start(t)
	token, other := s.token(t, "editor@demo.test"), s.token(t, "editor@other.test")
	assetID := s.thmAsset(t, token, "logo.png")
	theirAsset := s.thmAsset(t, other, "theirs.png")
	a, b := s.thmTheme(t, token, "A"), s.thmTheme(t, token, "B")
	theirs := s.thmTheme(t, other, "Theirs")

	d := thmWant(t, s.thmCall(t, token, http.MethodPost, "/theme-assets?include=asset", thmData("theme-assets", map[string]any{"path": "images/logo.png"},
		map[string]any{"theme": thmRel("themes", a.ID), "asset": thmRel("assets", assetID)})), 201, "POST /theme-assets")
	ta := d.one(t)
	if d.Header.Get("Location") != ta.Links.Self || ta.Links.Self != s.URL+"/theme-assets/"+ta.ID || d.Header.Get("ETag") != thmETag(ta.ID, 1) {
		t.Errorf("Location %q ETag %q self %q", d.Header.Get("Location"), d.Header.Get("ETag"), ta.Links.Self)
	}
	if ta.Attributes["path"] != "images/logo.png" || ta.Attributes["created-at"] == nil ||
		!slices.Equal(thmLinkIDs(t, ta.Relationships["theme"].Data), []string{a.ID}) || !slices.Equal(thmLinkIDs(t, ta.Relationships["asset"].Data), []string{assetID}) {
		t.Errorf("theme asset = %s", d.Raw)
	}
	// The included asset already shows its theme-path.
	if in := d.included(t); len(in) != 1 || in[0].Type != "assets" || in[0].Attributes["theme-path"] != "images/logo.png" {
		t.Errorf("included asset = %s", d.Raw)
	}
	themePath := func() any {
		return thmWant(t, s.thmGet(t, token, "/assets/"+assetID), 200, "GET /assets/:id").one(t).Attributes["theme-path"]
	}

	g := thmWant(t, s.thmGet(t, token, "/theme-assets/"+ta.ID+"?include=theme,asset&fields[assets]=title,theme-path&fields[themes]=title"), 200, "GET /theme-assets/:id")
	if g.one(t).ID != ta.ID || len(g.included(t)) != 2 {
		t.Fatalf("GET with includes = %s", g.Raw)
	}
	for _, in := range g.included(t) {
		if (in.Type == "themes" && (in.ID != a.ID || len(in.Attributes) != 1 || len(in.Relationships) != 0)) ||
			(in.Type == "assets" && (in.ID != assetID || len(in.Attributes) != 2)) {
			t.Errorf("included %s = %+v", in.Type, in)
		}
	}
	for path, want := range map[string]string{"/theme-assets/" + ta.ID + "/theme": a.ID, "/theme-assets/" + ta.ID + "/asset": assetID} {
		if r := thmWant(t, s.thmGet(t, token, path), 200, path); r.one(t).ID != want {
			t.Errorf("%s = %s", path, r.Raw)
		}
	}
	for _, name := range []string{"theme", "asset"} {
		r := thmWant(t, s.thmGet(t, token, "/theme-assets/"+ta.ID+"/relationships/"+name), 200, "relationships/"+name)
		if r.Body.Links["self"] != ta.Links.Self+"/relationships/"+name || len(thmLinkIDs(t, r.Body.Data)) != 1 {
			t.Errorf("relationships/%s = %s", name, r.Raw)
		}
	}
	// The theme's theme-assets relationship lists it.
	th := s.thmGet(t, token, "/themes/"+a.ID).one(t)
	if ids := thmLinkIDs(t, th.Relationships["theme-assets"].Data); !slices.Equal(ids, []string{ta.ID}) {
		t.Errorf("theme's theme-assets = %v", ids)
	}
	if r := thmWant(t, s.thmGet(t, token, "/themes/"+a.ID+"/relationships/theme-assets"), 200, "relationships/theme-assets"); !slices.Equal(thmLinkIDs(t, r.Body.Data), []string{ta.ID}) {
		t.Errorf("relationships/theme-assets = %s", r.Raw)
	}
	if r := thmWant(t, s.thmGet(t, token, "/themes/"+a.ID+"/theme-assets?include=asset"), 200, "themes/:id/theme-assets"); !slices.Equal(thmIDs(r.many(t)), []string{ta.ID}) ||
		len(r.included(t)) != 1 || r.Body.Meta["total"] != float64(1) {
		t.Errorf("themes/:id/theme-assets = %s", r.Raw)
	}

	// Validation, table-driven: path rules, uniqueness and the relationships.
	rels := map[string]any{"theme": thmRel("themes", a.ID), "asset": thmRel("assets", assetID)}
	cases := []struct {
		name    string
		attrs   map[string]any
		rels    map[string]any
		status  int
		pointer string
	}{
		{"no path", map[string]any{}, rels, 422, "/data/attributes/path"},
		{"null path", map[string]any{"path": nil}, rels, 422, "/data/attributes/path"},
		{"empty path", map[string]any{"path": ""}, rels, 422, "/data/attributes/path"},
		{"leading slash", map[string]any{"path": "/images/x.png"}, rels, 422, "/data/attributes/path"},
		{"traversal", map[string]any{"path": "images/../../x.png"}, rels, 422, "/data/attributes/path"},
		{"dot dot anywhere", map[string]any{"path": "..x.png"}, rels, 422, "/data/attributes/path"},
		{"backslash", map[string]any{"path": `images\x.png`}, rels, 422, "/data/attributes/path"},
		{"control character", map[string]any{"path": "images/x\n.png"}, rels, 422, "/data/attributes/path"},
		{"NUL", map[string]any{"path": "images/x\x00.png"}, rels, 422, "/data/attributes/path"},
		{"empty segment", map[string]any{"path": "images//x.png"}, rels, 422, "/data/attributes/path"},
		{"dot segment", map[string]any{"path": "./x.png"}, rels, 422, "/data/attributes/path"},
		{"trailing slash", map[string]any{"path": "images/"}, rels, 422, "/data/attributes/path"},
		{"too long", map[string]any{"path": strings.Repeat("a", 256)}, rels, 422, "/data/attributes/path"},
		{"taken", map[string]any{"path": "images/logo.png"}, rels, 422, "/data/attributes/path"},
		{"taken in another case", map[string]any{"path": "Images/LOGO.png"}, rels, 422, "/data/attributes/path"},
		{"path not a string", map[string]any{"path": 5}, rels, 400, "/data/attributes/path"},
		{"created-at is read-only", map[string]any{"path": "x.png", "created-at": "2026-01-01T00:00:00.000Z"}, rels, 422, "/data/attributes/created-at"},
		{"no theme", map[string]any{"path": "x.png"}, map[string]any{"asset": thmRel("assets", assetID)}, 422, "/data/relationships/theme"},
		{"no asset", map[string]any{"path": "x.png"}, map[string]any{"theme": thmRel("themes", a.ID)}, 422, "/data/relationships/asset"},
		{"null asset", map[string]any{"path": "x.png"}, map[string]any{"theme": thmRel("themes", a.ID), "asset": map[string]any{"data": nil}}, 422, "/data/relationships/asset/data"},
		{"another site's asset", map[string]any{"path": "x.png"}, map[string]any{"theme": thmRel("themes", a.ID), "asset": thmRel("assets", theirAsset)}, 404, "/data/relationships/asset/data/id"},
		{"another site's theme", map[string]any{"path": "x.png"}, map[string]any{"theme": thmRel("themes", theirs.ID), "asset": thmRel("assets", assetID)}, 404, "/data/relationships/theme/data/id"},
		{"unknown asset", map[string]any{"path": "x.png"}, map[string]any{"theme": thmRel("themes", a.ID), "asset": thmRel("assets", "00000000-0000-4000-8000-000000000000")}, 404, "/data/relationships/asset/data/id"},
		{"asset of the wrong type", map[string]any{"path": "x.png"}, map[string]any{"theme": thmRel("themes", a.ID), "asset": thmRel("asset-images", assetID)}, 422, "/data/relationships/asset/data/type"},
		{"unknown relationship", map[string]any{"path": "x.png"}, map[string]any{"theme": thmRel("themes", a.ID), "asset": thmRel("assets", assetID), "page": thmRel("pages", a.ID)}, 400, "/data/relationships/page"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := s.thmCall(t, token, http.MethodPost, "/theme-assets", thmData("theme-assets", tc.attrs, tc.rels))
			if d.Status != tc.status || len(d.Errors) != 1 || d.Errors[0].Source.Pointer != tc.pointer {
				t.Errorf("%d %s, want %d at %s", d.Status, d.Raw, tc.status, tc.pointer)
			}
		})
	}
	if d := s.thmCall(t, token, http.MethodPost, "/theme-assets", map[string]any{"data": map[string]any{"type": "assets", "attributes": map[string]any{"path": "x.png"}, "relationships": rels}}); d.Status != 409 {
		t.Errorf("wrong type = %d %s", d.Status, d.Raw)
	}
	if got := themePath(); got != "images/logo.png" {
		t.Errorf("theme-path after refused links = %v", got)
	}

	// The same asset in a second theme: theme-path follows the newest link,
	// falls back when it goes, and is null once nothing links the asset.
	tb := s.thmLink(t, token, b.ID, assetID, "img/brand.png")
	if got := themePath(); got != "img/brand.png" {
		t.Errorf("theme-path after a second link = %v", got)
	}
	// A stale If-Match on DELETE is 412 and deletes nothing.
	if d := s.thmCall(t, token, http.MethodDelete, "/theme-assets/"+tb.ID, nil, "If-Match", thmETag(tb.ID, 7)); d.Status != 412 {
		t.Errorf("stale DELETE = %d %s", d.Status, d.Raw)
	}
	del := s.thmCall(t, token, http.MethodDelete, "/theme-assets/"+tb.ID, nil, "If-Match", thmETag(tb.ID, 1))
	if del.Status != 204 || len(del.Raw) != 0 {
		t.Fatalf("DELETE = %d %s", del.Status, del.Raw)
	}
	if got := themePath(); got != "images/logo.png" {
		t.Errorf("theme-path after unlinking the newest = %v", got)
	}
	if d := s.thmGet(t, token, "/theme-assets/"+tb.ID); d.Status != 404 {
		t.Errorf("GET after DELETE = %d", d.Status)
	}
	if d := s.thmCall(t, token, http.MethodDelete, "/theme-assets/"+tb.ID, nil); d.Status != 404 {
		t.Errorf("second DELETE = %d", d.Status)
	}
	// Another site can neither see nor delete it.
	for _, p := range []string{"/theme-assets/" + ta.ID, "/theme-assets/" + ta.ID + "/theme", "/theme-assets/" + ta.ID + "/asset", "/theme-assets/" + ta.ID + "/relationships/asset"} {
		if d := s.thmGet(t, other, p); d.Status != 404 {
			t.Errorf("other site GET %s = %d", p, d.Status)
		}
	}
	if d := s.thmCall(t, other, http.MethodDelete, "/theme-assets/"+ta.ID, nil); d.Status != 404 {
		t.Errorf("other site DELETE = %d", d.Status)
	}
	thmWant(t, s.thmCall(t, token, http.MethodDelete, "/theme-assets/"+ta.ID, nil), 204, "DELETE the last link")
	if got := themePath(); got != nil {
		t.Errorf("theme-path with no links = %v", got)
	}
	// The asset itself stays.
	thmWant(t, s.thmGet(t, token, "/assets/"+assetID), 200, "the unlinked asset")
}

func TestNewThemeCopiesItsSource(t *testing.T) {
	t.Parallel()
	s := start(t)
	token := s.token(t, "editor@demo.test")
	assetID := s.thmAsset(t, token, "hero.png")
	src := s.thmTheme(t, token, "Live")
	l1 := s.thmLayout(t, token, src.ID, "default.liquid")
	l2 := s.thmLayout(t, token, src.ID, "post.liquid")
	thmWant(t, s.thmCall(t, token, http.MethodPatch, "/layouts/"+l2.ID, map[string]any{"data": map[string]any{"type": "layouts", "id": l2.ID,
		"attributes": map[string]any{"unique": true, "description": "Posts"}}}), 200, "PATCH layout")
	ta1 := s.thmLink(t, token, src.ID, assetID, "images/hero.png")
	ta2 := s.thmLink(t, token, src.ID, assetID, "images/hero-copy.png")

	d := thmWant(t, s.thmCall(t, token, http.MethodPost, "/themes?include=layouts,theme-assets.asset", thmData("themes",
		map[string]any{"title": "Working copy"}, map[string]any{"source": thmRel("themes", src.ID)})), 201, "POST /themes with source")
	cp := d.one(t)
	if cp.ID == src.ID || cp.Attributes["title"] != "Working copy" || cp.Attributes["published-at"] != nil || cp.Relationships["source"].Data != nil {
		t.Errorf("copy = %s", d.Raw)
	}
	layoutIDs := thmLinkIDs(t, cp.Relationships["layouts"].Data)
	assetLinkIDs := thmLinkIDs(t, cp.Relationships["theme-assets"].Data)
	if len(layoutIDs) != 2 || len(assetLinkIDs) != 2 || slices.Contains(layoutIDs, l1.ID) || slices.Contains(layoutIDs, l2.ID) ||
		slices.Contains(assetLinkIDs, ta1.ID) || slices.Contains(assetLinkIDs, ta2.ID) {
		t.Fatalf("copy relationships = layouts %v theme-assets %v", layoutIDs, assetLinkIDs)
	}
	// Included: two layouts, two theme assets, and the one asset they share, once.
	count := map[string]int{}
	seen := map[string]bool{}
	for _, in := range d.included(t) {
		count[in.Type]++
		if seen[in.Type+in.ID] {
			t.Errorf("%s %s included twice", in.Type, in.ID)
		}
		seen[in.Type+in.ID] = true
	}
	if count["layouts"] != 2 || count["theme-assets"] != 2 || count["assets"] != 1 || len(count) != 3 {
		t.Errorf("included = %v: %s", count, d.Raw)
	}
	byName := map[string]thmRes{}
	for _, in := range d.included(t) {
		if in.Type == "layouts" {
			byName[in.Attributes["file-name"].(string)] = in
			if !slices.Equal(thmLinkIDs(t, in.Relationships["theme"].Data), []string{cp.ID}) || thmVersion(in) != 1 {
				t.Errorf("copied layout = %+v", in)
			}
		}
		if in.Type == "theme-assets" && !slices.Equal(thmLinkIDs(t, in.Relationships["theme"].Data), []string{cp.ID}) {
			t.Errorf("copied theme asset = %+v", in)
		}
	}
	if p := byName["post.liquid"].Attributes; p["unique"] != true || p["description"] != "Posts" || p["content"] != "<main>{{ content }}</main> post.liquid" {
		t.Errorf("copied post.liquid = %v", p)
	}
	paths := thmWant(t, s.thmGet(t, token, "/themes/"+cp.ID+"/theme-assets?sort=path"), 200, "copy's theme-assets")
	var got []string
	for _, r := range paths.many(t) {
		got = append(got, r.Attributes["path"].(string))
		if !slices.Equal(thmLinkIDs(t, r.Relationships["asset"].Data), []string{assetID}) {
			t.Errorf("copied theme asset points at %s", r.Relationships["asset"].Data)
		}
	}
	if !slices.Equal(got, []string{"images/hero-copy.png", "images/hero.png"}) {
		t.Errorf("copied paths = %v", got)
	}
	// Editing the copy leaves the source alone.
	thmWant(t, s.thmCall(t, token, http.MethodPatch, "/layouts/"+byName["default.liquid"].ID, map[string]any{"data": map[string]any{"type": "layouts",
		"id": byName["default.liquid"].ID, "attributes": map[string]any{"content": "changed"}}}), 200, "PATCH copied layout")
	if c := s.thmGet(t, token, "/layouts/"+l1.ID).one(t).Attributes["content"]; c != "<main>{{ content }}</main> default.liquid" {
		t.Errorf("source layout content = %v", c)
	}
	// A copy without a source is empty; null source means none.
	bare := thmWant(t, s.thmCall(t, token, http.MethodPost, "/themes", thmData("themes", map[string]any{"title": "Bare"},
		map[string]any{"source": map[string]any{"data": nil}})), 201, "POST /themes with null source").one(t)
	if string(bare.Relationships["layouts"].Data) != "[]" || string(bare.Relationships["theme-assets"].Data) != "[]" {
		t.Errorf("bare theme = %+v", bare.Relationships)
	}
}

func TestThemesQueryParameters(t *testing.T) {
	t.Parallel()
	s := start(t)
	token := s.token(t, "editor@demo.test")
	gamma, alpha, beta := s.thmTheme(t, token, "Gamma"), s.thmTheme(t, token, "Alpha"), s.thmTheme(t, token, "Beta")
	la := s.thmLayout(t, token, alpha.ID, "home.liquid")
	lb := s.thmLayout(t, token, alpha.ID, "about.liquid")
	s.thmLayout(t, token, beta.ID, "home.liquid")

	ids := func(path string) []string {
		t.Helper()
		return thmIDs(thmWant(t, s.thmGet(t, token, path), 200, path).many(t))
	}
	if got := ids("/themes"); !slices.Equal(got, []string{beta.ID, alpha.ID, gamma.ID}) {
		t.Errorf("default order (newest first) = %v", got)
	}
	if got := ids("/themes?sort=title"); !slices.Equal(got, []string{alpha.ID, beta.ID, gamma.ID}) {
		t.Errorf("sort=title = %v", got)
	}
	if got := ids("/themes?sort=-title"); !slices.Equal(got, []string{gamma.ID, beta.ID, alpha.ID}) {
		t.Errorf("sort=-title = %v", got)
	}
	if got := ids("/themes?sort=created-at"); !slices.Equal(got, []string{gamma.ID, alpha.ID, beta.ID}) {
		t.Errorf("sort=created-at = %v", got)
	}
	if got := ids("/themes?filter[title]=Beta"); !slices.Equal(got, []string{beta.ID}) {
		t.Errorf("filter[title] = %v", got)
	}
	p := thmWant(t, s.thmGet(t, token, "/themes?sort=title&page[size]=2&page[number]=2"), 200, "page 2")
	if got := thmIDs(p.many(t)); !slices.Equal(got, []string{gamma.ID}) || p.Body.Meta["total"] != float64(3) ||
		p.Body.Links["prev"] == "" || p.Body.Links["next"] != "" || p.Body.Links["first"] == "" || p.Body.Links["last"] == "" {
		t.Errorf("page 2 = %s", p.Raw)
	}
	if u, err := url.Parse(p.Body.Links["prev"]); err != nil || u.Query().Get("page[number]") != "1" || u.Query().Get("sort") != "title" {
		t.Errorf("links.prev = %q", p.Body.Links["prev"])
	}

	// Sparse fieldsets on primary data and on included resources.
	sp := thmWant(t, s.thmGet(t, token, "/themes/"+alpha.ID+"?include=layouts&fields[themes]=title,layouts&fields[layouts]=file-name"), 200, "sparse")
	th := sp.one(t)
	if len(th.Attributes) != 1 || th.Attributes["title"] != "Alpha" || len(th.Relationships) != 1 || th.Relationships["layouts"].Data == nil {
		t.Errorf("sparse theme = %s", sp.Raw)
	}
	if in := sp.included(t); len(in) != 2 || len(in[0].Attributes) != 1 || in[0].Attributes["file-name"] != "about.liquid" || len(in[0].Relationships) != 0 {
		t.Errorf("sparse included layouts = %s", sp.Raw)
	}
	// include on a list: each layout once, only what was asked for.
	li := thmWant(t, s.thmGet(t, token, "/themes?include=layouts"), 200, "list include=layouts")
	var incIDs []string
	for _, in := range li.included(t) {
		if in.Type != "layouts" {
			t.Errorf("unrequested %s included", in.Type)
		}
		incIDs = append(incIDs, in.ID)
	}
	if len(incIDs) != 3 || !slices.Contains(incIDs, la.ID) || !slices.Contains(incIDs, lb.ID) {
		t.Errorf("included layouts = %v", incIDs)
	}
	// include with nothing to include: included is there, and empty.
	none := thmWant(t, s.thmGet(t, token, "/themes/"+gamma.ID+"?include=layouts,theme-assets.asset"), 200, "empty include")
	if in := none.included(t); len(in) != 0 {
		t.Errorf("included = %v", in)
	}
	if !strings.Contains(string(none.Raw), `"included":[]`) {
		t.Errorf("included is not []: %s", none.Raw)
	}
	// Without include there is no included member.
	if d := s.thmGet(t, token, "/themes/"+gamma.ID); d.Body.Included != nil {
		t.Errorf("included without include: %s", d.Raw)
	}

	// Layouts: sort and filter on GET /layouts (alpha published).
	thmWant(t, s.thmPublish(t, token, alpha.ID), 200, "publish alpha")
	if got := ids("/layouts"); !slices.Equal(got, []string{lb.ID, la.ID}) {
		t.Errorf("GET /layouts default order (file-name) = %v", got)
	}
	if got := ids("/layouts?sort=-file-name"); !slices.Equal(got, []string{la.ID, lb.ID}) {
		t.Errorf("sort=-file-name = %v", got)
	}
	if got := ids("/layouts?filter[file-name]=home.liquid"); !slices.Equal(got, []string{la.ID}) {
		t.Errorf("filter[file-name] = %v", got)
	}
	lp := thmWant(t, s.thmGet(t, token, "/layouts?page[size]=1&include=theme&fields[layouts]=title"), 200, "layouts page")
	if len(lp.many(t)) != 1 || lp.Body.Meta["total"] != float64(2) || lp.Body.Links["next"] == "" || len(lp.included(t)) != 1 || lp.included(t)[0].ID != alpha.ID {
		t.Errorf("GET /layouts paged = %s", lp.Raw)
	}
	if a := lp.many(t)[0].Attributes; len(a) != 1 {
		t.Errorf("fields[layouts]=title gave %v", a)
	}

	// Unknown parameters, includes, sorts, filters and fields are 400 with source.parameter.
	for path, param := range map[string]string{
		"/themes?include=pages":                                 "include",
		"/themes?sort=colour":                                   "sort",
		"/themes?filter[colour]=red":                            "filter[colour]",
		"/themes?fields[pages]=title":                           "fields[pages]",
		"/themes?page[size]=101":                                "page[size]",
		"/themes/" + alpha.ID + "?sort=title":                   "sort",
		"/themes?colour=red":                                    "colour",
		"/layouts?include=layouts":                              "include",
		"/layouts?filter[content]=x":                            "filter[content]",
		"/layouts/" + la.ID + "?include=pages":                  "include",
		"/themes/" + alpha.ID + "/layouts?include=theme-assets": "include",
		"/themes/" + alpha.ID + "/relationships/layouts?x=1":    "x",
	} {
		d := s.thmGet(t, token, path)
		if d.Status != 400 || len(d.Errors) != 1 || d.Errors[0].Source.Parameter != param {
			t.Errorf("%s = %d %s, want 400 at %s", path, d.Status, d.Raw, param)
		}
	}
}

func TestAnotherSitesThemesAreNotFound(t *testing.T) {
	t.Parallel()
	s := start(t)
	token, other := s.token(t, "editor@demo.test"), s.token(t, "editor@other.test")
	assetID := s.thmAsset(t, token, "a.png")
	th := s.thmTheme(t, token, "Mine")
	l := s.thmLayout(t, token, th.ID, "default.liquid")
	ta := s.thmLink(t, token, th.ID, assetID, "a.png")

	for _, p := range []string{
		"/themes/" + th.ID, "/themes/" + th.ID + "/layouts", "/themes/" + th.ID + "/theme-assets", "/themes/" + th.ID + "/user",
		"/themes/" + th.ID + "/relationships/layouts", "/themes/" + th.ID + "/relationships/theme-assets", "/themes/" + th.ID + "/relationships/user",
		"/layouts/" + l.ID, "/layouts/" + l.ID + "/theme", "/layouts/" + l.ID + "/relationships/theme",
		"/theme-assets/" + ta.ID, "/theme-assets/" + ta.ID + "/theme", "/theme-assets/" + ta.ID + "/relationships/theme",
		"/themes/not-a-uuid", "/layouts/not-a-uuid", "/theme-assets/not-a-uuid",
	} {
		if d := s.thmGet(t, other, p); d.Status != 404 || len(d.Errors) != 1 || d.Errors[0].Code != "not_found" {
			t.Errorf("other site GET %s = %d %s", p, d.Status, d.Raw)
		}
	}
	if d := s.thmCall(t, other, http.MethodPatch, "/themes/"+th.ID, map[string]any{"data": map[string]any{"type": "themes", "id": th.ID, "attributes": map[string]any{"title": "Mine now"}}}); d.Status != 404 {
		t.Errorf("other site PATCH theme = %d %s", d.Status, d.Raw)
	}
	if d := s.thmCall(t, other, http.MethodPatch, "/layouts/"+l.ID, map[string]any{"data": map[string]any{"type": "layouts", "id": l.ID, "attributes": map[string]any{"title": "Mine now"}}}); d.Status != 404 {
		t.Errorf("other site PATCH layout = %d %s", d.Status, d.Raw)
	}
	if d := s.thmCall(t, other, http.MethodDelete, "/theme-assets/"+ta.ID, nil); d.Status != 404 {
		t.Errorf("other site DELETE = %d %s", d.Status, d.Raw)
	}
	// Lists show none of it, even once published.
	thmWant(t, s.thmPublish(t, token, th.ID), 200, "publish")
	if d := s.thmGet(t, other, "/themes"); string(d.Body.Data) != "[]" || d.Body.Meta["total"] != float64(0) {
		t.Errorf("other site GET /themes = %s", d.Raw)
	}
	if d := s.thmGet(t, other, "/layouts"); string(d.Body.Data) != "[]" {
		t.Errorf("other site GET /layouts = %s", d.Raw)
	}
	if d := s.thmGet(t, other, "/site"); string(d.one(t).Relationships["theme"].Data) != "null" {
		t.Errorf("other site's site theme = %s", d.Raw)
	}
	// And nothing changed.
	if got := s.thmGet(t, token, "/themes/"+th.ID).one(t); got.Attributes["title"] != "Mine" {
		t.Errorf("theme = %v", got.Attributes)
	}
	thmWant(t, s.thmGet(t, token, "/theme-assets/"+ta.ID), 200, "theme asset still there")
}

func TestThemeOptimisticConcurrency(t *testing.T) {
	t.Parallel()
	s := start(t)
	token := s.token(t, "editor@demo.test")
	th := s.thmTheme(t, token, "Original")
	l := s.thmLayout(t, token, th.ID, "default.liquid")

	type target struct {
		name, path, typ, id, attr string
	}
	for _, tg := range []target{
		{"theme", "/themes/" + th.ID, "themes", th.ID, "title"},
		{"layout", "/layouts/" + l.ID, "layouts", l.ID, "title"},
		{"site", "/site", "sites", s.Site.ID.String(), "title"},
	} {
		t.Run(tg.name, func(t *testing.T) {
			patch := func(value string, meta map[string]any, headers ...string) *thmDoc {
				data := map[string]any{"type": tg.typ, "id": tg.id, "attributes": map[string]any{tg.attr: value}}
				if meta != nil {
					data["meta"] = meta
				}
				return s.thmCall(t, token, http.MethodPatch, tg.path, map[string]any{"data": data}, headers...)
			}
			g := thmWant(t, s.thmGet(t, token, tg.path), 200, "GET")
			v := thmVersion(g.one(t))
			if g.Header.Get("ETag") != thmETag(tg.id, v) || v < 1 {
				t.Fatalf("ETag %q, version %d", g.Header.Get("ETag"), v)
			}
			// The current ETag lets the write through and moves the version.
			ok := thmWant(t, patch("First", nil, "If-Match", g.Header.Get("ETag")), 200, "PATCH with current If-Match")
			if thmVersion(ok.one(t)) != v+1 || ok.Header.Get("ETag") != thmETag(tg.id, v+1) {
				t.Errorf("after write: %s (ETag %s)", ok.Raw, ok.Header.Get("ETag"))
			}
			// The old ETag is now stale: 412 at the header, nothing changes.
			st := patch("Second", nil, "If-Match", g.Header.Get("ETag"))
			if st.Status != 412 || len(st.Errors) != 1 || st.Errors[0].Code != "stale_version" {
				t.Errorf("stale If-Match = %d %s", st.Status, st.Raw)
			}
			// So is an old meta.version in the body.
			mv := patch("Third", map[string]any{"version": v})
			if mv.Status != 412 || len(mv.Errors) != 1 || mv.Errors[0].Source.Pointer != "/data/meta/version" {
				t.Errorf("stale meta.version = %d %s", mv.Status, mv.Raw)
			}
			after := s.thmGet(t, token, tg.path).one(t)
			if after.Attributes[tg.attr] != "First" || thmVersion(after) != v+1 {
				t.Errorf("after 412s: %v %v", after.Attributes, after.Meta)
			}
			// The current meta.version and If-Match: * both pass.
			thmWant(t, patch("Fourth", map[string]any{"version": v + 1}), 200, "current meta.version")
			thmWant(t, patch("Fifth", nil, "If-Match", "*"), 200, "If-Match *")
		})
	}

	// A stale If-Match on publishing is 412 too, and publishes nothing.
	site := s.thmGet(t, token, "/site")
	thmWant(t, s.thmPublish(t, token, th.ID, "If-Match", thmETag(s.Site.ID.String(), 1)), 412, "stale publish")
	if d := s.thmGet(t, token, "/layouts"); string(d.Body.Data) != "[]" {
		t.Errorf("a refused publish changed GET /layouts: %s", d.Raw)
	}
	thmWant(t, s.thmPublish(t, token, th.ID, "If-Match", site.Header.Get("ETag")), 200, "publish with current ETag")
	if d := s.thmCall(t, token, http.MethodPatch, "/site/relationships/theme", thmRel("themes", th.ID), "If-Match", site.Header.Get("ETag")); d.Status != 412 {
		t.Errorf("stale relationship PATCH = %d %s", d.Status, d.Raw)
	}

	// Racing writers holding the same ETag: exactly one lands.
	cur := s.thmGet(t, token, "/themes/"+th.ID)
	etag := cur.Header.Get("ETag")
	var wg sync.WaitGroup
	statuses := make([]int, 8)
	invalid := make([]error, len(statuses))
	for i := range statuses {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			b, _ := json.Marshal(map[string]any{"data": map[string]any{"type": "themes", "id": th.ID, "attributes": map[string]any{"title": fmt.Sprintf("Racer %d", i)}}})
			req, _ := http.NewRequest(http.MethodPatch, s.URL+"/themes/"+th.ID, bytes.NewReader(b))
			req.Header.Set("Content-Type", "application/vnd.api+json")
			req.Header.Set("Accept", "application/vnd.api+json")
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("If-Match", etag)
			resp, err := s.http.Do(req)
			if err == nil {
				statuses[i] = resp.StatusCode
				b, _ := io.ReadAll(resp.Body)
				invalid[i] = s.checkResponse(req, resp, b)
				resp.Body.Close()
			}
		}(i)
	}
	wg.Wait()
	for _, err := range invalid {
		if err != nil {
			t.Error(err)
		}
	}
	won := 0
	for _, st := range statuses {
		switch st {
		case 200:
			won++
		case 412:
		default:
			t.Errorf("racing PATCH = %d", st)
		}
	}
	if won != 1 {
		t.Errorf("%d racing writers with the same ETag landed, want 1: %v", won, statuses)
	}
	if v := thmVersion(s.thmGet(t, token, "/themes/"+th.ID).one(t)); v != thmVersion(cur.one(t))+1 {
		t.Errorf("version after the race = %d, want %d", v, thmVersion(cur.one(t))+1)
	}
}

func TestThemePatchLeavesOmittedMembersAlone(t *testing.T) {
	t.Parallel()
	s := start(t)
	token := s.token(t, "editor@demo.test")
	th := thmWant(t, s.thmCall(t, token, http.MethodPost, "/themes", thmData("themes", map[string]any{"title": "T", "description": "Keep me"}, nil)), 201, "POST").one(t)
	patch := func(path, typ, id string, attrs map[string]any) thmRes {
		t.Helper()
		return thmWant(t, s.thmCall(t, token, http.MethodPatch, path, map[string]any{"data": map[string]any{"type": typ, "id": id, "attributes": attrs}}), 200, "PATCH "+path).one(t)
	}
	if got := patch("/themes/"+th.ID, "themes", th.ID, map[string]any{"title": "T2"}); got.Attributes["description"] != "Keep me" {
		t.Errorf("description after a title PATCH = %v", got.Attributes["description"])
	}
	if got := patch("/themes/"+th.ID, "themes", th.ID, map[string]any{"description": nil}); got.Attributes["description"] != nil || got.Attributes["title"] != "T2" {
		t.Errorf("after sending description null: %v", got.Attributes)
	}
	if raw := s.thmGet(t, token, "/themes/"+th.ID).Raw; !strings.Contains(string(raw), `"description":null`) {
		t.Errorf("description is not null: %s", raw)
	}

	l := thmWant(t, s.thmCall(t, token, http.MethodPost, "/layouts", thmData("layouts",
		map[string]any{"title": "L", "file-name": "l.liquid", "content": "c", "description": "D", "unique": true},
		map[string]any{"theme": thmRel("themes", th.ID)})), 201, "POST layout").one(t)
	got := patch("/layouts/"+l.ID, "layouts", l.ID, map[string]any{"title": "L2"})
	if a := got.Attributes; a["description"] != "D" || a["unique"] != true || a["content"] != "c" || a["file-name"] != "l.liquid" {
		t.Errorf("layout after a title PATCH = %v", a)
	}
	got = patch("/layouts/"+l.ID, "layouts", l.ID, map[string]any{"description": nil, "unique": false})
	if a := got.Attributes; a["description"] != nil || a["unique"] != false || a["title"] != "L2" || a["content"] != "c" {
		t.Errorf("layout after nulling description = %v", a)
	}
}
