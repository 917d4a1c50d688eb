package api

import (
	"context"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
)

// Full-text search (docs/search.md): filter[q] on the lists of pages,
// contents, content blocks and assets, and GET /search across them.

// annotateSearch gives each listed resource its meta.search: rank and
// highlight (models.Highlights), when the list was searched.
func annotateSearch(ctx context.Context, db bun.IDB, q *Query, rs []*jsonapi.Resource) error {
	if q.search == nil || len(rs) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, 0, len(rs))
	for _, r := range rs {
		if id, err := uuid.Parse(r.ID); err == nil {
			ids = append(ids, id)
		}
	}
	hits, err := models.Highlights(ctx, db, *q.search, ids)
	if err != nil {
		return err
	}
	for _, r := range rs {
		id, _ := uuid.Parse(r.ID)
		h, ok := hits[id]
		if !ok {
			continue
		}
		if r.Meta == nil {
			r.Meta = map[string]any{}
		}
		m := searchMeta{Rank: h.Rank, Highlight: h.Highlight}
		if q.search.Base != "" { // a site with locales: the one the hit matched in
			m.Locale = h.Locale
			if m.Locale == "" {
				m.Locale = q.search.Base
			}
		}
		r.Meta["search"] = m
	}
	return nil
}

// searchMeta is a hit's meta.search.
type searchMeta struct {
	Rank      float64 `json:"rank"`
	Highlight string  `json:"highlight"`
	// Locale is the locale whose values matched: the request's, or the
	// fallback it read (docs/locales.md, "Searching in a locale").
	Locale string `json:"locale,omitempty"`
}

// searchIn makes s a search in locale l (the request's, drafts.LocaleOf):
// l's chain, the site's base locale last. The zero Locale (a site with one
// locale, asked in it) searches the base documents, as before.
func searchIn(s *models.Search, l drafts.Locale) {
	if l.Tag == "" {
		return
	}
	s.Chain, s.Base = l.Chain, l.Base
	if len(s.Chain) == 0 {
		s.Chain = []string{l.Tag}
	}
}

// searchSpec is the query GET /search reads: filter[q] (required), pages,
// include=draft (the drafted view, with the hits' drafts included) and
// sparse fieldsets of the types it answers.
func searchSpec() QuerySpec {
	return QuerySpec{Collection: true, Search: searchEveryType, Includes: []string{"draft"}, Fields: models.SearchTypes}
}

// searchEveryType is QuerySpec.Search of GET /search: every type.
const searchEveryType = "*"

type searchHandler struct {
	db    bun.IDB
	cat   *catalog
	links links
}

// search serves GET /search: one page of the site's pages, contents,
// content blocks and assets matching filter[q], most relevant first, by
// number or by cursor (page[after], page[before]: a hit's rank, type and
// id; no meta.total).
func (h searchHandler) search(c *fiber.Ctx) error {
	q, err := parseQuery(c, searchSpec())
	if err != nil {
		return err
	}
	if q.search == nil {
		return jsonapi.BadRequest("invalid_filter", "GET /search needs filter[q], the words to search for.").AtParameter("filter[q]")
	}
	ctx, siteID, drafted := c.UserContext(), siteOf(c), q.search.Drafted
	var keyset *models.SearchKeyset
	if q.Page.cursor() {
		keyset = &models.SearchKeyset{At: q.Page.hit, Before: q.Page.before != nil}
	}
	hits, total, err := models.SearchAll(ctx, h.db, *q.search, q.Page.size, q.Page.offset(), keyset)
	if err != nil {
		return err
	}
	hits = cursorRows(q, hits)
	byType := map[string][]string{}
	for _, hit := range hits {
		byType[hit.Type] = append(byType[hit.Type], hit.ID.String())
	}
	found := map[string]*jsonapi.Resource{}
	for typ, ids := range byType {
		rs, err := h.cat.fetch(ctx, siteID, typ, ids, drafted)
		if err != nil {
			return err
		}
		s := *q.search
		s.Type = typ
		if err := annotateSearch(ctx, h.db, &Query{search: &s}, rs); err != nil {
			return err
		}
		for _, r := range rs {
			found[r.Type+"/"+r.ID] = r
		}
	}
	data := make([]*jsonapi.Resource, 0, len(hits))
	for _, hit := range hits {
		if r := found[hit.Type+"/"+hit.ID.String()]; r != nil {
			data = append(data, r)
		}
	}
	cd := newCompound(q, data...)
	if err := h.cat.include(ctx, siteID, q, cd, data, drafted); err != nil {
		return err
	}
	if q.Page.cursor() {
		// A hit's cursor is its place in the ranking (rank, type, id); one
		// that vanished between the search and its rendering still has one.
		l := h.links.cursorPage("/search", q, total, len(hits), func(i int) string { return searchCursorOf(hits[i]) })
		return cd.respond(c, fiber.StatusOK, sparseAll(q, data), l, nil)
	}
	return cd.respond(c, fiber.StatusOK, sparseAll(q, data), h.links.collection("/search", q, total, nil), map[string]any{"total": total})
}

// registerSearchRoutes registers GET /search.
func registerSearchRoutes(r routes) {
	h := searchHandler{db: r.deps.DB, cat: r.cat, links: r.links}
	r.get("/search", models.PermRead, h.search)
}

// searchLinkage describes GET /search's data in the OpenAPI description: a
// list of any of the searched types.
var searchLinkage = jsonapi.Linkage{ToMany: true, Types: models.SearchTypes}
