package api

import (
	"context"

	"github.com/google/uuid"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
)

// The draftable kinds in the catalog (relations.go): how their records are
// read by id, and their read-only to-many relationships, which other
// records make up (DESIGN.md §3): a content's content-blocks, a content
// block's hyperlinks. Each has its linkage in every document (its first
// page), and related and relationship endpoints that page through it;
// with include=draft they show the drafted state.

// contentType is the kind's resourceType.
func (h contentHandler) contentType() *resourceType {
	t := &resourceType{typ: h.kind.Type, what: h.singular(), fetch: h.fetch, draftable: true, many: map[string]manyFunc{}}
	switch h.kind {
	case drafts.Contents:
		t.many["content-blocks"] = h.blocksOfContents
	case drafts.ContentBlocks:
		t.many["hyperlinks"] = h.hyperlinksOfBlocks
	}
	return t
}

// fetch renders the site's records of the kind with the given ids, live or
// with drafted as drafted (a page read alone goes through the batched
// loader, as GET /<kind>/:id does).
func (h contentHandler) fetch(ctx context.Context, siteID uuid.UUID, ids []uuid.UUID, drafted bool) ([]*jsonapi.Resource, error) {
	var views []*drafts.View
	if len(ids) == 1 {
		v, err := h.loads.Load(ctx, siteID, ids[0], drafted)
		if err != nil {
			return nil, err
		}
		if v != nil {
			views = append(views, v)
		}
	} else {
		byID, err := h.engine.LoadMany(ctx, h.db, h.kind, siteID, ids, drafted)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			if v := byID[id]; v != nil {
				views = append(views, v)
			}
		}
	}
	return h.render(ctx, siteID, views, drafted)
}

// render renders views (live, or drafted) with their to-many linkage, in
// the request's locale.
func (h contentHandler) render(ctx context.Context, siteID uuid.UUID, views []*drafts.View, drafted bool) ([]*jsonapi.Resource, error) {
	var paths map[uuid.UUID]string
	if drafted {
		var err error
		if paths, err = h.draftedPaths(ctx, siteID, views...); err != nil {
			return nil, err
		}
	}
	created := h.links.drafted()
	if rel, ok := drafts.PreviewReleaseOf(ctx); ok {
		created = h.links.previewed(rel)
	}
	loc := drafts.LocaleOf(ctx)
	rs := make([]*jsonapi.Resource, len(views))
	for i, v := range views {
		rs[i] = h.resource(v, drafted, paths, created, loc)
	}
	if err := h.localePaths(ctx, siteID, views, rs, drafted); err != nil { // locale_paths.go
		return nil, err
	}
	return rs, h.cat.fillMany(ctx, siteID, h.cat.types[h.kind.Type], rs, drafted)
}

// blocksOfContents is contents' content-blocks (drafts.BlocksOfContents):
// live blocks, or with drafted every block drafted to the content, as
// GET /content-blocks?include=draft shows them.
func (h contentHandler) blocksOfContents(ctx context.Context, siteID uuid.UUID, parents []uuid.UUID, drafted bool, w models.Window) (map[uuid.UUID]idPage, error) {
	rows, err := drafts.BlocksOfContents(ctx, h.db, siteID, parents, drafted, w)
	if err != nil {
		return nil, err
	}
	return idPages(rows, parents, w), nil
}

// hyperlinksOfBlocks is content-blocks' hyperlinks
// (drafts.HyperlinksOfBlocks): the links of the live body, or with drafted
// those of the drafted body.
func (h contentHandler) hyperlinksOfBlocks(ctx context.Context, siteID uuid.UUID, parents []uuid.UUID, drafted bool, w models.Window) (map[uuid.UUID]idPage, error) {
	rows, err := drafts.HyperlinksOfBlocks(ctx, h.db, siteID, parents, drafted, w)
	if err != nil {
		return nil, err
	}
	return idPages(rows, parents, w), nil
}
