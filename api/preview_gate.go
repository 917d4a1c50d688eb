package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/valyala/fasthttp"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
	"github.com/pressroom/pressroom/render"
)

// What a preview link serves (docs/releases.md, "Preview links"): below
// its url, /preview/<token>, the site's ordinary read endpoints with the
// link's release as the preview release, and /render/<page path>, the
// page as HTML through its layout. previewGate runs first on every such
// request: it refuses all but GET (405), finds the link by its token (the
// database, every request: a revoked link is refused at once on every
// replica), answers 410 for a link that ended, counts the request against
// the link's rate limit, and then acts as a viewer of the link's site with
// the release as the preview (setPreviewRelease).

// previewPrefix is where links' urls begin.
const previewPrefix = "/preview/"

// previewReleaseKey holds the request's preview release (a uuid.UUID).
type previewReleaseKey struct{}

// setPreviewRelease makes the request's reads show the site as release id
// would make it: it sets the query parameter preview-release (previewParam,
// replacing any the client sent), which every read route's previews.wrap
// applies (preview.go), so a link's reads are exactly the reads of
// ?preview-release=<id>. The render route reads it with previewReleaseOf.
func setPreviewRelease(c *fiber.Ctx, id uuid.UUID) {
	c.Locals(previewReleaseKey{}, id)
	uri := c.Request().URI()
	args := uri.QueryArgs()
	args.Set(previewParam, id.String())
	uri.SetQueryStringBytes(args.QueryString()) // parseQuery reads the query string
}

// previewReleaseOf is the request's preview release, if any.
func previewReleaseOf(c *fiber.Ctx) (uuid.UUID, bool) {
	id, ok := c.Locals(previewReleaseKey{}).(uuid.UUID)
	return id, ok
}

// linkRead is a GET route behind the token that a preview link serves too.
type linkRead struct {
	path string
	perm models.Permission
	h    fiber.Handler
}

// linkReadable are the first segments of the read endpoints a link
// serves: the site's content and design, never its team, drafts,
// revisions, webhooks or links.
var linkReadable = map[string]bool{"site": true, "pages": true, "contents": true, "content-blocks": true, "layouts": true,
	"themes": true, "theme-assets": true, "assets": true, "asset-images": true, "hyperlinks": true}

// linkHidden are path segments a link never serves below those: drafts
// (the release's and everybody else's), who made what, and history.
var linkHidden = map[string]bool{"draft": true, "drafts": true, "user": true, "users": true, "revision": true,
	"revisions": true, "versions": true, "reverts": true}

// servedByLinks tells whether a link serves the read route path.
func servedByLinks(path string, p models.Permission) bool {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if p != models.PermRead || !linkReadable[segs[0]] {
		return false
	}
	for _, s := range segs {
		if linkHidden[s] {
			return false
		}
	}
	return true
}

// registerPreviewRoutes registers the gate and the render route of every
// link (the render route is described in specialRoutes), and gives the
// gate the read routes a link serves: reads, as routes.add recorded them,
// registered on an app of their own (linkReads), so the API's route table
// (and its description) holds each read once.
// The render route reads through the preview of the link's release, as
// the reads do (previews.wrap: drafts.WithPreview), so a page renders as
// the release would make it.
func registerPreviewRoutes(app *fiber.App, d Deps, errs fiber.ErrorHandler, reads []linkRead, pv *previews) {
	g := previewGate{db: d.DB, base: d.Config.PublicURL, reads: linkReads(d.Config, errs, reads)}
	rh := renderHandler{db: d.DB, engine: pv.engine, storage: d.Config.Storage, renderer: render.New(render.Limits{})}
	app.All(previewPrefix+":token/*", g.serve)
	app.Get(previewPrefix+":token/render/*", pv.wrap(rh.serve))
}

// outerContextKey carries the request's context (its deadline) into the
// link reads' app, whose Ctx is its own (Locals are the request's).
type outerContextKey struct{}

// linkReads is the handler of the read routes a link serves, at their own
// paths: the same handlers behind the same permission check; the gate has
// set the principal and the preview release.
func linkReads(cfg config.Config, errs fiber.ErrorHandler, reads []linkRead) fasthttp.RequestHandler {
	inner := newServer(cfg, errs)
	inner.Use(func(c *fiber.Ctx) error {
		if ctx, ok := c.Locals(outerContextKey{}).(context.Context); ok {
			c.SetUserContext(ctx)
		}
		return c.Next()
	})
	for _, rd := range reads {
		if servedByLinks(rd.path, rd.perm) {
			inner.Get(rd.path, require(rd.perm), rd.h)
		}
	}
	return inner.Handler()
}

