package api

import (
	"github.com/pressroom/pressroom/models/drafts"
)

// content registers the pages, contents, content-blocks, drafts, revisions
// and versions endpoints.
func (r routes) content() {
	d := r.deps
	engine := drafts.NewEngine(d.Config.Storage)
	kinds := map[string]contentHandler{
		"pages": {db: d.DB, engine: engine, kind: drafts.Pages, links: r.links, validate: validatePage,
			defaults: map[string]any{"page_type": "page", "search_engine_indexable": true, "search_engine_followable": true, "slug": ""},
			filters:  map[string]string{"page-type": "page_type", "parent": "parent_id", "path": "path", "layout": "layout_id"},
			sorts:    map[string]string{"title": "title", "path": "path", "created-at": "created_at", "updated-at": "updated_at", "published-at": "published_at"}},
		"contents": {db: d.DB, engine: engine, kind: drafts.Contents, links: r.links, validate: validateContent,
			defaults: map[string]any{"position": 0},
			filters:  map[string]string{"page": "page_id", "title": "title"},
			sorts:    map[string]string{"title": "title", "position": "position", "created-at": "created_at", "updated-at": "updated_at"}},
		"content-blocks": {db: d.DB, engine: engine, kind: drafts.ContentBlocks, links: r.links, validate: validateBlock,
			defaults: map[string]any{"position": 0, "body": "", "data_type": "text"},
			filters:  map[string]string{"content": "content_id", "var-name": "var_name", "data-type": "data_type"},
			sorts:    map[string]string{"position": "position", "var-name": "var_name", "created-at": "created_at", "updated-at": "updated_at"}},
	}
	// The read-only to-many relationships (content_related.go): blocks get
	// theirs before contents copy the blocks' handler to render them.
	blocks := kinds["content-blocks"]
	blocks.related = []relatedMany{hyperlinksOfBlocks(d.DB, r.links)}
	kinds["content-blocks"] = blocks
	contents := kinds["contents"]
	contents.related = []relatedMany{blocksOfContents(blocks)}
	kinds["contents"] = contents
	// Reads of drafted content are the hot path: identical concurrent ones
	// share a run (shared_reads.go).
	shared := &sharedReads{}
	for typ, h := range kinds {
		h = h.withLoads()
		kinds[typ] = h
		r.app.Get("/"+typ, r.authed(shared.wrap(h.list))...)
		r.app.Post("/"+typ, r.authed(h.create)...)
		r.app.Get("/"+typ+"/:id", r.authed(shared.wrap(h.get))...)
		r.app.Patch("/"+typ+"/:id", r.authed(h.update)...)
		r.app.Delete("/"+typ+"/:id", r.authed(h.remove)...)
		for _, rel := range h.related {
			r.app.Get("/"+typ+"/:id/"+rel.name, r.authed(shared.wrap(h.relatedEndpoint(rel, false)))...)
			r.app.Get("/"+typ+"/:id/relationships/"+rel.name, r.authed(shared.wrap(h.relatedEndpoint(rel, true)))...)
		}
	}
	dh := draftsHandler{db: d.DB, engine: engine, links: r.links, content: kinds}
	r.app.Get("/drafts", r.authed(dh.list)...)
	r.app.Get("/drafts/:id", r.authed(dh.get)...)
	r.app.Delete("/drafts/:id", r.authed(dh.revert)...)
	rh := revisionsHandler{db: d.DB, temporal: d.Temporal, cfg: d.Config, links: r.links}
	r.app.Post("/revisions", r.authed(rh.create)...)
	r.app.Get("/revisions", r.authed(rh.list)...)
	r.app.Get("/revisions/:id", r.authed(rh.get)...)
	r.app.Get("/revisions/:id/versions", r.authed(rh.versions)...)
	r.app.Get("/versions/:id", r.authed(rh.version)...)
}
