package drafts

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
)

// What a preview link's render route reads (docs/releases.md, "Preview
// links"): the page at a path, its contents and their blocks as the
// release in ctx (WithPreview) would make them. It reads through the
// drafted reads every JSON:API read under the preview runs (LoadMany,
// DraftedPaths, BlocksOfContents), never rules of its own: the render and
// the JSON documents of a link show one state.

// maxRenderCandidates bounds the pages and contents a render considers.
const maxRenderCandidates = 1000

// PageToRender reads the page at path as the preview ctx carries shows it
// (NotFound without one there), with its layout's source, its contents by
// position and their blocks by position, at most models.MaxRenderBlocks.
// Without a preview in ctx it reads the live site.
func (e *Engine) PageToRender(ctx context.Context, db bun.IDB, siteID uuid.UUID, path string) (*models.RenderedPage, error) {
	drafted := Previewing(ctx)
	page, err := e.pageAt(ctx, db, siteID, path, drafted)
	if err != nil {
		return nil, err
	}
	out := &models.RenderedPage{Page: renderPageRow(page.Drafted(), path)}
	if out.SiteTitle, out.Layout, err = models.RenderSiteAndLayout(ctx, db, siteID, out.Page.LayoutID); err != nil {
		return nil, err
	}
	contents, err := e.contentsOf(ctx, db, siteID, out.Page.ID, drafted)
	if err != nil {
		return nil, err
	}
	ids := make([]uuid.UUID, len(contents))
	for i, c := range contents {
		r := c.Drafted()
		ids[i] = r.ID()
		out.Contents = append(out.Contents, models.RenderContent{ID: ids[i], Title: str(r["title"])})
	}
	blocks, err := e.blocksOf(ctx, db, siteID, ids, drafted)
	if err != nil {
		return nil, err
	}
	keys, err := models.AssetStorageKeys(ctx, db, siteID, assetsOf(blocks))
	if err != nil {
		return nil, err
	}
	at := make(map[uuid.UUID]int, len(ids))
	for i, id := range ids {
		at[id] = i
	}
	for _, b := range blocks {
		rb := models.RenderBlock{VarName: str(b["var_name"]), DataType: str(b["data_type"]), Body: str(b["body"])}
		if key, ok := keys[str(b["asset_id"])]; ok {
			rb.StorageKey = &key
		}
		if id, err := uuid.Parse(str(b["content_id"])); err == nil {
			if i, ok := at[id]; ok {
				out.Contents[i].Blocks = append(out.Contents[i].Blocks, rb)
			}
		}
	}
	return out, nil
}

// pageAt is the page whose (drafted) path is path: the candidates are the
// pages stored at it or with its last slug (an ancestor's drafted slug or
// parent may have moved them there) and the pages the preview drafts.
func (e *Engine) pageAt(ctx context.Context, db bun.IDB, siteID uuid.UUID, path string, drafted bool) (*View, error) {
	if l := LocaleOf(ctx); !l.IsBase() {
		return e.pageAtIn(ctx, db, siteID, l.Tag, path, drafted)
	}
	slug := path[strings.LastIndexByte(path, '/')+1:]
	var ids []uuid.UUID
	// The page stored at path first, so the bound on the candidates never
	// drops it for the pages that merely share its slug.
	err := db.NewSelect().Table("pages").Column("id").
		Where("site_id = ? AND trashed_at IS NULL AND (path = ? OR slug = ?)", siteID, path, slug).
		OrderExpr("path = ? DESC, id", path).Limit(maxRenderCandidates).Scan(ctx, &ids)
	if err != nil {
		return nil, fmt.Errorf("pages at %s: %w", path, err)
	}
	if p := previewOf(ctx); p != nil {
		ids = append(ids, previewItems(p, Pages.Type)...)
	}
	views, err := e.LoadMany(ctx, db, Pages, siteID, ids, drafted)
	if err != nil {
		return nil, err
	}
	list := make([]*View, 0, len(views))
	for _, v := range views {
		if drafted || v.Row["trashed_at"] == nil {
			list = append(list, v)
		}
	}
	if drafted {
		if err := e.FillDraftedPaths(ctx, db, siteID, list...); err != nil {
			return nil, err
		}
	}
	var found *View
	for _, v := range list {
		at := str(v.Row["path"])
		if v.DraftedPath != nil {
			at = *v.DraftedPath
		}
		if at == path && v.Drafted()["trashed_at"] == nil && (found == nil || v.Row.ID().String() < found.Row.ID().String()) {
			found = v
		}
	}
	if found == nil {
		return nil, models.NotFound("page at that path")
	}
	return found, nil
}