type previewGate struct {
	db *bun.DB
	// base is the API's public URL, where documents' links point.
	base  string
	reads fasthttp.RequestHandler
}

// wantsHTML tells whether the answer of this request through a link is a
// page: the render route, or a browser's Accept.
func wantsHTML(c *fiber.Ctx) bool {
	return isRenderPath(c.Path()) || strings.Contains(c.Get(fiber.HeaderAccept), "text/html")
}

// isRenderPath tells whether path is a link's render route.
func isRenderPath(path string) bool {
	rest, ok := strings.CutPrefix(path, previewPrefix)
	if !ok {
		return false
	}
	_, after, _ := strings.Cut(rest, "/")
	return after == "render" || strings.HasPrefix(after, "render/")
}

func (g previewGate) serve(c *fiber.Ctx) error {
	// Nothing a link may be used for is private to the viewer's browser:
	// never cached by others, never sent as a Referer to another site.
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderReferrerPolicy, "no-referrer")
	if m := c.Method(); m != fiber.MethodGet && m != fiber.MethodHead {
		c.Set(fiber.HeaderAllow, "GET, HEAD")
		return jsonapi.NewError(fiber.StatusMethodNotAllowed, "method_not_allowed", "A preview link only reads: it answers GET and HEAD.")
	}
	u, ok, err := models.UsePreviewLink(c.UserContext(), g.db, c.Params("token"))
	if err != nil {
		return err
	}
	if !ok {
		return models.NotFound("preview link")
	}
	if why := linkEnded(u); why != "" {
		return gone(c, why)
	}
	if err := oauth.LimitRequest(c, &u.Usage, "This preview link"); err != nil {
		return err
	}
	if includesDraft(c.Query("include")) {
		return jsonapi.BadRequest("unknown_include", "A preview link shows the release: include=draft is not served.").AtParameter("include")
	}
	oauth.WithPrincipal(c, &oauth.Principal{SiteID: u.SiteID, Role: models.RoleViewer, Locales: u.Usage.Locales})
	setPreviewRelease(c, u.ReleaseID)
	// The link's locale, for a read that names none (one the site has
	// removed since: the default, as a link without one).
	if args := c.Request().URI().QueryArgs(); u.Locale != "" && !args.Has(localeParam) {
		if tag, ok := u.Usage.Locales.Find(u.Locale); ok {
			args.Set(localeParam, tag)
		}
	}
	if isRenderPath(c.Path()) {
		return c.Next()
	}
	// The read below the link's url, at its own path.
	rest, full := "/"+c.Params("*"), strings.Clone(c.Path())
	link := g.base + previewPrefix + strings.Clone(c.Params("token"))
	c.Locals(outerContextKey{}, c.UserContext())
	if g.base != "" {
		// The documents' links point at the link (preview_doc.go); relink
		// below catches a body that was not built by the document builder.
		setDocLinks(c, func(u string) (string, bool) { return linkURL(u, g.base, link) })
	}
	c.Request().URI().SetPath(rest)
	g.reads(c.Context())
	c.Request().URI().SetPath(full) // the buffers the outer Ctx reads
	if body := c.Response().Body(); g.base != "" && bytes.Contains(body, []byte(`"`+g.base+`/`)) {
		c.Response().SetBody(relink(body, g.base, link))
	}
	return nil
}

// relink points the links of a document read through a preview link at
// the link: every URL of a "links" member (self, related, first, last,
// prev, next, at any depth) under the API's base, which needs credentials,
// becomes the same path and query under the link's url, which answers it
// as a preview read (a preview-release in its query is the link's release
// either way); one the link does not serve (a draft relationship) is left
// out. So every link a document read through a link advertises answers
// through it, without credentials. Attributes are left as they are. A body
// that is not a JSON document is returned as it is.
func relink(body []byte, base, link string) []byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return body
	}
	relinkValue(doc, base, link)
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return body
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n"))
}

// relinkValue relinks the "links" objects in v (relink).
func relinkValue(v any, base, link string) {
	switch v := v.(type) {
	case []any:
		for _, x := range v {
			relinkValue(x, base, link)
		}
	case map[string]any:
		for k, x := range v {
			if k == "attributes" {
				continue // an author's value, even one named links
			}
			if ls, ok := x.(map[string]any); ok && k == "links" {
				relinkLinks(ls, base, link)
				if len(ls) == 0 {
					delete(v, k)
				}
				continue
			}
			relinkValue(x, base, link)
		}
	}
}

// relinkLinks relinks one links object's members (a URL, or a link
// object's href).
func relinkLinks(ls map[string]any, base, link string) {
	for name, l := range ls {
		u, isURL := l.(string)
		obj, isObj := l.(map[string]any)
		if isObj {
			u, isURL = obj["href"].(string)
		}
		if !isURL {
			continue // null, or a link object without href
		}
		to, ok := linkURL(u, base, link)
		switch {
		case !ok:
			delete(ls, name)
		case isObj:
			obj["href"] = to
		default:
			ls[name] = to
		}
	}
}

