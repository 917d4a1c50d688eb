package api

import (
	"context"
	"encoding/json"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models"
)

// compound collects the included resources of a response: each resource
// once (and never one that is primary data), with the sparse fieldsets
// applied, and nothing that include did not ask for. catalog.include fills
// it from the linkage of the primary data.
type compound struct {
	q *Query
	// full holds every resource of the document (primary data and
	// included) by type/id, as rendered: nested include paths walk on from
	// them, and a resource is never read twice.
	full map[string]*jsonapi.Resource
	list []*jsonapi.Resource
}

func newCompound(q *Query, primary ...*jsonapi.Resource) *compound {
	cd := &compound{q: q, full: make(map[string]*jsonapi.Resource, len(primary)), list: []*jsonapi.Resource{}}
	for _, r := range primary {
		cd.full[r.Type+"/"+r.ID] = r
	}
	return cd
}

// add includes rs (those not in the document yet).
func (cd *compound) add(rs ...*jsonapi.Resource) {
	for _, r := range rs {
		if key := r.Type + "/" + r.ID; cd.full[key] == nil {
			cd.full[key] = r
			cd.list = append(cd.list, cd.q.Sparse(r))
		}
	}
}

// respond writes the response: a compound document when include was given.
func (cd *compound) respond(c *fiber.Ctx, status int, data any, l *jsonapi.Links, meta map[string]any) error {
	return respondIncluded(c, status, jsonapi.Document{Data: data, Included: cd.list, Links: l, Meta: meta}, len(cd.q.Include) > 0)
}

// respondOne writes one resource as primary data, with its Location when it
// was just created.
func (cd *compound) respondOne(c *fiber.Ctx, status int, r *jsonapi.Resource) error {
	if status == fiber.StatusCreated {
		c.Set(fiber.HeaderLocation, r.Links.Self)
	}
	return cd.respond(c, status, cd.q.Sparse(r), nil, nil)
}

// respondPage writes a page of the collection at path as primary data, with
// its pagination links and meta.total.
func (cd *compound) respondPage(c *fiber.Ctx, l links, path string, rs []*jsonapi.Resource, total int64) error {
	return cd.respond(c, fiber.StatusOK, sparseAll(cd.q, rs), l.collection(path, cd.q, total, rs), cd.q.listMeta(total))
}

// sparseAll applies the sparse fieldsets to primary data.
func sparseAll(q *Query, rs []*jsonapi.Resource) []*jsonapi.Resource {
	out := make([]*jsonapi.Resource, len(rs))
	for i, r := range rs {
		out[i] = q.Sparse(r)
	}
	return out
}

// respondLinkage answers GET .../relationships/<name>.
func respondLinkage(c *fiber.Ctx, rel *jsonapi.Relationship) error {
	return respond(c, fiber.StatusOK, jsonapi.Document{Data: json.RawMessage(rel.Data), Links: rel.Links})
}

// respondNull answers a related-resource link whose relationship is empty
// (or names a record gone since): data null, and included [] when include
// was asked for.
func respondNull(c *fiber.Ctx, self string, q *Query) error {
	return respondIncluded(c, fiber.StatusOK, jsonapi.Document{Links: &jsonapi.Links{Self: self}, Included: []*jsonapi.Resource{}},
		q != nil && len(q.Include) > 0)
}

// respondIncluded writes doc, making sure included is present (possibly
// empty) whenever include was asked for, and absent otherwise.
func respondIncluded(c *fiber.Ctx, status int, doc jsonapi.Document, included bool) error {
	if !included {
		doc.Included = nil
	}
	return writeDocument(c, status, doc, included)
}

// rowRenderer writes rows of one type (themes, layouts, theme assets,
// assets, drafts, webhooks, webhook deliveries) as primary data with what
// include asks for: render makes their resources (linkage and all), cat
// includes what their linkage names, version reads a row's version (its
// ETag; nil: rows without one, answered without an ETag).
type rowRenderer[M any] struct {
	render  func(ctx context.Context, siteID uuid.UUID, rows []M) ([]*jsonapi.Resource, error)
	cat     *catalog
	version func(*M) int
	// searchDB answers filter[q]'s highlights (lists that take it).
	searchDB bun.IDB
}

