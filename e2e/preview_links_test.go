package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/pressroom/pressroom/testsupport"
)

// Preview links (issue 29 §3, docs/releases.md "Preview links"): a link
// read without credentials, as JSON:API and as HTML rendered through the
// page's Liquid layout in a real browser; a link cannot write; revoke,
// expiry, publication and cancellation each end it (410); another site's
// links are 404.

// pvRelease makes an open release of site directly in the database: the
// releases resource is the releases branch's (until it is merged, the
// tests make releases the way its store will).
func (s *system) pvRelease(t *testing.T, site uuid.UUID, title string) string {
	t.Helper()
	id := uuid.NewString()
	if _, err := s.DB.ExecContext(context.Background(), `INSERT INTO releases (id, site_id, title) VALUES (?, ?, ?)`, id, site, title); err != nil {
		t.Fatal(err)
	}
	return id
}

// pvLink makes a preview link of release and returns its resource.
func (e *editor) pvLink(release string, attrs map[string]any) *doc {
	e.t.Helper()
	data := map[string]any{"type": "preview-links", "relationships": map[string]any{"release": ref("releases", release)}}
	if attrs != nil {
		data["attributes"] = attrs
	}
	return e.do(http.MethodPost, "/preview-links", map[string]any{"data": data})
}

func (e *editor) mustPvLink(release string) (id, url string) {
	e.t.Helper()
	d := e.pvLink(release, nil)
	if d.Status != 201 {
		e.t.Fatalf("POST /preview-links = %d %s", d.Status, d.Raw)
	}
	r := d.resource(e.t)
	url, _ = r.Attributes["url"].(string)
	tok, _ := r.Attributes["token"].(string)
	if !strings.HasSuffix(url, "/preview/"+tok) || len(tok) < 43 {
		e.t.Fatalf("url %q, token %q", url, tok)
	}
	return r.ID, url
}

// pvGet reads url with no credential at all.
func (s *system) pvGet(t *testing.T, method, url, accept string) (int, http.Header, string) {
	t.Helper()
	resp, body := s.rawRequest(t, method, url, "Accept", accept)
	return resp.StatusCode, resp.Header, string(body)
}

// pvSite publishes a page at /about with a layout, a content, a text
// block and an image block; it returns the page's and the content's ids.
func pvSite(t *testing.T, s *system, e *editor) (page, content string) {
	t.Helper()
	theme := s.thmTheme(t, e.token, "Preview theme")
	layout := `<!doctype html><html><head><title>{{ page.title }}</title></head><body>
<h1 id="title">{{ page.title }}</h1><p id="site">{{ site.title }}</p><p id="path">{{ page.path }}</p>
{% for c in contents %}<section><h2>{{ c.title }}</h2>{% for b in c.blocks %}{% if b.data_type == "image" %}<img id="{{ b.var_name }}" src="{{ b.asset_url }}">{% else %}<div class="block" id="{{ b.var_name }}">{{ b.body }}</div>{% endif %}{% endfor %}</section>{% endfor %}
</body></html>`
	d := s.thmCall(t, e.token, http.MethodPost, "/layouts", thmData("layouts",
		map[string]any{"title": "Page", "file-name": "page.liquid", "content": layout}, map[string]any{"theme": thmRel("themes", theme.ID)}))
	l := thmWant(t, d, 201, "POST /layouts").one(t)
	asset := s.thmAsset(t, e.token, "hero.png")
	page, pd := e.create("pages", map[string]any{"title": "About us", "slug": "about"}, map[string]any{"layout": ref("layouts", l.ID)})
	content, cd := e.create("contents", map[string]any{"title": "Intro", "position": 1}, map[string]any{"page": ref("pages", page)})
	_, b1 := e.create("content-blocks", map[string]any{"var-name": "text", "data-type": "text", "body": "Welcome", "position": 1}, map[string]any{"content": ref("contents", content)})
	_, b2 := e.create("content-blocks", map[string]any{"var-name": "hero", "data-type": "image", "body": "Hero", "position": 2},
		map[string]any{"content": ref("contents", content), "asset": ref("assets", asset)})
	e.mustPublish(pd, cd, b1, b2)
	return page, content
}