// linkURL is u under the link (u under base, or already under the link),
// and whether the link serves it; a URL elsewhere is kept as it is.
func linkURL(u, base, link string) (string, bool) {
	rest, ok := strings.CutPrefix(u, link+"/")
	if !ok {
		if rest, ok = strings.CutPrefix(u, base+"/"); !ok {
			return u, true
		}
	}
	path, _, _ := strings.Cut(rest, "?")
	if !servedByLinks("/"+path, models.PermRead) {
		return "", false
	}
	return link + "/" + rest, true
}

// linkEnded says why a link no longer works ("" while it does).
func linkEnded(u models.PreviewLinkUse) string {
	switch {
	case u.Revoked:
		return "This preview link was revoked."
	case u.Expired:
		return "This preview link has expired."
	case u.ReleaseStatus == "published":
		return "The release this link previewed has been published: the changes are live."
	case u.ReleaseStatus == "cancelled":
		return "The release this link previewed was cancelled."
	}
	return ""
}

// gone is 410: a page saying why for a browser or the render route, an
// error document otherwise.
func gone(c *fiber.Ctx, why string) error {
	if wantsHTML(c) {
		c.Status(fiber.StatusGone).Type("html", "utf-8")
		return c.Send(render.GonePage(why))
	}
	return jsonapi.NewError(fiber.StatusGone, "preview_link_gone", why)
}

// includesDraft tells whether an include list names a draft relationship.
func includesDraft(include string) bool {
	for _, p := range strings.Split(include, ",") {
		for _, s := range strings.Split(p, ".") {
			if linkHidden[strings.TrimSpace(s)] {
				return true
			}
		}
	}
	return false
}

// renderHandler serves GET {link}/render/<page path>.
type renderHandler struct {
	db       *bun.DB
	engine   *drafts.Engine
	storage  config.Storage
	renderer *render.Renderer
}

func (h renderHandler) serve(c *fiber.Ctx) error {
	path := "/" + strings.Trim(c.Params("*"), "/")
	if len(path) > 2048 {
		return models.NotFound("page at that path")
	}
	if !utf8.ValidString(path) || strings.ContainsRune(path, 0) {
		// The path arrives decoded (%FF, %00): PostgreSQL text cannot
		// hold it, so it is refused here, not as a 500 there.
		return jsonapi.BadRequest("invalid_character", "The page path must be valid UTF-8 without NUL (U+0000).")
	}
	// The preview of the link's release is in the context (previews.wrap).
	data, err := h.engine.PageToRender(c.UserContext(), h.db, siteOf(c), path)
	if errors.Is(err, models.ErrNotFound) {
		c.Status(fiber.StatusNotFound).Type("html", "utf-8")
		return c.Send(render.GonePage("No page of this preview is at " + path + "."))
	}
	if err != nil {
		return err
	}
	out, err := h.renderer.Render(c.UserContext(), render.Site{Title: data.SiteTitle}, h.page(data))
	var terr *render.Error
	if errors.As(err, &terr) {
		c.Status(fiber.StatusInternalServerError).Type("html", "utf-8")
		return c.Send(render.ErrorPage(terr))
	}
	if err != nil {
		return err
	}
	c.Type("html", "utf-8")
	return c.Send(out)
}

// page is the render's view of data: attributes named as the API names
// them, image blocks with their asset's url.
func (h renderHandler) page(data *models.RenderedPage) render.Page {
	p := data.Page
	attrs := map[string]any{"page-type": p.PageType, "slug": p.Slug, "path": p.Path, "title": p.Title,
		"description": deref(p.Description), "keywords": deref(p.Keywords), "canonical-url": deref(p.CanonicalURL),
		"search-engine-indexable": p.SearchEngineIndexable, "search-engine-followable": p.SearchEngineFollowable}
	out := render.Page{Attributes: attrs, Layout: data.Layout, Contents: make([]render.Content, len(data.Contents))}
	for i, c := range data.Contents {
		rc := render.Content{Title: c.Title, Blocks: make([]render.Block, len(c.Blocks))}
		for j, b := range c.Blocks {
			rc.Blocks[j] = render.Block{VarName: b.VarName, DataType: b.DataType, Body: b.Body}
			if b.StorageKey != nil {
				rc.Blocks[j].AssetURL = h.storage.PublicEndpoint + "/" + h.storage.AssetsBucket + "/" + *b.StorageKey
			}
		}
		out.Contents[i] = rc
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
