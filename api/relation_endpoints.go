package api

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pressroom/pressroom/api/jsonapi"
)

// The endpoints every relationship gets (catalog.routes), and include.
//
// On a draftable record (pages, contents, content blocks) include=draft
// reads the drafted view, as GET /<kind>/:id?include=draft does, and
// included holds the drafts that view comes from: the listed records'
// when they are draftable, the record's own otherwise.

// relatedOne serves GET /<type>/:id/<name> of a to-one relationship: the
// record its linkage names, read and written as GET /<its type>/:id does
// (include and fields too), or data null when it names none or a record
// gone since (the item of a version whose deletion was published).
func (cat *catalog) relatedOne(t *resourceType, name string) fiber.Handler {
	var spec QuerySpec
	for _, typ := range jsonapi.Relationships[t.typ][name].Types {
		spec.Includes = union(spec.Includes, includesOf(typ, cat.nested(typ)...))
		spec.Fields = union(spec.Fields, fieldsOf(typ))
	}
	spec = t.viewSpec(spec)
	return func(c *fiber.Ctx) error {
		q, err := parseQuery(c, spec)
		if err != nil {
			return err
		}
		ctx, siteID, drafted := c.UserContext(), siteOf(c), q.Drafted()
		src, _, err := cat.one(c, t, drafted)
		if err != nil {
			return err
		}
		self := cat.links.base + c.OriginalURL() // with its query: include=draft reads another view
		ids := linkageOf(src.Relationships[name])
		if len(ids) == 0 {
			return respondNull(c, self, q)
		}
		rs, err := cat.fetch(ctx, siteID, ids[0].Type, []string{ids[0].ID}, drafted || t.drafted[name])
		if err != nil {
			return err
		}
		if len(rs) == 0 {
			return respondNull(c, self, q)
		}
		cd := newCompound(q, rs...)
		if err := cat.includeView(ctx, siteID, q, cd, src, rs, ids[0].Type, drafted); err != nil {
			return err
		}
		return cd.respondOne(c, fiber.StatusOK, rs[0])
	}
}

// linkageOne serves GET /<type>/:id/relationships/<name> of a to-one
// relationship: its links and data, as the record's document shows them.
func (cat *catalog) linkageOne(t *resourceType, name string) fiber.Handler {
	spec := t.viewSpec(QuerySpec{})
	return func(c *fiber.Ctx) error {
		q, err := parseQuery(c, spec)
		if err != nil {
			return err
		}
		drafted := q.Drafted()
		src, _, err := cat.one(c, t, drafted)
		if err != nil {
			return err
		}
		rel := src.Relationships[name]
		if rel == nil {
			// One the record leaves out when empty (a revision that reverts none).
			rel = cat.links.relationship("/"+t.typ+"/"+src.ID, name, jsonapi.ToOne("", nil))
		}
		doc := jsonapi.Document{Data: json.RawMessage(rel.Data), Links: rel.Links}
		if q.Include["draft"] {
			cd := newCompound(q)
			if _, err := cat.linked(c.UserContext(), siteOf(c), cd, []*jsonapi.Resource{src}, "draft", true); err != nil {
				return err
			}
			doc.Included = cd.list
		}
		return respondIncluded(c, fiber.StatusOK, doc, q.Include["draft"])
	}
}

// manyEndpoint serves GET /<type>/:id/<name> (a page of the related
// records, read and written as their own GETs do) or, with linkage, GET
// /<type>/:id/relationships/<name> (a page of their identifiers), of a
// to-many relationship: paginated, with meta.total.
func (cat *catalog) manyEndpoint(t *resourceType, name string, linkage bool) fiber.Handler {
	typ := jsonapi.Relationships[t.typ][name].Types[0]
	spec := QuerySpec{Collection: true, Fields: fieldsOf(typ)}
	if !linkage {
		spec.Includes = includesOf(typ, cat.nested(typ)...)
	}
	spec = t.viewSpec(spec)
	params, hasParams := t.params[name]
	spec.Extra = params.names
	return func(c *fiber.Ctx) error {
		q, err := parseQuery(c, spec)
		if err != nil {
			return err
		}
		ctx, siteID, drafted := c.UserContext(), siteOf(c), q.Drafted()
		if hasParams {
			if ctx, err = params.read(c, ctx); err != nil {
				return err
			}
		}
		src, id, err := cat.one(c, t, drafted)
		if err != nil {
			return err
		}
		pages, err := t.many[name](ctx, siteID, []uuid.UUID{id}, drafted, q.window())
		if err != nil {
			return err
		}
		p := pages[id]
		ids := cursorRows(q, p.ids)
		var listed []*jsonapi.Resource
		if !linkage || drafted {
			if listed, err = cat.fetch(ctx, siteID, typ, ids, drafted); err != nil {
				return err
			}
		}
		cd := newCompound(q, listed...)
		if err := cat.includeView(ctx, siteID, q, cd, src, listed, typ, drafted); err != nil {
			return err
		}
		path, meta := "/"+t.typ+"/"+src.ID, q.listMeta(int64(p.total))
		pageLinks := func(at string) *jsonapi.Links {
			if q.Page.cursor() {
				return cat.links.cursorPage(at, q, int64(p.total), len(ids), func(i int) string { return cursorOf(ids[i]) })
			}
			return cat.links.collection(at, q, int64(p.total), nil)
		}
		if !linkage {
			return cd.respond(c, fiber.StatusOK, sparseAll(q, listed), pageLinks(path+"/"+name), meta)
		}
		l := pageLinks(path + "/relationships/" + name)
		l.Related = cat.links.base + path + "/" + name
		doc := jsonapi.Document{Data: jsonapi.ToMany(typ, ids), Links: l, Meta: meta, Included: cd.list}
		return respondIncluded(c, fiber.StatusOK, doc, len(q.Include) > 0)
	}
}