func TestPreviewLinks(t *testing.T) {
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	page, content := pvSite(t, s, e)
	release := s.pvRelease(t, s.Site.ID, "Autumn")
	id, url := e.mustPvLink(release)

	// A client without credentials reads through the link.
	st, h, body := s.pvGet(t, http.MethodGet, url+"/pages/"+page, "application/vnd.api+json")
	if st != 200 || !strings.Contains(body, `"About us"`) {
		t.Fatalf("GET {url}/pages/:id = %d %s", st, body)
	}
	if h.Get("Cache-Control") != "no-store" || h.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("headers %v", h)
	}
	if st, _, body = s.pvGet(t, http.MethodGet, url+"/pages", ""); st != 200 || !strings.Contains(body, page) {
		t.Fatalf("GET {url}/pages = %d %s", st, body)
	}
	// Drafts, people and the team are not shown through a link.
	for _, p := range []string{"/drafts", "/users/me", "/memberships", "/preview-links", "/pages/" + page + "/draft", "/pages?include=draft"} {
		if st, _, body = s.pvGet(t, http.MethodGet, url+p, ""); st != 404 && st != 400 {
			t.Errorf("GET {url}%s = %d %s", p, st, body)
		}
	}
	// Nor who changed what: filter[user] is refused (400 at its parameter),
	// so a link holder cannot learn whose drafts are pending where.
	if st, _, body = s.pvGet(t, http.MethodGet, url+"/pages?filter[user]="+uuid.NewString(), ""); st != 400 || !strings.Contains(body, `"parameter":"filter[user]"`) {
		t.Errorf("GET {url}/pages?filter[user]= = %d %s, want 400 at filter[user]", st, body)
	}
	// A render path whose bytes are not UTF-8 (sent raw: the route takes
	// the path undecoded) is a 400, not a 500 from PostgreSQL (SQLSTATE
	// 22021); percent-escapes are the page path's own characters (404).
	for _, p := range []string{"/render/\xff", "/render/a\xc3\x28b"} {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.URL.Opaque = req.URL.Path + p // written as is on the request line
		resp, err := s.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(raw), "invalid_character") {
			t.Errorf("GET {url}%q = %d %s, want 400 invalid_character", p, resp.StatusCode, raw)
		}
	}
	if st, _, body = s.pvGet(t, http.MethodGet, url+"/render/%FF", ""); st != 404 {
		t.Errorf("GET {url}/render/%%FF = %d %s, want 404 (no page at /%%FF)", st, body)
	}
	// Another release's preview cannot be asked for through the link: the
	// link's release replaces any preview-release sent.
	if st, _, body = s.pvGet(t, http.MethodGet, url+"/pages/"+page+"?preview-release="+uuid.NewString(), ""); st != 200 || !strings.Contains(body, `"About us"`) {
		t.Errorf("preview-release through a link = %d %s", st, body)
	}

	// A draft staged in the release shows through the link (the releases
	// branch's preview-release read); an unstaged one does not.
	other := s.editor(t, "editor@other.test")
	d := e.do(http.MethodPatch, "/pages/"+page, map[string]any{"data": map[string]any{"type": "pages", "id": page, "attributes": map[string]any{"title": "About us, drafted"}}})
	if d.Status != 200 {
		t.Fatalf("PATCH page = %d %s", d.Status, d.Raw)
	}
	if st, _, body = s.pvGet(t, http.MethodGet, url+"/pages/"+page, ""); st != 200 || !strings.Contains(body, `"About us"`) {
		t.Errorf("an unstaged draft through the link = %d %s", st, body)
	}
	staged := draftOf(t, d.resource(t))
	if st := e.do(http.MethodPost, "/releases/"+release+"/relationships/drafts", map[string]any{"data": []any{map[string]any{"type": "drafts", "id": staged}}}).Status; st != 204 {
		t.Fatalf("stage = %d", st)
	}
	if st, _, body = s.pvGet(t, http.MethodGet, url+"/pages/"+page, ""); st != 200 || !strings.Contains(body, `"About us, drafted"`) {
		t.Errorf("a staged draft through the link = %d %s", st, body)
	}
	if st := e.do(http.MethodDelete, "/releases/"+release+"/relationships/drafts", map[string]any{"data": []any{map[string]any{"type": "drafts", "id": staged}}}).Status; st != 204 {
		t.Fatalf("unstage = %d", st)
	}

	// Rendered HTML.
	st, h, body = s.pvGet(t, http.MethodGet, url+"/render/about", "text/html")
	if st != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/html") || !strings.Contains(body, `<h1 id="title">About us</h1>`) {
		t.Fatalf("GET {url}/render/about = %d %s %s", st, h.Get("Content-Type"), body)
	}
	if st, _, _ = s.pvGet(t, http.MethodGet, url+"/render/nowhere", "text/html"); st != 404 {
		t.Errorf("render of no page = %d", st)
	}

	// In a real browser: the title, the text block and the image, loaded.
	ctx := browser(t)
	run(t, ctx, "open the preview", chromedp.Navigate(url+"/render/about"), chromedp.WaitVisible("#hero"))
	got := eval[map[string]any](t, ctx, `(async () => {
		const img = document.getElementById("hero");
		if (!img.complete) await new Promise(r => { img.onload = r; img.onerror = r; });
		return {title: document.title, h1: document.getElementById("title").textContent,
			text: document.getElementById("text").textContent, site: document.getElementById("site").textContent,
			width: img.naturalWidth};
	})()`)
	if got["title"] != "About us" || got["h1"] != "About us" || got["text"] != "Welcome" || got["site"] != "Demo" || got["width"] != float64(8) {
		t.Fatalf("rendered page in the browser: %v", got)
	}

	pvRenderRelease(t, ctx, s, e, url, release, staged, content)

	// A link cannot write: every method but GET and HEAD is 405.
	for _, m := range []string{http.MethodPost, http.MethodPatch, http.MethodDelete, http.MethodPut} {
		resp, b := s.rawRequest(t, m, url+"/pages/"+page, "Content-Type", "application/vnd.api+json")
		if resp.StatusCode != 405 || !strings.Contains(resp.Header.Get("Allow"), "GET") {
			t.Errorf("%s through a link = %d %s", m, resp.StatusCode, b)
		}
	}

	// The link's uses are recorded; its token is never shown again.
	d = e.do(http.MethodGet, "/preview-links/"+id+"?include=release", nil)
	r := d.resource(t)
	if d.Status != 200 || r.Attributes["token"] != nil || r.Attributes["url"] != nil || r.Attributes["last-used-at"] == nil || r.Attributes["uses-count"].(float64) < 4 {
		t.Fatalf("GET /preview-links/:id = %d %s", d.Status, d.Raw)
	}
	if !strings.Contains(string(d.Raw), `"included":[{"type":"releases","id":"`+release) {
		t.Errorf("include=release: %s", d.Raw)
	}
	if d = e.do(http.MethodGet, "/preview-links", nil); d.Status != 200 || !strings.Contains(string(d.Raw), id) {
		t.Fatalf("GET /preview-links = %d %s", d.Status, d.Raw)
	}

	// Another site's links are 404; so is another site's release.
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		if st := other.do(m, "/preview-links/"+id, nil).Status; st != 404 {
			t.Errorf("%s another site's link = %d", m, st)
		}
	}
	if d = other.pvLink(release, nil); d.Status != 404 || d.Errors[0].Source.Pointer != "/data/relationships/release/data/id" {
		t.Errorf("a link to another site's release = %d %s", d.Status, d.Raw)
	}

	// expires-at: at most 30 days ahead.
	if d = e.pvLink(release, map[string]any{"expires-at": time.Now().Add(31 * 24 * time.Hour).UTC().Format(time.RFC3339)}); d.Status != 422 {
		t.Errorf("expires-at 31 days ahead = %d %s", d.Status, d.Raw)
	}

	// Revoked: 410 at once, a page for a browser, an error document otherwise.
	if d = e.do(http.MethodDelete, "/preview-links/"+id, nil); d.Status != 204 {
		t.Fatalf("DELETE = %d %s", d.Status, d.Raw)
	}
	if st, _, body = s.pvGet(t, http.MethodGet, url+"/pages/"+page, "application/vnd.api+json"); st != 410 || !strings.Contains(body, "preview_link_gone") || !strings.Contains(body, "revoked") {
		t.Errorf("revoked link = %d %s", st, body)
	}
	if st, h, body = s.pvGet(t, http.MethodGet, url+"/render/about", "text/html"); st != 410 || !strings.HasPrefix(h.Get("Content-Type"), "text/html") || !strings.Contains(body, "revoked") {
		t.Errorf("revoked link's page = %d %s", st, body)
	}

	// Expired.
	_, url2 := e.mustPvLink(release)
	if _, err := s.DB.ExecContext(context.Background(), `UPDATE preview_links SET expires_at = now() - interval '1 second' WHERE release_id = ? AND revoked_at IS NULL`, release); err != nil {
		t.Fatal(err)
	}
	if st, _, body = s.pvGet(t, http.MethodGet, url2+"/render/about", "text/html"); st != 410 || !strings.Contains(body, "expired") {
		t.Errorf("expired link = %d %s", st, body)
	}

	// The release published, or cancelled.
	for _, status := range []string{"published", "cancelled"} {
		rel := s.pvRelease(t, s.Site.ID, "R "+status)
		_, u := e.mustPvLink(rel)
		if st, _, _ = s.pvGet(t, http.MethodGet, u+"/pages/"+page, ""); st != 200 {
			t.Fatalf("fresh link = %d", st)
		}
		if _, err := s.DB.ExecContext(context.Background(), `UPDATE releases SET status = ? WHERE id = ?`, status, rel); err != nil {
			t.Fatal(err)
		}
		if st, _, body = s.pvGet(t, http.MethodGet, u+"/pages/"+page, ""); st != 410 || !strings.Contains(body, status) {
			t.Errorf("link of a %s release = %d %s", status, st, body)
		}
		if d = e.pvLink(rel, nil); d.Status != 409 {
			t.Errorf("a link to a %s release = %d %s", status, d.Status, d.Raw)
		}
	}

	// An unknown token is 404.
	if st, _, _ = s.pvGet(t, http.MethodGet, s.URL+"/preview/"+strings.Repeat("x", 43)+"/pages", ""); st != 404 {
		t.Errorf("unknown token = %d", st)
	}
}

