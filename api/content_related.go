package api

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
)

// relatedMany is a read-only to-many relationship of a draftable kind that
// other records make up (DESIGN.md §3): a content's content-blocks, a
// content block's hyperlinks. Its linkage is computed only when include
// names it (links only otherwise); its related and relationship endpoints
// page through it.
type relatedMany struct {
	name, typ string
	// parentDraft: include=draft on the endpoints adds the parent's own
	// draft (hyperlinks are not draftable; they come from the block's
	// draft), not drafts of the listed records.
	parentDraft bool
	// load returns, for each parent, the records at [offset, offset+limit)
	// in order, and their total: one bounded, site-scoped query (plus the
	// records' own load) whatever the number of parents.
	load func(ctx context.Context, siteID uuid.UUID, parents []uuid.UUID, drafted bool, offset, limit int) (map[uuid.UUID]*relatedPage, error)
}

// relatedPage is one page of a parent's related records.
type relatedPage struct {
	total     int
	resources []*jsonapi.Resource
	drafts    []*drafts.Draft // pending drafts of the listed records (drafted reads)
}

// blocksOfContents is contents' content-blocks (drafts.BlocksOfContents):
// live blocks, or with drafted every block drafted to the content, as
// GET /content-blocks?include=draft shows them.
func blocksOfContents(blocks contentHandler) relatedMany {
	return relatedMany{name: "content-blocks", typ: "content-blocks",
		load: func(ctx context.Context, siteID uuid.UUID, parents []uuid.UUID, drafted bool, offset, limit int) (map[uuid.UUID]*relatedPage, error) {
			rows, err := drafts.BlocksOfContents(ctx, blocks.db, siteID, parents, drafted, offset, limit)
			if err != nil {
				return nil, err
			}
			out, ids := pages(rows, parents, offset)
			views, err := blocks.engine.LoadMany(ctx, blocks.db, drafts.ContentBlocks, siteID, ids, drafted)
			if err != nil {
				return nil, err
			}
			for _, r := range rows {
				v := views[r.ID]
				if r.N <= offset || v == nil {
					continue
				}
				p := out[r.Parent]
				p.resources = append(p.resources, blocks.resource(v, drafted, nil))
				if v.Draft != nil {
					p.drafts = append(p.drafts, v.Draft)
				}
			}
			return out, nil
		}}
}

// hyperlinksOfBlocks is content-blocks' hyperlinks (drafts.HyperlinksOfBlocks):
// the links of the live body, or with drafted those of the drafted body.
// Like blocksOfContents it takes the content-blocks handler, whose
// database and links it uses.
func hyperlinksOfBlocks(blocks contentHandler) relatedMany {
	return relatedMany{name: "hyperlinks", typ: "hyperlinks", parentDraft: true,
		load: func(ctx context.Context, siteID uuid.UUID, parents []uuid.UUID, drafted bool, offset, limit int) (map[uuid.UUID]*relatedPage, error) {
			rows, byID, err := drafts.HyperlinksOfBlocks(ctx, blocks.db, siteID, parents, drafted, offset, limit)
			if err != nil {
				return nil, err
			}
			out, _ := pages(rows, parents, offset)
			for _, r := range rows {
				if h, ok := byID[r.ID]; ok && r.N > offset {
					out[r.Parent].resources = append(out[r.Parent].resources, hyperlinkResource(blocks.links, h))
				}
			}
			return out, nil
		}}
}

// pages sets up one (possibly empty) page per parent from ranked rows, and
// returns the ids on the pages (rows ranked past offset).
func pages(rows []drafts.Ranked, parents []uuid.UUID, offset int) (map[uuid.UUID]*relatedPage, []uuid.UUID) {
	out := make(map[uuid.UUID]*relatedPage, len(parents))
	for _, p := range parents {
		out[p] = &relatedPage{}
	}
	var ids []uuid.UUID
	for _, r := range rows {
		if p := out[r.Parent]; p != nil {
			p.total = r.Total
			if r.N > offset {
				ids = append(ids, r.ID)
			}
		}
	}
	return out, ids
}

