package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models"
)

// Relationships, derived from one table (DESIGN.md §2, §3). Every
// relationship of every type is declared once, in jsonapi.Relationships
// (its name, arity and target types). From that table the catalog
// derives, for every type:
//   - the routes of each relationship, GET /<type>/:id/<name> (the related
//     record, or a page of the related records) and
//     GET /<type>/:id/relationships/<name> (its linkage), so every link a
//     document advertises answers;
//   - include: every relationship a document shows can be included, read
//     through the linkage the document carries;
//   - the linkage of to-many relationships: always there, the first
//     maxPageSize identifiers, with links.next and meta.count when there
//     are more.
// What the table cannot say, each type's resourceType tells: how to read
// and render its records by id, and how to page through its to-many
// relationships.

// idPage is one page of a to-many relationship's linkage: the ids on the
// page, in the relationship's order, and how many it has in all; of a
// cursor page (models.Window's Keyset), the ids read (one past the page
// when another follows), nearest the cursor first, and their number.
type idPage struct {
	ids   []string
	total int
}

// manyFunc reads one page of a to-many relationship for each parent (ids
// of the caller's site's records): the ids at [offset, offset+limit) and
// the total, in a bounded number of site-scoped queries whatever the
// number of parents. drafted is the drafted view of draftable kinds.
type manyFunc func(ctx context.Context, siteID uuid.UUID, parents []uuid.UUID, drafted bool, w models.Window) (map[uuid.UUID]idPage, error)

// fetchFunc renders the caller's site's records of one type with the given
// ids (those it has, in any order), linkage and all, as GET /<type>/:id
// renders them; drafted is the drafted view of draftable kinds.
type fetchFunc func(ctx context.Context, siteID uuid.UUID, ids []uuid.UUID, drafted bool) ([]*jsonapi.Resource, error)

// resourceType is what the catalog needs of one resource type.
type resourceType struct {
	typ   string
	what  string // one record in a 404: "page", "theme asset"
	fetch fetchFunc
	// many pages through each to-many relationship.
	many map[string]manyFunc
	// drafted names relationships whose records are read drafted whatever
	// the request's view: a draft's item, what a hyperlink joins (the
	// links of drafted bodies join records that may be unpublished).
	drafted map[string]bool
	// related replaces the generic related endpoint of a relationship
	// where a richer one serves it (sort and filter of a theme's layouts).
	related map[string]fiber.Handler
	// draftable: a draftable kind, read drafted with include=draft.
	draftable bool
	// nested are include paths beyond the relationships' names.
	nested []string
	// params are the query parameters a to-many relationship's endpoints
	// take beyond paging, and how they reach its manyFunc (through the
	// context): a release's drafts take filter[locale].
	params map[string]relParams
}

// relParams are the extra query parameters of a to-many relationship:
// their names, and read, which judges them and returns the context the
// relationship's manyFunc then gets.
type relParams struct {
	names []string
	read  func(c *fiber.Ctx, ctx context.Context) (context.Context, error)
}

// catalog is every resource type the API renders, by type.
type catalog struct {
	links links
	types map[string]*resourceType
}

func newCatalog(l links) *catalog { return &catalog{links: l, types: map[string]*resourceType{}} }

// add registers t; its relationship routes are registered by routes.
func (cat *catalog) add(t *resourceType) { cat.types[t.typ] = t }