// pvRenderRelease stages the page's drafted title and a new image block
// in release, leaves another new block unstaged, and checks in a real
// browser that the render through the link shows the release: the drafted
// title, the staged image loaded from its asset_url, not the unstaged block.
func pvRenderRelease(t *testing.T, ctx context.Context, s *system, e *editor, url, release, titleDraft, content string) {
	t.Helper()
	asset := s.thmAsset(t, e.token, "banner.png")
	_, banner := e.create("content-blocks", map[string]any{"var-name": "banner", "data-type": "image", "body": "Banner", "position": 3},
		map[string]any{"content": ref("contents", content), "asset": ref("assets", asset)})
	e.create("content-blocks", map[string]any{"var-name": "unstaged", "data-type": "text", "body": "Not in the release", "position": 4},
		map[string]any{"content": ref("contents", content)})
	if d := e.stage(http.MethodPost, release, titleDraft, banner); d.Status != 204 {
		t.Fatalf("stage = %d %s", d.Status, d.Raw)
	}
	st, _, body := s.pvGet(t, http.MethodGet, url+"/render/about", "text/html")
	if st != 200 || !strings.Contains(body, `<h1 id="title">About us, drafted</h1>`) || !strings.Contains(body, `<img id="banner" src="http`) || strings.Contains(body, "Not in the release") {
		t.Fatalf("render through the release = %d %s", st, body)
	}
	run(t, ctx, "open the release's preview", chromedp.Navigate(url+"/render/about"), chromedp.WaitVisible("#banner"))
	got := eval[map[string]any](t, ctx, `(async () => {
		const img = document.getElementById("banner");
		if (!img.complete) await new Promise(r => { img.onload = r; img.onerror = r; });
		return {title: document.title, h1: document.getElementById("title").textContent,
			src: img.getAttribute("src"), width: img.naturalWidth, unstaged: document.getElementById("unstaged") !== null,
			hero: document.getElementById("hero").naturalWidth};
	})()`)
	if got["title"] != "About us, drafted" || got["h1"] != "About us, drafted" || got["width"] != float64(8) || got["unstaged"] != false || got["hero"] != float64(8) {
		t.Fatalf("the release's page in the browser: %v", got)
	}
	// The same page as the link's JSON:API reads show it.
	if st, _, body = s.pvGet(t, http.MethodGet, url+"/contents/"+content+"/content-blocks", ""); st != 200 || !strings.Contains(body, `"Banner"`) || strings.Contains(body, "Not in the release") {
		t.Fatalf("the release's blocks through the link = %d %s", st, body)
	}
}