// includeRelated fills the linkage of the related relationships that
// include names into rs (resources of views, before sparse fieldsets), and
// returns the related records to include: the first page (maxPageSize) of
// each parent's; when there are more, the relationship's links.next points
// at the next page of its relationship endpoint.
func (h contentHandler) includeRelated(ctx context.Context, q *Query, siteID uuid.UUID, views []*drafts.View, rs []*jsonapi.Resource, drafted bool) ([]*jsonapi.Resource, error) {
	var included []*jsonapi.Resource
	for _, rel := range h.related {
		if !q.Include[rel.name] || len(views) == 0 {
			continue
		}
		parents := make([]uuid.UUID, len(views))
		for i, v := range views {
			parents[i] = v.Row.ID()
		}
		ps, err := rel.load(ctx, siteID, parents, drafted, 0, maxPageSize)
		if err != nil {
			return nil, err
		}
		for i, r := range rs {
			p := ps[parents[i]]
			ids := make([]string, len(p.resources))
			for j, x := range p.resources {
				ids[j] = x.ID
				included = append(included, q.Sparse(x))
			}
			link := r.Relationships[rel.name]
			link.Data = jsonapi.ToMany(rel.typ, ids)
			if p.total > len(ids) {
				v := url.Values{"page[number]": {"2"}, "page[size]": {strconv.Itoa(maxPageSize)}}
				if drafted {
					v.Set("include", "draft")
				}
				link.Links.Next = link.Links.Self + "?" + v.Encode()
			}
		}
	}
	return included, nil
}

// relatedEndpoint serves GET /<kind>/:id/<name> (a page of the related
// records) or, with linkage, GET /<kind>/:id/relationships/<name> (a page of
// their identifiers). Both read the parent as GET /<kind>/:id does (404
// unless live, or with include=draft drafted); include=draft gives the
// drafted relationship and includes the pending drafts it comes from.
func (h contentHandler) relatedEndpoint(rel relatedMany, linkage bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		q, err := parseQuery(c, QuerySpec{Collection: true, Includes: []string{"draft"}, Fields: []string{rel.typ, "drafts"}})
		if err != nil {
			return err
		}
		id, err := idParam(c, strings.TrimSuffix(h.kind.Type, "s"))
		if err != nil {
			return err
		}
		ctx, siteID, drafted := c.UserContext(), siteOf(c), q.Include["draft"]
		v, err := h.loads.Load(ctx, siteID, id, drafted)
		if err != nil {
			return err
		}
		if v == nil {
			return models.NotFound(h.singular())
		}
		ps, err := rel.load(ctx, siteID, []uuid.UUID{id}, drafted, q.Page.offset(), q.Page.size)
		if err != nil {
			return err
		}
		p := ps[id]
		included := []*jsonapi.Resource{}
		if drafted {
			ds := p.drafts
			if rel.parentDraft && v.Draft != nil {
				ds = []*drafts.Draft{v.Draft}
			}
			for _, d := range ds {
				included = append(included, q.Sparse(draftResource(h.links, d)))
			}
		}
		path := h.path(id.String())
		meta := map[string]any{"total": p.total}
		if !linkage {
			return respondIncluded(c, fiber.StatusOK, jsonapi.Document{Data: sparseAll(q, p.resources), Included: included,
				Links: h.links.collection(path+"/"+rel.name, q, int64(p.total)), Meta: meta}, drafted)
		}
		ids := make([]string, len(p.resources))
		for i, r := range p.resources {
			ids[i] = r.ID
		}
		l := h.links.collection(path+"/relationships/"+rel.name, q, int64(p.total))
		l.Related = h.links.base + path + "/" + rel.name
		doc := map[string]any{"links": l, "data": jsonapi.ToMany(rel.typ, ids), "meta": meta, "jsonapi": jsonapi.V11}
		if drafted {
			doc["included"] = included
		}
		return respondRaw(c, fiber.StatusOK, doc)
	}
}
