package models

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// RenderedPage is what rendering a page at a path reads: the site's title,
// the page's attributes, its layout's Liquid source ("" for none), and its
// contents and their blocks in order (docs/releases.md, "Preview links").
type RenderedPage struct {
	SiteTitle string
	Page      RenderPageRow
	Layout    string
	Contents  []RenderContent
}

// RenderPageRow is a page's attributes as a template sees them.
type RenderPageRow struct {
	ID                     uuid.UUID  `bun:"id"`
	PageType               string     `bun:"page_type"`
	Slug                   string     `bun:"slug"`
	Path                   string     `bun:"path"`
	Title                  string     `bun:"title"`
	Description            *string    `bun:"description"`
	Keywords               *string    `bun:"keywords"`
	SearchEngineIndexable  bool       `bun:"search_engine_indexable"`
	SearchEngineFollowable bool       `bun:"search_engine_followable"`
	CanonicalURL           *string    `bun:"canonical_url"`
	PublishedAt            *time.Time `bun:"published_at"`
	LayoutID               *uuid.UUID `bun:"layout_id"`
}

// RenderContent is a content and its blocks, in order.
type RenderContent struct {
	ID     uuid.UUID `bun:"id"`
	Title  string    `bun:"title"`
	Blocks []RenderBlock
}

// RenderBlock is a block; StorageKey is its image asset's object key ("").
type RenderBlock struct {
	ContentID  uuid.UUID `bun:"content_id"`
	VarName    string    `bun:"var_name"`
	DataType   string    `bun:"data_type"`
	Body       string    `bun:"body"`
	StorageKey *string   `bun:"storage_key"`
}

// MaxRenderBlocks bounds the blocks one render reads.
const MaxRenderBlocks = 2000

// LivePageToRender reads the live page of the site at path (404 for none)
// with its layout, contents and blocks. It reads the live site; a preview
// of a release reads it as the release would make it (the releases
// branch's preview read path, docs/releases.md).
func LivePageToRender(ctx context.Context, db bun.IDB, siteID uuid.UUID, path string) (*RenderedPage, error) {
	out := &RenderedPage{}
	if err := db.NewSelect().Table("sites").Column("title").Where("id = ?", siteID).Scan(ctx, &out.SiteTitle); err != nil {
		return nil, err
	}
	err := db.NewSelect().Table("pages").Column("id", "page_type", "slug", "path", "title", "description", "keywords",
		"search_engine_indexable", "search_engine_followable", "canonical_url", "published_at", "layout_id").
		Where("site_id = ? AND path = ? AND published_at IS NOT NULL AND trashed_at IS NULL", siteID, path).Limit(1).Scan(ctx, &out.Page)
	if IsNoRows(err) {
		return nil, NotFound("page at that path")
	} else if err != nil {
		return nil, err
	}
	if out.Page.LayoutID != nil {
		err := db.NewSelect().Table("layouts").Column("content").Where("id = ? AND site_id = ?", *out.Page.LayoutID, siteID).Scan(ctx, &out.Layout)
		if err != nil && !IsNoRows(err) {
			return nil, err
		}
	}
	if err := db.NewSelect().Table("contents").Column("id", "title").
		Where("site_id = ? AND page_id = ? AND published_at IS NOT NULL AND trashed_at IS NULL", siteID, out.Page.ID).
		OrderExpr("position, id").Limit(MaxRenderBlocks).Scan(ctx, &out.Contents); err != nil {
		return nil, err
	}
	if len(out.Contents) == 0 {
		return out, nil
	}
	ids := make([]uuid.UUID, len(out.Contents))
	at := make(map[uuid.UUID]int, len(ids))
	for i, c := range out.Contents {
		ids[i], at[c.ID] = c.ID, i
	}
	var blocks []RenderBlock
	if err := db.NewSelect().TableExpr("content_blocks AS b").
		ColumnExpr("b.content_id, b.var_name, b.data_type, b.body, i.storage_key").
		Join("LEFT JOIN asset_images AS i ON i.asset_id = b.asset_id AND i.site_id = b.site_id").
		Where("b.site_id = ? AND b.content_id IN (?) AND b.published_at IS NOT NULL AND b.trashed_at IS NULL", siteID, bun.In(ids)).
		OrderExpr("b.content_id, b.position, b.id").Limit(MaxRenderBlocks).Scan(ctx, &blocks); err != nil {
		return nil, err
	}
	for _, b := range blocks {
		c := &out.Contents[at[b.ContentID]]
		c.Blocks = append(c.Blocks, b)
	}
	return out, nil
}