// TestPreviewLinkTemplateError: an author's broken layout renders a page
// naming the line, with status 500, and never a stack trace.
func TestPreviewLinkTemplateError(t *testing.T) {
	build := testsupport.BuildPressroom(t) // in the background, while the system starts
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	theme := s.thmTheme(t, e.token, "Broken")
	d := s.thmCall(t, e.token, http.MethodPost, "/layouts", thmData("layouts",
		map[string]any{"title": "Broken", "file-name": "broken.liquid", "content": "<html>\n<body>\n{% if page.title %}\n</body>"}, map[string]any{"theme": thmRel("themes", theme.ID)}))
	l := thmWant(t, d, 201, "POST /layouts").one(t)
	_, pd := e.create("pages", map[string]any{"title": "Oops", "slug": "oops"}, map[string]any{"layout": ref("layouts", l.ID)})
	_, plain := e.create("pages", map[string]any{"title": "Plain", "slug": "plain"}, nil)
	e.mustPublish(pd, plain)
	// The link made by the CLI: `pressroom release preview` prints its url.
	out, errOut, code := newPressroomCLI(t, build(), s.URL, "PRESSROOM_TOKEN="+e.token).run(t, "", "release", "preview", "--expires-in", "48h", s.pvRelease(t, s.Site.ID, "R"))
	url := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(url, s.URL+"/preview/") || !strings.Contains(errOut, "works until") {
		t.Fatalf("pressroom release preview = %d %q %q", code, out, errOut)
	}
	st, h, body := s.pvGet(t, http.MethodGet, url+"/render/oops", "text/html")
	if st != 500 || !strings.HasPrefix(h.Get("Content-Type"), "text/html") || !strings.Contains(body, "line 3") || strings.Contains(body, "goroutine") {
		t.Fatalf("broken layout = %d %s", st, body)
	}
	// A page without a layout renders through the built-in one.
	if st, _, body = s.pvGet(t, http.MethodGet, url+"/render/plain", "text/html"); st != 200 || !strings.Contains(body, "<h1>Plain</h1>") {
		t.Fatalf("page without a layout = %d %s", st, body)
	}
}

