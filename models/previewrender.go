package models

import (
	"context"
	"fmt"
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

// RenderSiteAndLayout reads the site's title and, when layoutID is not
// nil, that layout's Liquid source ("" for a layout the site does not
// have): what a render needs besides the page (drafts.PageToRender).
// Layouts are not drafted: a preview renders through the live layout.
func RenderSiteAndLayout(ctx context.Context, db bun.IDB, siteID uuid.UUID, layoutID *uuid.UUID) (title, layout string, err error) {
	if err := db.NewSelect().Table("sites").Column("title").Where("id = ?", siteID).Scan(ctx, &title); err != nil {
		return "", "", fmt.Errorf("site title: %w", err)
	}
	if layoutID != nil {
		err := db.NewSelect().Table("layouts").Column("content").Where("id = ? AND site_id = ?", *layoutID, siteID).Scan(ctx, &layout)
		if err != nil && !IsNoRows(err) {
			return "", "", fmt.Errorf("layout: %w", err)
		}
	}
	return title, layout, nil
}

// AssetStorageKeys are the object keys of the site's image assets ids,
// keyed by the asset's id as text (assets without an image are left out).
func AssetStorageKeys(ctx context.Context, db bun.IDB, siteID uuid.UUID, ids []uuid.UUID) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		AssetID    uuid.UUID `bun:"asset_id"`
		StorageKey string    `bun:"storage_key"`
	}
	if err := db.NewSelect().Table("asset_images").Column("asset_id", "storage_key").
		Where("site_id = ? AND asset_id IN (?)", siteID, bun.In(ids)).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("asset images: %w", err)
	}
	for _, r := range rows {
		out[r.AssetID.String()] = r.StorageKey
	}
	return out, nil
}