// pageAtIn is pageAt in locale tag (not the base): the page whose path
// in tag, live (page_locale_paths) or drafted under the preview
// (DraftedLocalePaths), is path. The candidates are the pages stored at
// it in tag or whose slug in tag, stored or in a locale draft, or whose
// base slug (a fallback's), is its last one, and the pages the preview
// drafts.
func (e *Engine) pageAtIn(ctx context.Context, db bun.IDB, siteID uuid.UUID, tag, path string, drafted bool) (*View, error) {
	slug := path[strings.LastIndexByte(path, '/')+1:]
	var ids []uuid.UUID
	err := db.NewRaw(`SELECT id FROM (
    SELECT a.page_id AS id, a.path = ?2 AS exact FROM page_locale_paths a
     WHERE a.site_id = ?0 AND a.locale = ?1 AND (a.path = ?2 OR a.slug = ?3)
    UNION
    SELECT d.item_id, false FROM drafts d
     WHERE d.site_id = ?0 AND d.item_type = 'pages' AND d.locale = ?1 AND d.drafted ->> ('slug@' || ?1) = ?3
    UNION
    SELECT p.id, false FROM pages p WHERE p.site_id = ?0 AND p.slug = ?3 AND p.trashed_at IS NULL) AS c
ORDER BY exact DESC, id LIMIT ?4`, siteID, tag, path, slug, maxRenderCandidates).Scan(ctx, &ids)
	if err != nil {
		return nil, fmt.Errorf("pages at %s in %s: %w", path, tag, err)
	}
	if p := previewOf(ctx); p != nil {
		ids = append(ids, previewItems(p, Pages.Type)...)
	}
	views, err := e.LoadMany(ctx, db, Pages, siteID, ids, drafted)
	if err != nil {
		return nil, err
	}
	ids = ids[:0]
	for id, v := range views {
		if drafted || v.Row["trashed_at"] == nil {
			ids = append(ids, id)
		}
	}
	var paths map[uuid.UUID]map[string]string
	if drafted {
		var l siteLocales
		if err := db.NewRaw("SELECT locales, base_locale, locale_chains FROM sites WHERE id = ?", siteID).Scan(ctx, &l); err != nil {
			return nil, fmt.Errorf("the site's locales: %w", err)
		}
		paths, err = e.DraftedLocalePaths(ctx, db, siteID, models.SiteLocales{Locales: l.Locales, Base: l.Base, Chains: l.Chains}, ids)
	} else {
		paths, err = LocalePaths(ctx, db, siteID, ids)
	}
	if err != nil {
		return nil, err
	}
	var found *View
	for _, id := range ids {
		v := views[id]
		if paths[id][tag] == path && v.Drafted()["trashed_at"] == nil && (found == nil || id.String() < found.Row.ID().String()) {
			found = v
		}
	}
	if found == nil {
		return nil, models.NotFound("page at that path")
	}
	return found, nil
}