// TestPreviewLinkDocumentLinks: every link a document read through a
// preview link advertises (self, relationship, related and pagination
// links, of the data and of included resources) points under the link's
// url and answers there without credentials: the crawl follows them all,
// two levels deep, from documents of a release that updates a page and
// creates a content and a block.
func TestPreviewLinkDocumentLinks(t *testing.T) {
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	r := pvStagedRelease(t, s, e, "Links", "About us, linked", "New in the release")
	_, url := e.mustPvLink(r.release)
	page, content, created := r.page, r.content, r.created

	roots := []string{url + "/pages/" + page + "?include=layout", url + "/pages?page[size]=1", url + "/contents/" + created + "?include=content-blocks",
		url + "/contents?page[size]=1&filter[page]=" + page, url + "/contents/" + content + "/content-blocks?page[size]=1", url + "/site"}
	get := func(u string) (int, []byte) {
		st, _, body := s.pvGet(t, http.MethodGet, u, "application/vnd.api+json")
		return st, []byte(body)
	}
	pvCrawl(t, roots, get, func(u string, _ []byte, doc any) (next []string) {
		for _, l := range pvLinksOf(doc, false) {
			if !strings.HasPrefix(l, url+"/") {
				t.Errorf("GET %s advertises %s, not under the link", u, l)
				continue
			}
			next = append(next, l)
		}
		return next
	})
	// The content the release creates reads through its own links.
	if st, _, body := s.pvGet(t, http.MethodGet, url+"/contents/"+created, ""); st != 200 || !strings.Contains(body, `"New in the release"`) || strings.Contains(body, "include=draft") {
		t.Fatalf("a created content through the link = %d %s", st, body)
	}
}

// pvRelease is a release staging a drafted title of the site's page, a
// content created under it and that content's block.
type pvRelease struct{ page, content, created, release string }

func pvStagedRelease(t *testing.T, s *system, e *editor, title, pageTitle, contentTitle string) pvRelease {
	t.Helper()
	page, content := pvSite(t, s, e)
	release := e.createRelease(title)
	d := e.do(http.MethodPatch, "/pages/"+page, map[string]any{"data": map[string]any{"type": "pages", "id": page, "attributes": map[string]any{"title": pageTitle}}})
	if d.Status != 200 {
		t.Fatalf("PATCH page = %d %s", d.Status, d.Raw)
	}
	created, cd := e.create("contents", map[string]any{"title": contentTitle, "position": 2}, map[string]any{"page": ref("pages", page)})
	_, bd := e.create("content-blocks", map[string]any{"var-name": "fresh", "data-type": "text", "body": "Fresh", "position": 1}, map[string]any{"content": ref("contents", created)})
	e.mustStage(release, draftOf(t, d.resource(t)), cd, bd)
	return pvRelease{page: page, content: content, created: created, release: release}
}

