package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/pressroom/pressroom/api/jsonapi"
)

// applied, and nothing that include did not ask for.
type compound struct {
	q    *Query
	seen map[string]bool
	list []*jsonapi.Resource
}

func newCompound(q *Query, primary ...*jsonapi.Resource) *compound {
	cd := &compound{q: q, seen: map[string]bool{}, list: []*jsonapi.Resource{}}
	for _, r := range primary {
		cd.seen[r.Type+"/"+r.ID] = true
	}
	return cd
}

func (cd *compound) add(rs ...*jsonapi.Resource) {
	for _, r := range rs {
		if key := r.Type + "/" + r.ID; !cd.seen[key] {
			cd.seen[key] = true
			cd.list = append(cd.list, cd.q.Sparse(r))
		}
	}
}

// compoundDocument is a top-level document whose included member is
// always present, even when empty, as JSON:API asks when include is given.
type compoundDocument struct {
	Data     any                 `json:"data"`
	Included []*jsonapi.Resource `json:"included"`
	Links    *jsonapi.Links      `json:"links,omitempty"`
	Meta     map[string]any      `json:"meta,omitempty"`
	JSONAPI  *jsonapi.Version    `json:"jsonapi"`
}

// send writes the response: a compound document when include was given.
func (cd *compound) send(c *fiber.Ctx, status int, data any, l *jsonapi.Links, meta map[string]any) error {
	return respondIncluded(c, status, jsonapi.Document{Data: data, Included: cd.list, Links: l, Meta: meta}, len(cd.q.Include) > 0)
}

// sendOne writes one resource as primary data, with its ETag, and with its
// Location when it was just created.
func (cd *compound) sendOne(c *fiber.Ctx, status int, r *jsonapi.Resource, version int) error {
	setETag(c, r.ID, version)
	if status == fiber.StatusCreated {
		c.Set(fiber.HeaderLocation, r.Links.Self)
	}
	return cd.send(c, status, cd.q.Sparse(r), nil, nil)
}

// sendPage writes a page of the collection at path as primary data, with
// its pagination links and meta.total.
func (cd *compound) sendPage(c *fiber.Ctx, l links, path string, rs []*jsonapi.Resource, total int64) error {
	return cd.send(c, fiber.StatusOK, sparseAll(cd.q, rs), l.collection(path, cd.q, total), map[string]any{"total": total})
}

// sparseAll applies the sparse fieldsets to primary data.
func sparseAll(q *Query, rs []*jsonapi.Resource) []*jsonapi.Resource {
	out := make([]*jsonapi.Resource, len(rs))
	for i, r := range rs {
		out[i] = q.Sparse(r)
	}
	return out
}

// linkageDocument answers GET .../relationships/<name>.
func linkageDocument(c *fiber.Ctx, rel *jsonapi.Relationship) error {
	return respondRaw(c, fiber.StatusOK, map[string]any{"links": rel.Links, "data": rel.Data, "jsonapi": jsonapi.V11})
}

// nullDocument answers a related-resource link whose relationship is empty.
func nullDocument(c *fiber.Ctx, self string) error {
	return respondRaw(c, fiber.StatusOK, map[string]any{"data": nil, "links": &jsonapi.Links{Self: self}, "jsonapi": jsonapi.V11})
}

// respondIncluded writes doc, making sure included is present (possibly
// empty) whenever include was asked for, and absent otherwise.
func respondIncluded(c *fiber.Ctx, status int, doc jsonapi.Document, included bool) error {
	if !included {
		doc.Included = nil
		return respond(c, status, doc)
	}
	if doc.Included == nil {
		doc.Included = []*jsonapi.Resource{}
	}
	return respondRaw(c, status, compoundDocument{Data: doc.Data, Included: doc.Included, Links: doc.Links, Meta: doc.Meta, JSONAPI: jsonapi.V11})
}