// contentsOf are the page's contents (as drafted under the preview) by
// position and id.
func (e *Engine) contentsOf(ctx context.Context, db bun.IDB, siteID, pageID uuid.UUID, drafted bool) ([]*View, error) {
	var ids []uuid.UUID
	err := db.NewSelect().Table("contents").Column("id").
		Where("site_id = ? AND page_id = ? AND trashed_at IS NULL", siteID, pageID).
		Limit(maxRenderCandidates).Scan(ctx, &ids)
	if err != nil {
		return nil, fmt.Errorf("contents of page: %w", err)
	}
	if p := previewOf(ctx); p != nil {
		ids = append(ids, previewItems(p, Contents.Type)...)
	}
	views, err := e.LoadMany(ctx, db, Contents, siteID, ids, drafted)
	if err != nil {
		return nil, err
	}
	out := make([]*View, 0, len(views))
	for _, v := range views {
		r := v.Drafted()
		if str(r["page_id"]) == pageID.String() && r["trashed_at"] == nil {
			out = append(out, v)
		}
	}
	slices.SortFunc(out, func(a, b *View) int {
		ra, rb := a.Drafted(), b.Drafted()
		return cmp.Or(cmp.Compare(num(ra["position"]), num(rb["position"])), strings.Compare(ra.ID().String(), rb.ID().String()))
	})
	return out, nil
}

// blocksOf are the blocks of contents, as drafted, in each content's order
// (BlocksOfContents, the order the content-blocks relationship shows), at
// most models.MaxRenderBlocks in all.
func (e *Engine) blocksOf(ctx context.Context, db bun.IDB, siteID uuid.UUID, contents []uuid.UUID, drafted bool) ([]Row, error) {
	ranked, err := BlocksOfContents(ctx, db, siteID, contents, drafted, models.Window{Limit: models.MaxRenderBlocks})
	if err != nil {
		return nil, err
	}
	if len(ranked) > models.MaxRenderBlocks {
		ranked = ranked[:models.MaxRenderBlocks]
	}
	ids := make([]uuid.UUID, len(ranked))
	for i, r := range ranked {
		ids[i] = r.ID
	}
	views, err := e.LoadMany(ctx, db, ContentBlocks, siteID, ids, drafted)
	if err != nil {
		return nil, err
	}
	out := make([]Row, 0, len(ranked))
	for _, r := range ranked { // ordered by content, then position
		if v := views[r.ID]; v != nil {
			out = append(out, v.Drafted())
		}
	}
	return out, nil
}

// previewItems are the ids of the records of typ the preview's set drafts.
func previewItems(p *Preview, typ string) []uuid.UUID {
	var out []uuid.UUID
	for _, d := range p.Drafts {
		if d.ItemType == typ {
			out = append(out, d.ItemID)
		}
	}
	return out
}

// assetsOf are the asset ids blocks show.
func assetsOf(blocks []Row) []uuid.UUID {
	var out []uuid.UUID
	for _, b := range blocks {
		if id, err := uuid.Parse(str(b["asset_id"])); err == nil {
			out = append(out, id)
		}
	}
	return out
}

// renderPageRow is a drafted page row as a template sees it, at path.
func renderPageRow(r Row, path string) models.RenderPageRow {
	out := models.RenderPageRow{ID: r.ID(), PageType: str(r["page_type"]), Slug: str(r["slug"]), Path: path, Title: str(r["title"]),
		Description: strPtr(r["description"]), Keywords: strPtr(r["keywords"]), CanonicalURL: strPtr(r["canonical_url"])}
	out.SearchEngineIndexable, _ = r["search_engine_indexable"].(bool)
	out.SearchEngineFollowable, _ = r["search_engine_followable"].(bool)
	if id, err := uuid.Parse(str(r["layout_id"])); err == nil {
		out.LayoutID = &id
	}
	return out
}

func strPtr(v any) *string {
	if s, ok := v.(string); ok {
		return &s
	}
	return nil
}

// num is a JSON number (a row's integer column) as a float.
func num(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case int:
		return float64(n)
	case int64:
		return float64(n)
	}
	return 0
}