// pvCrawl reads the documents at start and follows the links visit
// returns for each, three levels deep (at most 250 reads); each read must
// answer 200 with JSON. It fails unless it read at least 30.
func pvCrawl(t *testing.T, start []string, get func(string) (int, []byte), visit func(u string, body []byte, doc any) []string) {
	t.Helper()
	queue, seen := start, map[string]bool{}
	for depth := 0; depth < 3 && len(queue) > 0; depth++ {
		var next []string
		for _, u := range queue {
			if seen[u] || len(seen) >= 250 {
				continue
			}
			seen[u] = true
			st, body := get(u)
			if st != 200 {
				t.Errorf("GET %s = %d %s", u, st, body)
				continue
			}
			var doc any
			if err := json.Unmarshal(body, &doc); err != nil {
				t.Fatalf("GET %s: %v", u, err)
			}
			next = append(next, visit(u, body, doc)...)
		}
		queue = next
	}
	if len(seen) < 30 {
		t.Fatalf("followed only %d links: %v", len(seen), seen)
	}
}

// pvLinksOf collects the URLs of every "links" object in a document.
func pvLinksOf(v any, inLinks bool) []string {
	var out []string
	switch v := v.(type) {
	case []any:
		for _, x := range v {
			out = append(out, pvLinksOf(x, false)...)
		}
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && inLinks {
				out = append(out, s)
				continue
			}
			if o, ok := x.(map[string]any); ok && inLinks {
				if h, ok := o["href"].(string); ok {
					out = append(out, h)
				}
				continue
			}
			out = append(out, pvLinksOf(x, k == "links")...)
		}
	}
	return out
}

// TestPreviewReleaseDocumentLinks: a document read with a bearer token and
// ?preview-release advertises links that carry the preview (the document
// builder adds preview-release to each): every link followed, three deep,
// answers 200 through the preview, so the release's drafted title and the
// content it creates are what the followed reads show.
func TestPreviewReleaseDocumentLinks(t *testing.T) {
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	r := pvStagedRelease(t, s, e, "Token links", "About us, previewed", "New in the token preview")
	page, content, created := r.page, r.content, r.created
	pr := "preview-release=" + r.release

	roots := []string{s.URL + "/pages/" + page + "?include=layout&" + pr, s.URL + "/pages?page[size]=1&" + pr,
		s.URL + "/contents/" + created + "?include=content-blocks&" + pr, s.URL + "/contents?page[size]=1&filter[page]=" + page + "&" + pr,
		s.URL + "/contents/" + content + "/content-blocks?page[size]=1&" + pr, s.URL + "/contents/" + created + "/relationships/page?" + pr}
	sawTitle, sawCreated := false, false
	get := func(u string) (int, []byte) {
		resp, body := s.rawRequest(t, http.MethodGet, u, "Authorization", "Bearer "+e.token, "Accept", "application/vnd.api+json")
		return resp.StatusCode, body
	}
	pvCrawl(t, roots, get, func(u string, body []byte, doc any) (next []string) {
		sawCreated = sawCreated || strings.Contains(string(body), `"New in the token preview"`)
		for _, title := range pvTitlesOf(doc, page) { // the page as data or included
			if title != "About us, previewed" {
				t.Errorf("GET %s shows the page titled %q, not as the release drafts it", u, title)
			}
			sawTitle = true
		}
		for _, l := range pvLinksOf(doc, false) {
			if !strings.HasPrefix(l, s.URL+"/") || strings.Count(l, pr) != 1 || strings.Contains(l, "include=draft") {
				t.Errorf("GET %s advertises %s: want it under the API with %s once", u, l, pr)
				continue
			}
			next = append(next, l)
		}
		return next
	})
	if !sawTitle || !sawCreated {
		t.Errorf("followed reads showed the drafted title %v and the created content %v, want both", sawTitle, sawCreated)
	}
}

// pvTitlesOf are the titles of the resources of type pages and id page in
// a document (its data and included, a draft's object-changes left out).
func pvTitlesOf(v any, page string) []string {
	var out []string
	switch v := v.(type) {
	case []any:
		for _, x := range v {
			out = append(out, pvTitlesOf(x, page)...)
		}
	case map[string]any:
		if v["type"] == "pages" && v["id"] == page {
			if a, ok := v["attributes"].(map[string]any); ok {
				out = append(out, fmt.Sprint(a["title"]))
			}
		}
		for k, x := range v {
			if k != "attributes" && k != "links" {
				out = append(out, pvTitlesOf(x, page)...)
			}
		}
	}
	return out
}