// compound renders rows and collects what include asks for.
func (rr rowRenderer[M]) compound(c *fiber.Ctx, q *Query, siteID uuid.UUID, rows []M) ([]*jsonapi.Resource, *compound, error) {
	rs, err := rr.render(c.UserContext(), siteID, rows)
	if err != nil {
		return nil, nil, err
	}
	cd := newCompound(q, rs...)
	if err := rr.cat.include(c.UserContext(), siteID, q, cd, rs, false); err != nil {
		return nil, nil, err
	}
	return rs, cd, nil
}

// renderEach is the render of rows that render one at a time, without
// queries.
func renderEach[M any](one func(*M) *jsonapi.Resource) func(context.Context, uuid.UUID, []M) ([]*jsonapi.Resource, error) {
	return func(_ context.Context, _ uuid.UUID, rows []M) ([]*jsonapi.Resource, error) {
		rs := make([]*jsonapi.Resource, len(rows))
		for i := range rows {
			rs[i] = one(&rows[i])
		}
		return rs, nil
	}
}

// siteList loads one page of a site's rows (models.ListThemes and the like).
type siteList[M any] func(ctx context.Context, db bun.IDB, siteID uuid.UUID, page models.Page) ([]M, int64, error)

// list serves GET <path>: one page of the caller's site's rows from list.
func (rr rowRenderer[M]) list(spec QuerySpec, l links, path string, db bun.IDB, list siteList[M]) fiber.Handler {
	return func(c *fiber.Ctx) error {
		siteID := siteOf(c)
		return rr.respondPage(c, spec, l, path, siteID, func(ctx context.Context, page models.Page) ([]M, int64, error) {
			return list(ctx, db, siteID, page)
		})
	}
}

// respondPage serves a GET of a collection of the site's rows: the query
// read against spec, one page of rows from list, written as the collection
// at path.
func (rr rowRenderer[M]) respondPage(c *fiber.Ctx, spec QuerySpec, l links, path string, siteID uuid.UUID,
	list func(context.Context, models.Page) ([]M, int64, error)) error {
	q, err := parseQuery(c, spec)
	if err != nil {
		return err
	}
	rows, total, err := list(c.UserContext(), q.Apply)
	if err != nil {
		return err
	}
	rows = cursorRows(q, rows)
	rs, cd, err := rr.compound(c, q, siteID, rows)
	if err != nil {
		return err
	}
	if err := annotateSearch(c.UserContext(), rr.searchDB, q, rs); err != nil {
		return err
	}
	return cd.respondPage(c, l, path, rs, total)
}

// respondOne writes one row of the caller's site as primary data.
func (rr rowRenderer[M]) respondOne(c *fiber.Ctx, q *Query, status int, row *M) error {
	rs, cd, err := rr.compound(c, q, siteOf(c), []M{*row})
	if err != nil {
		return err
	}
	if rr.version != nil {
		setETag(c, rs[0].ID, rr.version(row))
	}
	return cd.respondOne(c, status, rs[0])
}

// get serves a GET of the row load finds, read with the query against spec.
func (rr rowRenderer[M]) get(spec QuerySpec, load func(*fiber.Ctx) (*M, error)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		return serveOne(c, spec, load, func(q *Query, row *M) error { return rr.respondOne(c, q, fiber.StatusOK, row) })
	}
}

// loadByID finds the caller's site's record that the URL's :id names; what
// names its type in a 404.
func loadByID[M any](c *fiber.Ctx, db bun.IDB, what string, find models.FindFunc[M]) (*M, error) {
	if probing(c) { // the OpenAPI description's probe: a record, to reach the query (openapi_query.go)
		return new(M), nil
	}
	id, err := idParam(c, what)
	if err != nil {
		return nil, err
	}
	return find(c.UserContext(), db, siteOf(c), id)
}
