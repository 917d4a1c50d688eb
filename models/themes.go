package models

import (
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Theme is a site's set of layouts and theme assets. It is a working copy
// until it is published (PATCH /site with its theme relationship); the
// theme with the greatest PublishedAt is the site's live theme.
type Theme struct {
	bun.BaseModel `bun:"table:themes,alias:theme"`

	SiteRecord
	UserID      *uuid.UUID `bun:"user_id,type:uuid"`
	Title       string     `bun:"title,notnull"`
	Description *string    `bun:"description"`
	PublishedAt *time.Time `bun:"published_at"`
	Version     int        `bun:"version,notnull"`
}

// Layout is a Liquid template of a theme.
type Layout struct {
	bun.BaseModel `bun:"table:layouts,alias:layout"`

	SiteRecord
	ThemeID     uuid.UUID `bun:"theme_id,type:uuid,notnull"`
	Title       string    `bun:"title,notnull"`
	FileName    string    `bun:"file_name,notnull"` // <name>.liquid, unique in its theme regardless of case
	Description *string   `bun:"description"`
	// Unique marks a layout meant for a single page ("unique" is an SQL
	// keyword, hence the column name).
	Unique  bool   `bun:"is_unique,notnull"`
	Content string `bun:"content,notnull"` // the Liquid source, 1 byte to 1 MiB
	Version int    `bun:"version,notnull"`
}

// ThemeAsset places an asset of the site at a path of a theme's assets folder.
type ThemeAsset struct {
	bun.BaseModel `bun:"table:theme_assets,alias:theme_asset"`

	SiteRecord
	ThemeID uuid.UUID `bun:"theme_id,type:uuid,notnull"`
	AssetID uuid.UUID `bun:"asset_id,type:uuid,notnull"` // the same asset may be placed in several themes
	Path    string    `bun:"path,notnull"`               // in the assets folder, unique in the theme regardless of case
	Version int       `bun:"version,notnull"`
}

// ThemedSite is a site with the columns the themes migration adds to the
// sites table: its version (optimistic concurrency) and its live theme.
// It extends Site rather than changing it, so code that only knows Site
// (CreateSite, the CLI) keeps working; the new columns have defaults.
type ThemedSite struct {
	Site `bun:",extend"`

	Version int        `bun:"version,notnull"`
	ThemeID *uuid.UUID `bun:"theme_id,type:uuid"`

	// The site's locales (docs/locales.md; the locales migration adds
	// them): the ordered list (the first the default), the base locale
	// (whose values are the rows' own columns), the fallbacks, the chains
	// derived from them (ChainsOf), and whether a create must have a title
	// in the default locale before it is published.
	Locales              []string            `bun:"locales,array,notnull"`
	BaseLocale           string              `bun:"base_locale,notnull"`
	LocaleFallbacks      map[string]string   `bun:"locale_fallbacks,type:jsonb,notnull"`
	LocaleChains         map[string][]string `bun:"locale_chains,type:jsonb,notnull"`
	RequireDefaultLocale bool                `bun:"require_default_locale,notnull"`
}