// routes registers the relationship endpoints of every type the catalog
// has (the site's, under /site, are registered by registerSiteRoutes). It
// fails, naming them, for a declared to-many relationship that cannot be
// paged and for a declared type missing from the catalog.
func (cat *catalog) routes(r routes) error {
	var missing []string
	for _, typ := range slices.Sorted(mapKeys(jsonapi.Relationships)) {
		t := cat.types[typ]
		switch {
		case typ == "sites" || typ == "publish-plans":
			continue // /site has its own routes; a publish plan is not kept
		case t == nil:
			missing = append(missing, typ+" (no resourceType)")
			continue
		}
		for _, name := range slices.Sorted(mapKeys(jsonapi.Relationships[typ])) {
			base := "/" + typ + "/:id/"
			if jsonapi.Relationships[typ][name].ToMany {
				if t.many[name] == nil {
					missing = append(missing, typ+"."+name+" (no many)")
					continue
				}
				r.get(base+"relationships/"+name, readPermission(typ), cat.manyEndpoint(t, name, true))
				r.get(base+name, readPermission(typ), orElse(t.related[name], cat.manyEndpoint(t, name, false)))
				continue
			}
			r.get(base+"relationships/"+name, readPermission(typ), cat.linkageOne(t, name))
			r.get(base+name, readPermission(typ), orElse(t.related[name], cat.relatedOne(t, name)))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("relationships without endpoints: %s", strings.Join(missing, ", "))
	}
	return nil
}

func orElse(h, otherwise fiber.Handler) fiber.Handler {
	if h != nil {
		return h
	}
	return otherwise
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// includesOf are the include paths a document of typ's records accepts:
// its relationships' names, then the nested paths given.
func includesOf(typ string, nested ...string) []string {
	return append(slices.Sorted(mapKeys(jsonapi.Relationships[typ])), nested...)
}

// fieldsOf are the types whose sparse fieldsets a document of typ's
// records (and what they include) accepts.
func fieldsOf(typ string, more ...string) []string {
	out := []string{typ}
	for _, name := range slices.Sorted(mapKeys(jsonapi.Relationships[typ])) {
		for _, t := range jsonapi.Relationships[typ][name].Types {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	for _, t := range more {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// spec is the query a document of t's records reads.
func (t *resourceType) spec(collection bool) QuerySpec {
	s := QuerySpec{Includes: includesOf(t.typ, t.nested...), Fields: fieldsOf(t.typ)}
	if collection {
		s.Collection = true
	}
	return s
}

// one reads the caller's site's record of t the URL's :id names (404
// otherwise), rendered as GET /<type>/:id renders it.
func (cat *catalog) one(c *fiber.Ctx, t *resourceType, drafted bool) (*jsonapi.Resource, uuid.UUID, error) {
	id, err := idParam(c, t.what)
	if err != nil {
		return nil, id, err
	}
	rs, err := t.fetch(c.UserContext(), siteOf(c), []uuid.UUID{id}, drafted)
	if err != nil {
		return nil, id, err
	}
	if len(rs) == 0 {
		return nil, id, models.NotFound(t.what)
	}
	return rs[0], id, nil
}

// fetch renders the records of typ with the given ids, in their order
// (those the site has); unknown types and ids that are not UUIDs are none.
func (cat *catalog) fetch(ctx context.Context, siteID uuid.UUID, typ string, ids []string, drafted bool) ([]*jsonapi.Resource, error) {
	t := cat.types[typ]
	if t == nil || len(ids) == 0 {
		return nil, nil
	}
	uids := make([]uuid.UUID, 0, len(ids))
	for _, s := range ids {
		if id, err := uuid.Parse(s); err == nil {
			uids = append(uids, id)
		}
	}
	rs, err := t.fetch(ctx, siteID, models.Unique(uids), drafted)
	if err != nil || len(rs) < 2 {
		return rs, err
	}
	at := make(map[string]int, len(ids))
	for i, id := range ids {
		if _, seen := at[id]; !seen {
			at[id] = i
		}
	}
	slices.SortStableFunc(rs, func(a, b *jsonapi.Resource) int { return at[a.ID] - at[b.ID] })
	return rs, nil
}

// linkageOf reads a relationship's linkage back into identifiers.
func linkageOf(rel *jsonapi.Relationship) []jsonapi.Identifier {
	if rel == nil || len(rel.Data) == 0 || string(rel.Data) == "null" || string(rel.Data) == "[]" {
		return nil
	}
	d := rel.Data
	if d[0] == '{' {
		var one jsonapi.Identifier
		if json.Unmarshal(d, &one) != nil {
			return nil
		}
		return []jsonapi.Identifier{one}
	}
	var many []jsonapi.Identifier
	_ = json.Unmarshal(d, &many) // null: none
	return many
}

// setPage sets a to-many relationship's data to its first page: with
// links.next (the relationship endpoint's next page) when it has more,
// and meta.count, the whole count.
func setPage(rel *jsonapi.Relationship, typ string, p idPage, drafted bool) {
	ids := p.ids
	if ids == nil {
		ids = []string{}
	}
	rel.Data = jsonapi.ToMany(typ, ids)
	rel.Meta = map[string]any{"count": p.total}
	if p.total > len(ids) && rel.Links != nil {
		v := url.Values{"page[number]": {"2"}, "page[size]": {strconv.Itoa(maxPageSize)}}
		if drafted {
			v.Set("include", "draft")
		}
		next := *rel.Links
		self, _, _ := strings.Cut(rel.Links.Self, "?") // a drafted record's carries include=draft, set again above
		next.Next = self + "?" + v.Encode()
		rel.Links = &next
	}
}

// fillMany sets the linkage of every to-many relationship of rs, records
// of t: one many call per relationship for all of them.
func (cat *catalog) fillMany(ctx context.Context, siteID uuid.UUID, t *resourceType, rs []*jsonapi.Resource, drafted bool) error {
	if len(rs) == 0 || len(t.many) == 0 {
		return nil
	}
	for _, name := range slices.Sorted(mapKeys(t.many)) {
		// Those the renderer left without linkage (a revision's drafts it
		// reads from the row).
		var todo []*jsonapi.Relationship
		var parents []uuid.UUID
		for _, r := range rs {
			if rel := r.Relationships[name]; rel != nil && rel.Data == nil {
				id, _ := uuid.Parse(r.ID) // rendered ids are UUIDs
				todo, parents = append(todo, rel), append(parents, id)
			}
		}
		if len(todo) == 0 {
			continue
		}
		pages, err := t.many[name](ctx, siteID, parents, drafted, models.Window{Limit: maxPageSize})
		if err != nil {
			return err
		}
		typ := jsonapi.Relationships[t.typ][name].Types[0]
		for i, rel := range todo {
			setPage(rel, typ, pages[parents[i]], drafted)
		}
	}
	return nil
}

// idPages turns ranked rows (models.RankPages) into one page per parent:
// the ids ranked past the window's offset, and each parent's total; of a
// cursor window, every row read and their number.
func idPages(rows []models.Ranked, parents []uuid.UUID, w models.Window) map[uuid.UUID]idPage {
	out := make(map[uuid.UUID]idPage, len(parents))
	for _, p := range parents {
		out[p] = idPage{ids: []string{}}
	}
	for _, r := range rows {
		p, ok := out[r.Parent]
		if !ok {
			continue
		}
		switch {
		case w.Keyset != nil:
			p.ids = append(p.ids, r.ID.String())
			p.total = len(p.ids)
		case r.N > w.Offset:
			p.ids = append(p.ids, r.ID.String())
			fallthrough
		default:
			p.total = r.Total
		}
		out[r.Parent] = p
	}
	return out
}

// windowPage is the window w of ids, a relationship's whole list read in
// memory, as idPages makes it of ranked rows: by number, the ids at
// [offset, offset+limit) and the total; by cursor, the limit+1 ids after
// (before: before, nearest first) the cursor's and their number (none
// when the cursor is not in the list).
func windowPage(ids []string, w models.Window) idPage {
	if w.Keyset == nil {
		p := idPage{ids: []string{}, total: len(ids)}
		if w.Offset < len(ids) {
			p.ids = append(p.ids, ids[w.Offset:min(len(ids), w.Offset+w.Limit)]...)
		}
		return p
	}
	at, n := -1, w.Limit+1
	if w.Keyset.Before {
		at = len(ids)
	}
	if k := w.Keyset.ID; k != uuid.Nil {
		if at = slices.Index(ids, k.String()); at < 0 {
			return idPage{ids: []string{}}
		}
	}
	var out []string
	if w.Keyset.Before {
		out = slices.Clone(ids[max(0, at-n):at])
		slices.Reverse(out)
	} else {
		out = slices.Clone(ids[at+1 : min(len(ids), at+1+n)])
	}
	return idPage{ids: append([]string{}, out...), total: len(out)}
}

// childMany is the manyFunc of a relationship whose records are the rows
// of table pointing at the parent through column parent, in order
// (models.ChildPages).
func childMany(db bun.IDB, table, parent string, order models.Order) manyFunc {
	return func(ctx context.Context, siteID uuid.UUID, parents []uuid.UUID, _ bool, w models.Window) (map[uuid.UUID]idPage, error) {
		rows, err := models.ChildPages(ctx, db, table, parent, order, siteID, parents, w)
		if err != nil {
			return nil, err
		}
		return idPages(rows, parents, w), nil
	}
}

// byIDs is the fetchFunc of a type whose records are rows of model M
// (models.ByIDs), rendered one by one.
func byIDs[M any](db bun.IDB, render func(*M) *jsonapi.Resource) fetchFunc {
	return fetchRows(db, models.ByIDs[M], renderEach(render))
}

// rowsByIDs is a store's read of the site's rows with the given ids
// (models.ByIDs and the stores that join more than one table).
type rowsByIDs[M any] func(ctx context.Context, db bun.IDB, siteID uuid.UUID, ids []uuid.UUID) ([]M, error)

// fetchRows is the fetchFunc of a type whose rows load reads and render
// turns into resources: the one way include and relationship reads load a
// type's records.
func fetchRows[M any](db bun.IDB, load rowsByIDs[M], render func(context.Context, uuid.UUID, []M) ([]*jsonapi.Resource, error)) fetchFunc {
	return func(ctx context.Context, siteID uuid.UUID, ids []uuid.UUID, _ bool) ([]*jsonapi.Resource, error) {
		rows, err := load(ctx, db, siteID, ids)
		if err != nil {
			return nil, err
		}
		return render(ctx, siteID, rows)
	}
}

// get serves GET /<type>/:id of t: the record, what include asks for, and
// its ETag when it is versioned.
func (cat *catalog) get(t *resourceType) fiber.Handler {
	return func(c *fiber.Ctx) error {
		q, err := parseQuery(c, t.spec(false))
		if err != nil {
			return err
		}
		r, _, err := cat.one(c, t, false)
		if err != nil {
			return err
		}
		return cat.respondOne(c, q, fiber.StatusOK, r)
	}
}

// respondOne writes r as primary data with what include asks for, and its
// ETag when it is versioned.
func (cat *catalog) respondOne(c *fiber.Ctx, q *Query, status int, r *jsonapi.Resource) error {
	cd := newCompound(q, r)
	if err := cat.include(c.UserContext(), siteOf(c), q, cd, []*jsonapi.Resource{r}, false); err != nil {
		return err
	}
	if v, ok := r.Meta["version"].(int); ok {
		setETag(c, r.ID, v)
	}
	return cd.respondOne(c, status, r)
}
