package api

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
)

// contentHandler serves one draftable kind (pages, contents or
// content-blocks): every write is saved as a draft (DESIGN.md §4).
type contentHandler struct {
	db     *bun.DB
	engine *drafts.Engine
	kind   *drafts.Kind
	links  links
	// The kind's defaults and rules are its fields' (drafts.Kind,
	// Engine.Check); the queries a list takes are the handler's (its
	// filters: filterTable).
	sorts map[string]string
	// lists are the kind's read-only to-many relationships, which other
	// records make up (content_related.go).
	lists []string
	// loads batches the reads of GET /<kind>/:id: concurrent requests for
	// different records of a site share one query.
	loads *drafts.Loader
	// cat includes what a read asks for and fills the to-many linkage;
	// drafts renders the drafts a read includes.
	cat    *catalog
	drafts *draftRenderer
	// specs are spec's answers, computed once; the third is GET
	// /<kind>/:id's (as-of, docs/history.md).
	specs [3]QuerySpec
}

// roAttributes are set by the server; sending one is 422.
var roAttributes = map[string]bool{"path": true, "published-at": true, "trashed-at": true, "created-at": true, "updated-at": true}

// formatTime turns a to_jsonb timestamp into the spec's format.
func formatTime(v any) any {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	if out, ok := utcMillis(s); ok {
		return out
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return timestamp(t)
}

// utcMillis is timestamp(time.Parse(time.RFC3339Nano, s)) for the form
// to_jsonb writes in a UTC session, "2006-01-02T15:04:05[.ffffff]+00:00",
// without parsing: the date and time as they are, the fraction truncated
// to milliseconds as Format does. Each rendered page has four timestamps,
// and parsing and formatting them was a tenth of its rendering. Any other
// form (another offset, odd digits) is false: formatTime parses it.
func utcMillis(s string) (string, bool) {
	const head = len("2006-01-02T15:04:05")
	if len(s) < head+len("+00:00") || s[len(s)-6:] != "+00:00" || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return "", false
	}
	for _, i := range [...]int{0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18} {
		if s[i] < '0' || s[i] > '9' {
			return "", false
		}
	}
	frac := s[head : len(s)-6]
	if frac != "" {
		if frac[0] != '.' || len(frac) < 2 || len(frac) > 10 {
			return "", false
		}
		frac = frac[1:]
		for i := range len(frac) {
			if frac[i] < '0' || frac[i] > '9' {
				return "", false
			}
		}
	}
	// What time.Parse would refuse (February 30th, hour 24...) is left to
	// it: only dates and times in their ranges take the fast path.
	year, mo, d, hh, mm, ss := two(s)*100+two(s[2:]), two(s[5:]), two(s[8:]), two(s[11:]), two(s[14:]), two(s[17:])
	if mo < 1 || mo > 12 || d < 1 || d > daysIn(mo, year) || hh > 23 || mm > 59 || ss > 59 {
		return "", false
	}
	var b [len("2006-01-02T15:04:05.000Z")]byte
	copy(b[:], s[:head])
	b[head] = '.'
	for i := range 3 {
		b[head+1+i] = '0'
		if i < len(frac) {
			b[head+1+i] = frac[i]
		}
	}
	b[len(b)-1] = 'Z'
	return string(b[:]), true
}

