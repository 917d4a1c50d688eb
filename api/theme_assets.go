package api

import (
	"context"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models"
)

type themeAssetAttributes struct {
	Path string `json:"path"`
	timestamps
}

// themeAssetRequest is what POST /theme-assets accepts.
type themeAssetRequest struct {
	Path *string `json:"path" oas:"required"`
	readOnlyTimestamps
}

func themeAssetSpec(collection bool) QuerySpec {
	s := QuerySpec{Includes: includesOf("theme-assets"), Fields: fieldsOf("theme-assets")}
	if collection {
		s.Collection = true
		s.Sorts = map[string]string{"path": "path", "created-at": "created_at", "updated-at": "updated_at"}
		s.DefaultSort = models.OrderPath
		s.Filters = map[string]string{"path": "path"}
	}
	return s
}

func (k *themeResources) themeAssetResource(ta *models.ThemeAsset) *jsonapi.Resource {
	p := "/theme-assets/" + ta.ID.String()
	theme, asset := ta.ThemeID.String(), ta.AssetID.String()
	r := &jsonapi.Resource{Type: "theme-assets", ID: ta.ID.String(), Links: k.links.self(p),
		Attributes: themeAssetAttributes{Path: ta.Path, timestamps: timestampsOf(ta.CreatedAt, ta.UpdatedAt)},
		Relationships: map[string]*jsonapi.Relationship{
			"theme": k.links.relationship(p, "theme", jsonapi.ToOne("themes", &theme)),
			"asset": k.links.relationship(p, "asset", jsonapi.ToOne("assets", &asset)),
		}}
	return versioned(r, ta.Version)
}

// validate checks the attributes of a POST: the path, and no read-only member.
func (r themeAssetRequest) validate(sent map[string]bool, _ bool) (string, error) {
	if err := checkReadOnly(sent); err != nil {
		return "", err
	}
	return themeAssetPath(r.Path)
}

// themeAssetPath validates the path of an asset in a theme's assets
// folder: relative, canonical (no empty, "." or trailing segments), no
// "..", no backslashes or control characters, 1 to 255 characters.
func themeAssetPath(v *string) (string, error) {
	bad := func(detail string) (string, error) { return "", invalidAttr("path", "invalid_path", detail) }
	if v == nil || *v == "" {
		return bad("path is required: where the asset sits in the theme's assets folder, e.g. images/logo.png.")
	}
	p := *v
	switch {
	case utf8.RuneCountInString(p) > 255:
		return bad("path must be at most 255 characters.")
	case strings.HasPrefix(p, "/"):
		return bad("path is relative to the theme's assets folder: it must not start with '/'.")
	case strings.Contains(p, `\`):
		return bad("path separates folders with '/'; backslashes are not allowed.")
	case strings.Contains(p, ".."):
		return bad("path must not contain '..'.")
	case strings.IndexFunc(p, unicode.IsControl) >= 0:
		return bad("path must not contain control characters.")
	case path.Clean(p) != p:
		return bad("path must not have empty or '.' segments, or end with '/'.")
	}
	return p, nil
}

// themeAssetsHandler serves /theme-assets.
type themeAssetsHandler struct{ *themeResources }

// load finds the theme asset named by the URL.
func (h themeAssetsHandler) load(c *fiber.Ctx) (*models.ThemeAsset, error) {
	return loadByID(c, h.db, "theme asset", models.FindThemeAsset)
}

// rows writes theme assets with what include asks for.
func (h themeAssetsHandler) rows() rowRenderer[models.ThemeAsset] {
	return rowRenderer[models.ThemeAsset]{cat: h.cat, render: renderEach(h.themeAssetResource),
		version: func(ta *models.ThemeAsset) int { return ta.Version }}
}

// listOf serves GET /themes/:id/theme-assets.
func (h themeAssetsHandler) listOf(c *fiber.Ctx, t *models.Theme) error {
	return h.rows().respondPage(c, themeAssetSpec(true), h.links, themePath(t.ID)+"/theme-assets", t.SiteID,
		func(ctx context.Context, page models.Page) ([]models.ThemeAsset, int64, error) {
			return models.ListThemeAssets(ctx, h.db, t.SiteID, t.ID, page)
		})
}

// create serves POST /theme-assets: links an asset of the site to a theme
// of the site at a path, and sets the asset's theme-path.
func (h themeAssetsHandler) create(c *fiber.Ctx) error {
	req, err := readCreate[themeAssetRequest, string](c, themeAssetSpec(false), "theme-assets", relNames{writable: []string{"theme", "asset"}})
	if err != nil {
		return err
	}
	assetPath, rels := req.fields, req.data.Relationships
	themeID, err := readRequiredToOne(rels, "theme", "themes", "theme", "theme to put the asset in")
	if err != nil {
		return err
	}
	assetID, err := readRequiredToOne(rels, "asset", "assets", "asset", "asset to put in the theme")
	if err != nil {
		return err
	}
	ta := &models.ThemeAsset{SiteRecord: models.NewSiteRecord(siteOf(c)), ThemeID: themeID, AssetID: assetID, Path: assetPath, Version: 1}
	err = runTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
		auditItem(ctx, ta.ID)
		return models.CreateThemeAsset(ctx, tx, ta)
	})
	if err != nil {
		return err
	}
	return h.rows().respondOne(c, req.q, fiber.StatusCreated, ta)
}

// delete serves DELETE /theme-assets/:id: unlinks the asset from the theme
// (the asset itself stays) and updates its theme-path. 204.
func (h themeAssetsHandler) delete(c *fiber.Ctx) error {
	if _, err := queryParams(c); err != nil {
		return err
	}
	read, err := h.load(c)
	if err != nil {
		return err
	}
	err = runTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
		return models.DeleteThemeAsset(ctx, tx, read, func(ta *models.ThemeAsset) error {
			return checkVersion(c, ta.ID.String(), ta.Version, nil)
		})
	})
	if err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// registerThemeAssetRoutes registers /theme-assets (docs/themes.md; the
// theme and asset relationships' endpoints: catalog.routes).
func registerThemeAssetRoutes(r routes) {
	themeAssets := themeAssetsHandler{r.themeResources()}
	r.cat.add(&resourceType{typ: "theme-assets", what: "theme asset", fetch: byIDs(themeAssets.db, themeAssets.themeAssetResource)})
	r.post("/theme-assets", models.PermDesign, themeAssets.create)
	r.get("/theme-assets/:id", models.PermRead, themeAssets.rows().get(themeAssetSpec(false), themeAssets.load))
	r.delete("/theme-assets/:id", models.PermDesign, themeAssets.delete)
}
