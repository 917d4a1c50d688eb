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
}

func themePath(id uuid.UUID) string { return "/themes/" + id.String() }

func ids[T any](rows []T, id func(*T) uuid.UUID) []uuid.UUID {
	out := make([]uuid.UUID, len(rows))
	for i := range rows {
		out[i] = id(&rows[i])
	}
	return out
}

// themeResource renders a theme with the linkage of its layouts and theme assets.
func (k *themeResources) themeResource(t *models.Theme, layoutIDs, assetIDs []string) *jsonapi.Resource {
	p := themePath(t.ID)
	r := &jsonapi.Resource{Type: "themes", ID: t.ID.String(), Links: k.links.self(p),
		Attributes: themeAttributes{Title: t.Title, Description: t.Description, PublishedAt: optionalTimestamp(t.PublishedAt),
			timestamps: timestampsOf(t.CreatedAt, t.UpdatedAt)},
		Relationships: map[string]*jsonapi.Relationship{
			"user":         k.links.relationship(p, "user", jsonapi.ToOne("users", optionalID(t.UserID))),
			"layouts":      k.links.relationship(p, "layouts", jsonapi.ToMany("layouts", layoutIDs)),
			"theme-assets": k.links.relationship(p, "theme-assets", jsonapi.ToMany("theme-assets", assetIDs)),
		}}
	return versioned(r, t.Version)
}

// childIDs returns, per theme, the ids of its layouts (by file name) and
// theme assets (by path): the linkage of its to-many relationships.
func (k *themeResources) childIDs(ctx context.Context, db bun.IDB, siteID uuid.UUID, themeIDs []uuid.UUID) (layouts, assets map[uuid.UUID][]string, err error) {
	layouts, assets = map[uuid.UUID][]string{}, map[uuid.UUID][]string{}
	if len(themeIDs) == 0 {
		return layouts, assets, nil
	}
	ls, err := models.OfThemes[models.Layout](ctx, db, siteID, themeIDs, "id", "theme_id")
	if err != nil {
		return nil, nil, err
	}
	for _, l := range ls {
		layouts[l.ThemeID] = append(layouts[l.ThemeID], l.ID.String())
	}
	tas, err := models.OfThemes[models.ThemeAsset](ctx, db, siteID, themeIDs, "id", "theme_id")
	if err != nil {
		return nil, nil, err
	}
	for _, ta := range tas {
		assets[ta.ThemeID] = append(assets[ta.ThemeID], ta.ID.String())
	}
	return layouts, assets, nil
}

// renderThemes renders themes, loading their linkage in two queries.
func (k *themeResources) renderThemes(ctx context.Context, db bun.IDB, siteID uuid.UUID, ts []models.Theme) ([]*jsonapi.Resource, error) {
	layouts, assets, err := k.childIDs(ctx, db, siteID, ids(ts, func(t *models.Theme) uuid.UUID { return t.ID }))
	if err != nil {
		return nil, err
	}
	out := make([]*jsonapi.Resource, len(ts))
	for i := range ts {
		out[i] = k.themeResource(&ts[i], layouts[ts[i].ID], assets[ts[i].ID])
	}
	return out, nil
}

// includeForThemes adds what include asks for to the themes' compound document.
func (k *themeResources) includeForThemes(ctx context.Context, siteID uuid.UUID, q *Query, ts []models.Theme, cd *compound) error {
	if len(ts) == 0 || len(q.Include) == 0 {
		return nil
	}
	themeIDs := ids(ts, func(t *models.Theme) uuid.UUID { return t.ID })
	if q.Include["user"] {
		var userIDs []uuid.UUID
		for _, t := range ts {
			if t.UserID != nil {
				userIDs = append(userIDs, *t.UserID)
			}
		}
		if len(userIDs) > 0 {
			us, err := models.ByIDs[models.User](ctx, k.db, siteID, userIDs)
			if err != nil {
				return err
			}
			for i := range us {
				cd.add(k.users.resource(&us[i]))
			}
		}
	}
	if q.Include["layouts"] {
		ls, err := models.OfThemes[models.Layout](ctx, k.db, siteID, themeIDs)
		if err != nil {
			return err
		}
		rs, err := k.renderLayouts(ctx, siteID, ls)
		if err != nil {
			return err
		}
		cd.add(rs...)
	}
	if q.Include["theme-assets"] {
		tas, err := models.OfThemes[models.ThemeAsset](ctx, k.db, siteID, themeIDs)
		if err != nil {
			return err
		}
		for i := range tas {
			cd.add(k.themeAssetResource(&tas[i]))
		}
		if q.Include["theme-assets.asset"] {
			if err := k.includeAssets(ctx, siteID, ids(tas, func(ta *models.ThemeAsset) uuid.UUID { return ta.AssetID }), cd); err != nil {
				return err
			}
		}
	}
	return nil
}

// includeThemes adds the site's themes with the given ids.
func (k *themeResources) includeThemes(ctx context.Context, siteID uuid.UUID, themeIDs []uuid.UUID, cd *compound) error {
	ts, err := models.ByIDs[models.Theme](ctx, k.db, siteID, themeIDs)
	if err != nil {
		return err
	}
	rs, err := k.renderThemes(ctx, k.db, siteID, ts)
	if err != nil {
		return err
	}
	cd.add(rs...)
	return nil
}

// includeAssets adds the site's assets with the given ids.
func (k *themeResources) includeAssets(ctx context.Context, siteID uuid.UUID, assetIDs []uuid.UUID, cd *compound) error {
	if len(assetIDs) == 0 {
		return nil
	}
	as, err := models.ByIDs[models.Asset](ctx, k.db, siteID, assetIDs)
	if err != nil {
		return err
	}
	for i := range as {
		cd.add(k.assets.assetResource(&as[i]))
	}
	return nil
}