// daysIn is the number of days of month mo of year.
func daysIn(mo, year int) int {
	switch mo {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// two is the number the two digits at s's start write.
func two(s string) int { return int(s[0]-'0')*10 + int(s[1]-'0') }

func (h contentHandler) path(id string) string { return "/" + h.kind.Type + "/" + id }

// singular names one record of the kind in messages: "page", "content"...
func (h contentHandler) singular() string { return strings.TrimSuffix(h.kind.Type, "s") }

// draftedPaths derives the drafted paths of pages in one query (nil for
// other kinds), so a list renders without a query per page and ancestor.
func (h contentHandler) draftedPaths(ctx context.Context, siteID uuid.UUID, views ...*drafts.View) (map[uuid.UUID]string, error) {
	if h.kind != drafts.Pages {
		return nil, nil
	}
	// A page with no drafted parent needs no query: its path is its slug;
	// nor one whose load derived it (a write's, drafts.LockForWrite).
	err := h.engine.FillDraftedPaths(ctx, h.db, siteID, views...)
	out := map[uuid.UUID]string{}
	for _, v := range views {
		if v.DraftedPath != nil {
			out[v.Row.ID()] = *v.DraftedPath
		}
	}
	return out, err
}

// resource renders a view: the live row, or with drafted the draft's state
// (paths, from draftedPaths, gives drafted pages their paths), in locale
// loc (drafts.LocaleOf: the zero Locale on a site with one locale, whose
// documents are the rows' own columns, as before locales existed).
// created are the links of a record only the drafted view has (an
// unpublished create): links.drafted, or under a preview links.previewed.
func (h contentHandler) resource(v *drafts.View, drafted bool, paths map[uuid.UUID]string, created links, loc drafts.Locale) *jsonapi.Resource {
	row := v.Row
	if drafted {
		row = v.Drafted()
	}
	// to_jsonb writes a uuid in its canonical form, what ID().String()
	// gives, without parsing and formatting it again.
	id, ok := row["id"].(string)
	if !ok || len(id) != 36 {
		id = row.ID().String()
	}
	self, l := h.path(id), h.links
	if drafted && !v.Row.Live() {
		l = created // an unpublished create: GET /<kind>/:id alone is 404
	}
	attrs := make(map[string]any, len(h.kind.Fields)+len(h.kind.Derived)+len(timestampAttributes))
	rels := make(map[string]*jsonapi.Relationship, 4+len(h.lists))
	var fallbacks map[string]any
	for _, f := range h.kind.Fields {
		switch {
		case f.IsRef():
			var ref *string
			if s, ok := row[f.Column].(string); ok && s != "" {
				ref = &s
			}
			rels[f.Name] = l.relationship(self, f.Name, jsonapi.ToOne(f.RefType, ref))
		case f.Localized && loc.Tag != "":
			attrs[f.Name] = localized(row, f, loc, &fallbacks)
		default:
			attrs[f.Name] = row[f.Column]
		}
	}
	for _, f := range h.kind.Derived {
		attrs[f.Name] = row[f.Column]
	}
	if p, ok := paths[v.Row.ID()]; drafted && ok {
		// Drafted slugs or parents anywhere up the tree move a page's path.
		attrs["path"] = p
	}
	for _, ts := range timestampAttributes {
		attrs[ts.name] = formatTime(row[ts.column])
	}
	var draftID *string
	if v.Draft != nil {
		s := v.Draft.ID.String()
		draftID = &s
	}
	rels["draft"] = l.relationship(self, "draft", jsonapi.ToOne("drafts", draftID))
	for _, name := range h.lists {
		rels[name] = l.relationship(self, name, nil) // linkage: catalog.fillMany
	}
	r := versioned(&jsonapi.Resource{Type: h.kind.Type, ID: id, Attributes: attrs, Relationships: rels, Links: l.self(self)}, v.Row.Version())
	if fallbacks != nil {
		r.Meta[fallbacksMeta] = fallbacks
	}
	return r
}

// localized is localized field f's value in loc, found along loc's chain
// (tag, fallbacks, default, base: drafts.Locale.Pick); a value of another
// locale is named in *fallbacks (made on the first), for meta.fallbacks.
func localized(row drafts.Row, f drafts.Field, loc drafts.Locale, fallbacks *map[string]any) any {
	val, from := loc.Pick(row, f)
	if from != loc.Tag {
		if *fallbacks == nil {
			*fallbacks = map[string]any{}
		}
		(*fallbacks)[f.Name] = from
	}
	return val
}

// fallbacksMeta is the resource meta that maps an attribute to the locale
// its value came from, when that is not the locale read
// (docs/locales.md); absent when every value is the locale's own.
const fallbacksMeta = "fallbacks"

// timestampAttributes are the timestamps every content resource has.
var timestampAttributes = [...]struct{ column, name string }{
	{"published_at", "published-at"}, {"trashed_at", "trashed-at"}, {"created_at", "created-at"}, {"updated_at", "updated-at"},
}

// spec is the query a read of the kind accepts (set up by
// registerContentRoutes: GET /pages/:id is the hot path).
func (h contentHandler) spec(collection bool) QuerySpec {
	if collection {
		return h.specs[1]
	}
	return h.specs[0]
}

// querySpecs are the kind's specs for one record and for its list.
func (h contentHandler) querySpecs() [3]QuerySpec {
	one := QuerySpec{Includes: includesOf(h.kind.Type), Fields: fieldsOf(h.kind.Type)}
	list := one
	list.Collection, list.Sorts, list.DefaultSort = true, h.sorts, models.OrderOldest
	list.Operators, list.Type = filterTable(h.kind.Type), h.kind.Type
	list.Search = h.kind.Type
	list.Extra = []string{trashedParam} // the trash (trash.go)
	get := one
	get.Extra = []string{"as-of"}
	return [3]QuerySpec{one, list, get}
}

// list serves GET /<kind>: live records, or with include=draft every record
// as drafted (unpublished creates included), or with filter[trashed]=true
// the trash (trash.go).
func (h contentHandler) list(c *fiber.Ctx) error {
	q, err := parseQuery(c, h.spec(true))
	if err != nil {
		return err
	}
	if trashed, err := trashedFilter(q); err != nil || trashed {
		if err != nil {
			return err
		}
		return h.trash(c, q)
	}
	ctx, siteID := c.UserContext(), siteOf(c)
	withDraft := q.Drafted()
	views, total, err := drafts.ListViews(ctx, h.db, h.kind, siteID, withDraft, q.Apply)
	if err != nil {
		return err
	}
	views = cursorRows(q, views)
	data, err := h.render(ctx, siteID, views, withDraft)
	if err != nil {
		return err
	}
	if err := annotateSearch(ctx, h.db, q, data); err != nil {
		return err
	}
	cd, err := h.compound(ctx, q, siteID, views, data, withDraft)
	if err != nil {
		return err
	}
	return cd.respond(c, fiber.StatusOK, sparseAll(q, data), h.links.collection("/"+h.kind.Type, q, total, data), q.listMeta(total))
}

// compound collects what include asks for of views, rendered as rs: their
// drafts from the views themselves (no read), the rest through the
// catalog.
func (h contentHandler) compound(ctx context.Context, q *Query, siteID uuid.UUID, views []*drafts.View, rs []*jsonapi.Resource, drafted bool) (*compound, error) {
	cd := newCompound(q, rs...)
	if len(q.Include) == 0 {
		return cd, nil
	}
	if q.Include["draft"] {
		var ds []*drafts.Draft
		for _, v := range views {
			if v.Draft != nil {
				ds = append(ds, v.Draft)
			}
		}
		dr, err := h.drafts.render(ctx, siteID, ds)
		if err != nil {
			return nil, err
		}
		cd.add(dr...)
	}
	return cd, h.cat.include(ctx, siteID, q, cd, rs, drafted)
}

// target reads what every /<kind>/:id route starts with: the query and the id.
func (h contentHandler) target(c *fiber.Ctx) (*Query, uuid.UUID, error) {
	q, err := parseQuery(c, h.spec(false))
	if err != nil {
		return nil, uuid.Nil, err
	}
	id, err := idParam(c, h.singular())
	return q, id, err
}

// get serves GET /<kind>/:id (with include=draft, the drafted view).
func (h contentHandler) get(c *fiber.Ctx) error {
	q, err := parseQuery(c, h.specs[2])
	if err != nil {
		return err
	}
	id, err := idParam(c, h.singular())
	if err != nil {
		return err
	}
	if q.Values.Has("as-of") {
		return h.getAsOf(c, q, id)
	}
	siteID := siteOf(c)
	v, err := h.loads.Load(c.UserContext(), siteID, id, q.Drafted())
	if err != nil {
		return err
	}
	if v == nil {
		return models.NotFound(h.singular())
	}
	return h.respondView(c, fiber.StatusOK, q, siteID, v, q.Drafted())
}

func (h contentHandler) respondView(c *fiber.Ctx, status int, q *Query, siteID uuid.UUID, v *drafts.View, drafted bool) error {
	ctx := c.UserContext()
	rs, err := h.render(ctx, siteID, []*drafts.View{v}, drafted)
	if err != nil {
		return err
	}
	r := rs[0]
	doc := jsonapi.Document{Data: q.Sparse(r)}
	if len(q.Include) > 0 {
		cd, err := h.compound(ctx, q, siteID, []*drafts.View{v}, rs, drafted)
		if err != nil {
			return err
		}
		doc.Included = cd.list
	}
	setETag(c, r.ID, v.Row.Version())
	if status == fiber.StatusCreated {
		c.Set(fiber.HeaderLocation, r.Links.Self) // where it reads: ?include=draft until published
	}
	return respondIncluded(c, status, doc, len(q.Include) > 0)
}

// registerContentRoutes registers /pages, /contents and /content-blocks
// (their relationships' endpoints: catalog.routes).
func registerContentRoutes(r routes, engine *drafts.Engine) {
	d := r.deps
	kinds := map[string]contentHandler{
		"pages": {db: d.DB, engine: engine, kind: drafts.Pages, links: r.links,
			sorts: map[string]string{"title": "title", "path": "path", "created-at": "created_at", "updated-at": "updated_at", "published-at": "published_at"}},
		"contents": {db: d.DB, engine: engine, kind: drafts.Contents, links: r.links,
			sorts: map[string]string{"title": "title", "position": "position", "created-at": "created_at", "updated-at": "updated_at"}},
		"content-blocks": {db: d.DB, engine: engine, kind: drafts.ContentBlocks, links: r.links,
			sorts: map[string]string{"position": "position", "var-name": "var_name", "created-at": "created_at", "updated-at": "updated_at"}},
	}
	// The read-only to-many relationships (content_related.go).
	for typ, h := range kinds {
		for _, name := range slices.Sorted(mapKeys(jsonapi.Relationships[typ])) {
			if jsonapi.Relationships[typ][name].ToMany {
				h.lists = append(h.lists, name)
			}
		}
		h.cat, h.drafts = r.cat, r.drafts
		h.specs = h.querySpecs()
		kinds[typ] = h
	}
	// Reads of drafted content are the hot path: identical concurrent ones
	// share a run (shared_reads.go).
	shared := &sharedReads{}
	// A live record's document, and its document in a release's preview,
	// is kept by the process's read cache (read_cache.go, docs/caching.md);
	// outside the preview and the shared run, so a hit computes neither.
	cached := cachedReads{cache: d.Reads}
	for typ, h := range kinds {
		h.loads = engine.NewLoader(d.DB, h.kind)
		kinds[typ] = h
		r.get("/"+typ, models.PermRead, shared.wrap(h.list))
		r.post("/"+typ, models.PermEdit, h.create)
		r.getLoaded("/"+typ+"/:id", models.PermRead, shared.wrap(h.get), cached.wrap)
		r.patch("/"+typ+"/:id", models.PermEdit, h.update)
		r.get("/"+typ+"/:id/versions", models.PermRead, h.history)
		r.delete("/"+typ+"/:id", models.PermEdit, h.remove)
		r.cat.add(h.contentType())
	}
	// Restoring a version as drafts (version_restore.go): a write of drafts,
	// as PATCH is.
	r.post("/versions/:id/restore", models.PermEdit, restorer{db: d.DB, engine: engine, kinds: kinds, drafts: r.drafts}.restore)
}