// viewSpec is spec with include=draft (and fields[drafts]) on a draftable
// record's relationship endpoints: the drafted view.
func (t *resourceType) viewSpec(spec QuerySpec) QuerySpec {
	if t.draftable {
		spec.Includes = union(spec.Includes, []string{"draft"})
		spec.Fields = union(spec.Fields, []string{"drafts"})
	}
	return spec
}

// nested are the nested include paths of typ's documents.
func (cat *catalog) nested(typ string) []string {
	if t := cat.types[typ]; t != nil {
		return t.nested
	}
	return nil
}

// includeView includes what q asks for of rs, records related to src;
// with the drafted view, also the drafts it comes from: the records'
// own (include=draft of them) when they have drafts, src's otherwise.
func (cat *catalog) includeView(ctx context.Context, siteID uuid.UUID, q *Query, cd *compound, src *jsonapi.Resource, rs []*jsonapi.Resource,
	typ string, drafted bool) error {
	if err := cat.include(ctx, siteID, q, cd, rs, drafted); err != nil {
		return err
	}
	if _, own := jsonapi.Relationships[typ]["draft"]; drafted && !own && src.Relationships["draft"] != nil {
		_, err := cat.linked(ctx, siteID, cd, []*jsonapi.Resource{src}, "draft", true)
		return err
	}
	return nil
}

// include adds to cd the records q's include paths name, read through the
// linkage of rs (rendered, before sparse fieldsets): the records each
// path's first relationship names, each once, then the path's next
// relationship from those (theme-assets.asset). A to-many relationship's
// linkage is its first page, so that is what is included of it.
func (cat *catalog) include(ctx context.Context, siteID uuid.UUID, q *Query, cd *compound, rs []*jsonapi.Resource, drafted bool) error {
	return cat.includeFrom(ctx, siteID, q, cd, rs, drafted, "")
}

func (cat *catalog) includeFrom(ctx context.Context, siteID uuid.UUID, q *Query, cd *compound, rs []*jsonapi.Resource, drafted bool, prefix string) error {
	if len(rs) == 0 || len(q.Include) == 0 {
		return nil
	}
	// In the order the endpoint lists them (q.Include holds the paths
	// asked for and their prefixes, all of them listed).
	for _, path := range q.spec.Includes {
		name, ok := strings.CutPrefix(path, prefix)
		if !ok || !q.Include[path] || name == "" || strings.Contains(name, ".") {
			continue
		}
		linked, err := cat.linked(ctx, siteID, cd, rs, name, drafted)
		if err != nil {
			return err
		}
		if err := cat.includeFrom(ctx, siteID, q, cd, linked, drafted, path+"."); err != nil {
			return err
		}
	}
	return nil
}

// linked returns the records the relationship name of rs names, adding to
// cd those it does not hold yet: read in one fetch per type and view.
func (cat *catalog) linked(ctx context.Context, siteID uuid.UUID, cd *compound, rs []*jsonapi.Resource, name string, drafted bool) ([]*jsonapi.Resource, error) {
	type batch struct {
		typ     string
		drafted bool
	}
	var want map[batch][]string
	var keys []string
	var seen map[string]bool
	for _, r := range rs {
		view := drafted
		if t := cat.types[r.Type]; t != nil && t.drafted[name] {
			view = true
		}
		for _, id := range linkageOf(r.Relationships[name]) {
			key := id.Type + "/" + id.ID
			if seen == nil {
				seen, want = map[string]bool{}, map[batch][]string{}
			}
			if !seen[key] {
				seen[key] = true
				keys = append(keys, key)
				if cd.full[key] == nil {
					b := batch{id.Type, view}
					want[b] = append(want[b], id.ID)
				}
			}
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	batches := slices.SortedFunc(func(yield func(batch) bool) {
		for b := range want {
			if !yield(b) {
				return
			}
		}
	}, func(a, b batch) int {
		if a.typ != b.typ {
			return strings.Compare(a.typ, b.typ)
		}
		return boolInt(a.drafted) - boolInt(b.drafted)
	})
	for _, b := range batches {
		got, err := cat.fetch(ctx, siteID, b.typ, want[b], b.drafted)
		if err != nil {
			return nil, err
		}
		cd.add(got...)
	}
	out := make([]*jsonapi.Resource, 0, len(keys))
	for _, k := range keys {
		if r := cd.full[k]; r != nil {
			out = append(out, r)
		}
	}
	return out, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// union is a with the members of b it lacks, in order.
func union(a, b []string) []string {
	for _, s := range b {
		if !slices.Contains(a, s) {
			a = append(a, s)
		}
	}
	return a
}
