package api

import (
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models"
)

// Loading and rendering shared by the themes, layouts and theme-assets
// handlers (docs/themes.md): a theme looks the same whether it is primary
// data, included, or related.

// Limits of theme and layout text.
const (
	maxTitle       = 200
	maxDescription = 2000
	// maxLayoutContent bounds a layout's content in bytes (1 MiB). The body
	// limit (PRESSROOM_BODY_LIMIT, 1 MiB by default) may refuse a body
	// before this does (413).
	maxLayoutContent = 1 << 20
)

// themeResources is what the themes, layouts and theme-assets handlers share.
type themeResources struct {
	db     *bun.DB
	links  links
	assets assetsHandler
	users  usersHandler
	// pageCounts fills the layouts' pages-count attribute: routes.themeResources
	// (app.go) sets livePagesPerLayout, which counts the site's live pages per
	// layout_id in one query for all ids.
	pageCounts models.PageCounter
	// cat includes what documents ask for and fills the themes' to-many
	// linkage (relations.go).
	cat *catalog
}

func themePath(id uuid.UUID) string { return "/themes/" + id.String() }

func ids[T any](rows []T, id func(*T) uuid.UUID) []uuid.UUID {
	out := make([]uuid.UUID, len(rows))
	for i := range rows {
		out[i] = id(&rows[i])
	}
	return out
}

// themeResource renders a theme; renderThemes fills the linkage of its
// layouts and theme assets.
func (k *themeResources) themeResource(t *models.Theme) *jsonapi.Resource {
	p := themePath(t.ID)
	r := &jsonapi.Resource{Type: "themes", ID: t.ID.String(), Links: k.links.self(p),
		Attributes: themeAttributes{Title: t.Title, Description: t.Description, PublishedAt: optionalTimestamp(t.PublishedAt),
			timestamps: timestampsOf(t.CreatedAt, t.UpdatedAt)},
		Relationships: map[string]*jsonapi.Relationship{
			"user":         k.links.relationship(p, "user", jsonapi.ToOne("users", optionalID(t.UserID))),
			"layouts":      k.links.relationship(p, "layouts", nil),
			"theme-assets": k.links.relationship(p, "theme-assets", nil),
		}}
	return versioned(r, t.Version)
}

// themesType is the themes' resourceType: their layouts (by file name)
// and theme assets (by path), one query each for all themes.
func (k *themeResources) themesType() *resourceType {
	return &resourceType{typ: "themes", what: "theme", nested: []string{"theme-assets.asset"},
		fetch: func(ctx context.Context, siteID uuid.UUID, ids []uuid.UUID, _ bool) ([]*jsonapi.Resource, error) {
			ts, err := models.ByIDs[models.Theme](ctx, k.db, siteID, ids)
			if err != nil {
				return nil, err
			}
			return k.renderThemes(ctx, siteID, ts)
		},
		many: map[string]manyFunc{
			"layouts":      childMany(k.db, "layouts", "theme_id", models.OrderFileName),
			"theme-assets": childMany(k.db, "theme_assets", "theme_id", models.OrderPath),
		}}
}

// renderThemes renders themes with the first page of their layouts' and
// theme assets' linkage.
func (k *themeResources) renderThemes(ctx context.Context, siteID uuid.UUID, ts []models.Theme) ([]*jsonapi.Resource, error) {
	out := make([]*jsonapi.Resource, len(ts))
	for i := range ts {
		out[i] = k.themeResource(&ts[i])
	}
	return out, k.cat.fillMany(ctx, siteID, k.cat.types["themes"], out, false)
}
