package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// Every link a document advertises answers (issue 24 items 2 and 3;
// DESIGN.md §2): links.self of every resource, links.self, links.related
// (and links.next) of every relationship, and the top-level links; every
// relationship carries data; include works for every relationship a
// document shows.

// walkRes is a resource object as the walk reads it.
type walkRes struct {
	Type, ID      string
	Links         map[string]string
	Relationships map[string]struct {
		Data  json.RawMessage
		Links map[string]string
		Meta  struct{ Count *int }
	}
}

// walkDoc is a response document as the walk reads it.
type walkDoc struct {
	Data     json.RawMessage
	Included []walkRes
	Links    map[string]string
}

// primary is the document's primary resources (none for a linkage or null
// document).
func (d walkDoc) primary(t *testing.T) []walkRes {
	t.Helper()
	raw := strings.TrimSpace(string(d.Data))
	var out []walkRes
	switch {
	case strings.HasPrefix(raw, "["):
		if err := json.Unmarshal(d.Data, &out); err != nil {
			t.Fatal(err)
		}
	case strings.HasPrefix(raw, "{"):
		var r walkRes
		if err := json.Unmarshal(d.Data, &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	// A linkage document's identifiers carry neither links nor
	// relationships: nothing to follow there.
	return slices.DeleteFunc(out, func(r walkRes) bool { return r.Links == nil && r.Relationships == nil })
}

// linkWalk fetches every URL of the API the documents it meets advertise,
// each once.
type linkWalk struct {
	t     *testing.T
	s     *system
	e     *editor
	seen  map[string]bool
	from  map[string]string // where a link was met first
	at    string            // the document being read
	queue []string
	// selves are the links.self of the resources met, by type.
	selves map[string][]string
	// types are the resource types met, and relationships the
	// type.relationship pairs.
	relationships map[string]bool
}

func (w *linkWalk) add(link string) {
	path, ok := strings.CutPrefix(link, w.s.URL)
	if !ok || w.seen[path] {
		return
	}
	w.seen[path] = true
	w.from[path] = w.at
	w.queue = append(w.queue, path)
}

// run follows links until none is new (bounded).
func (w *linkWalk) run() {
	t := w.t
	for i := 0; len(w.queue) > 0; i++ {
		if i > 3000 {
			t.Fatalf("the walk has not ended after 3000 links")
		}
		path := w.queue[0]
		w.queue = w.queue[1:]
		w.at = path
		d := w.e.do(http.MethodGet, path, nil)
		if d.Status != 200 {
			t.Errorf("GET %s (a link of %s) = %d %s", path, w.from[path], d.Status, d.Raw)
			continue
		}
		var doc walkDoc
		if err := json.Unmarshal(d.Raw, &doc); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		for _, l := range doc.Links {
			w.add(l)
		}
		for _, r := range append(doc.primary(t), doc.Included...) {
			w.resource(path, r)
		}
	}
}

// resource checks one resource object and queues its links.
func (w *linkWalk) resource(path string, r walkRes) {
	t := w.t
	if r.Type != "publish-plans" && r.Links["self"] == "" {
		t.Errorf("GET %s: %s %s has no links.self", path, r.Type, r.ID)
	}
	if self := r.Links["self"]; self != "" && !slices.Contains(w.selves[r.Type], self) {
		w.selves[r.Type] = append(w.selves[r.Type], self)
	}
	w.add(r.Links["self"])
	for name, rel := range r.Relationships {
		w.relationships[r.Type+"."+name] = true
		if rel.Data == nil {
			t.Errorf("GET %s: %s %s relationships.%s has no data", path, r.Type, r.ID, name)
		}
		if rel.Links["self"] == "" || rel.Links["related"] == "" {
			t.Errorf("GET %s: %s %s relationships.%s lacks links.self or links.related: %v", path, r.Type, r.ID, name, rel.Links)
		}
		if strings.HasPrefix(strings.TrimSpace(string(rel.Data)), "[") {
			var ids []json.RawMessage
			_ = json.Unmarshal(rel.Data, &ids)
			if rel.Meta.Count == nil || *rel.Meta.Count < len(ids) || (*rel.Meta.Count > len(ids)) != (rel.Links["next"] != "") {
				t.Errorf("GET %s: %s %s relationships.%s: %d identifiers, meta.count %v, links.next %q", path, r.Type, r.ID, name, len(ids), rel.Meta.Count, rel.Links["next"])
			}
		}
		for _, l := range rel.Links {
			w.add(l)
		}
	}
}

// linkWorld makes at least one record of every resource type through the
// API and returns the paths the walk starts from.
func linkWorld(t *testing.T, s *system, e *editor) []string {
	t.Helper()
	// An image: upload signature, asset upload, asset, asset image.
	sig := s.signature(t, e.token, "logo.png", "image/png")
	png := pngFile(t, 8, 8)
	if st, b := s.browserUpload(t, sig, png); st != 204 && st != 200 && st != 201 {
		t.Fatalf("storage upload = %d %s", st, b)
	}
	up := s.notify(t, e.token, sig, "logo.png", len(png)).resource(t)
	up = s.await(t, e.token, up.ID, 2*time.Minute)
	var asset struct{ ID string }
	if err := json.Unmarshal(up.Relationships["asset"].Data, &asset); err != nil || asset.ID == "" {
		t.Fatalf("upload = %+v", up)
	}
	// A theme with a layout and a theme asset, published: the site's theme.
	th := s.thmTheme(t, e.token, "Links")
	layout := s.thmLayout(t, e.token, th.ID, "page.liquid")
	s.thmLink(t, e.token, th.ID, asset.ID, "images/logo.png")
	thmWant(t, s.thmPublish(t, e.token, th.ID), 200, "PATCH /site")
	// A webhook, delivered to once a revision is published.
	rcv := newReceiver(t, nil)
	hook, _ := e.createWebhook(rcv.URL+"/hook", "revision.published")

	// Pages (one under the other, with a layout), a content, an image block
	// with the asset and a block linking to the root page, published.
	root, dRoot := e.create("pages", map[string]any{"title": "Root", "slug": "root"}, map[string]any{"layout": ref("layouts", layout.ID)})
	child, dChild := e.page("Child", "child", root)
	content, dContent := e.create("contents", map[string]any{"title": "Main"}, map[string]any{"page": ref("pages", child)})
	_, dImage := e.create("content-blocks", map[string]any{"var-name": "logo", "data-type": "image"},
		map[string]any{"content": ref("contents", content), "asset": ref("assets", asset.ID)})
	linking, dLinking := e.create("content-blocks", map[string]any{"var-name": "up", "data-type": "html", "body": `<a href="/root">up</a>`},
		map[string]any{"content": ref("contents", content)})
	first := e.mustPublish(dRoot, dChild, dContent, dImage, dLinking)
	e.awaitDeliveries(hook, 1, time.Minute)
	// A revision and its revert.
	renamed := e.mustPublish(e.update("pages", child, map[string]any{"title": "Child 2"}, nil))
	e.revert(renamed.ID, false)

	// Pending drafts: the root's slug (the block's link would break), a
	// page created under a created page (a publication dependency), a
	// block's body (drafted hyperlinks).
	e.update("pages", root, map[string]any{"slug": "top"}, nil)
	created, _ := e.page("New", "new", "")
	e.page("Newer", "newer", created)
	e.update("content-blocks", linking, map[string]any{"body": `<a href="/child">x</a> <a href="/root">y</a>`}, nil)

	return []string{"/site", "/users/me", "/pages", "/pages?include=draft", "/contents", "/content-blocks?include=draft", "/drafts",
		"/revisions", "/revisions/" + first.ID, "/assets", "/themes", "/layouts", "/webhooks", "/asset-uploads/" + up.ID,
		"/upload-signatures/" + sig.ID, "/pages/" + root + "?include=draft", "/pages/" + created + "?include=draft",
		"/content-blocks/" + linking + "?include=draft"}
}

// TestLinksAnswer walks every document from a world with a record of every
// resource type: every link answers 200 (a to-one relationship without a
// record answers data null), every relationship carries data (to-many:
// with meta.count, and links.next when there is more), another site gets
// 404 for every link of a record, and include works for every
// relationship of every type.
func TestLinksAnswer(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	w := &linkWalk{t: t, s: s, e: e, seen: map[string]bool{}, from: map[string]string{}, selves: map[string][]string{}, relationships: map[string]bool{}}
	for _, p := range linkWorld(t, s, e) {
		w.add(s.URL + p)
	}
	w.run()

	// Every type and relationship was met.
	for _, typ := range []string{"sites", "users", "themes", "layouts", "theme-assets", "pages", "contents", "content-blocks", "drafts",
		"revisions", "versions", "hyperlinks", "upload-signatures", "asset-uploads", "assets", "asset-images", "webhooks", "webhook-deliveries"} {
		if len(w.selves[typ]) == 0 {
			t.Errorf("the walk met no %s", typ)
		}
	}
	for _, rel := range []string{"pages.parent", "pages.layout", "pages.draft", "contents.content-blocks", "content-blocks.asset",
		"content-blocks.hyperlinks", "drafts.item", "drafts.publication-dependencies", "drafts.reversion-dependencies", "drafts.hyperlinks",
		"revisions.drafts", "revisions.versions", "revisions.reverts", "versions.item", "hyperlinks.linkable", "hyperlinks.linked-to",
		"assets.asset-file", "asset-images.asset", "webhooks.deliveries", "webhook-deliveries.webhook"} {
		if !w.relationships[rel] {
			t.Errorf("the walk met no %s relationship", rel)
		}
	}
	t.Logf("followed %d links", len(w.seen))

	// Another site's editor finds none of it.
	o := s.editor(t, "editor@other.test")
	record := regexp.MustCompile(`/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	for _, path := range slices.Sorted(mapKeysOf(w.seen)) {
		if record.MatchString(path) && !strings.HasPrefix(path, "/users/me") {
			if d := o.do(http.MethodGet, path, nil); d.Status != 404 {
				t.Errorf("another site's GET %s = %d %s", path, d.Status, d.Raw)
			}
		}
	}

	// include, on one record of every type, for each of its relationships.
	for _, typ := range slices.Sorted(mapKeysOf(w.selves)) {
		checkIncludes(t, e, strings.TrimPrefix(w.selves[typ][0], s.URL))
	}
}

// checkIncludes reads the record at path with include=<name> for each of
// its relationships: included holds exactly the records the relationship
// names (those that still exist: a published revision's drafts are gone).
func checkIncludes(t *testing.T, e *editor, path string) {
	t.Helper()
	var one walkDoc
	_ = json.Unmarshal(e.do(http.MethodGet, path, nil).Raw, &one)
	rs := one.primary(t)
	if len(rs) != 1 {
		t.Fatalf("GET %s: %s", path, one.Data)
	}
	for _, name := range slices.Sorted(mapKeysOf(rs[0].Relationships)) {
		got := e.do(http.MethodGet, path+"?include="+url.QueryEscape(name), nil)
		if got.Status != 200 {
			t.Errorf("GET %s?include=%s = %d %s", path, name, got.Status, got.Raw)
			continue
		}
		var doc walkDoc
		_ = json.Unmarshal(got.Raw, &doc)
		r := doc.primary(t)[0]
		var want []string
		for _, id := range linkageIDs(r.Relationships[name].Data) {
			want = append(want, id)
		}
		var included []string
		for _, x := range doc.Included {
			included = append(included, x.Type+"/"+x.ID)
		}
		for _, k := range included {
			if !slices.Contains(want, k) {
				t.Errorf("GET %s?include=%s includes %s, which %s does not name", path, name, k, name)
			}
		}
		for _, k := range want {
			if !slices.Contains(included, k) && e.do(http.MethodGet, "/"+k, nil).Status != 404 {
				t.Errorf("GET %s?include=%s leaves out %s, which exists", path, name, k)
			}
		}
	}
}

// linkageIDs reads linkage into "type/id" keys.
func linkageIDs(raw json.RawMessage) []string {
	var many []struct{ Type, ID string }
	if err := json.Unmarshal(raw, &many); err != nil {
		var one *struct{ Type, ID string }
		if json.Unmarshal(raw, &one) != nil || one == nil {
			return nil
		}
		many = append(many, *one)
	}
	out := []string{}
	for _, x := range many {
		out = append(out, x.Type+"/"+x.ID)
	}
	sort.Strings(out)
	return out
}

func mapKeysOf[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestLongToManyLinkageIsPaged: a to-many relationship longer than a page
// carries its first 100 identifiers, meta.count and links.next, which
// pages on through the relationship endpoint.
func TestLongToManyLinkageIsPaged(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	th := s.thmTheme(t, e.token, "Many")
	for i := range 101 {
		s.thmLayout(t, e.token, th.ID, fmt.Sprintf("l%03d.liquid", i))
	}
	d := e.do(http.MethodGet, "/themes/"+th.ID, nil)
	var doc walkDoc
	_ = json.Unmarshal(d.Raw, &doc)
	rel := doc.primary(t)[0].Relationships["layouts"]
	ids := linkageIDs(rel.Data)
	if len(ids) != 100 || rel.Meta.Count == nil || *rel.Meta.Count != 101 || rel.Links["next"] == "" {
		t.Fatalf("layouts of a theme with 101: %d identifiers, meta %v, links %v", len(ids), rel.Meta.Count, rel.Links)
	}
	next := e.do(http.MethodGet, strings.TrimPrefix(rel.Links["next"], s.URL), nil)
	rest := linkageIDs(next.Data)
	if next.Status != 200 || len(rest) != 1 || slices.Contains(ids, rest[0]) || !strings.Contains(string(next.Raw), `"total":101`) {
		t.Errorf("GET links.next = %d %s", next.Status, next.Raw)
	}
}
