package api

import (
	"context"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/models"
)

// Theme handlers (docs/themes.md).

type themeAttributes struct {
	Title       string  `json:"title"`
	Description *string `json:"description"`
	PublishedAt *string `json:"published-at" oas:"date-time"`
	timestamps
}

// themeRequest is what POST and PATCH /themes accept. Pointers and Sent
// tell omitted from sent (and sent null); read-only members are accepted
// by the decoder only to be refused with a 422 that points at them.
type themeRequest struct {
	Title       *string `json:"title" oas:"required"`
	Description *string `json:"description" oas:"nullable"`
	PublishedAt any     `json:"published-at"`
	readOnlyTimestamps
}

// themeReadOnlyRels are the relationships of a theme the server sets.
var themeReadOnlyRels = []string{"user", "layouts", "theme-assets"}

// themeColumns are the attributes a PATCH /themes may change.
var themeColumns = []attrColumn[models.Theme, themeFields]{
	{"title", "title", func(t *models.Theme, f themeFields) { t.Title = f.title }},
	{"description", "description", func(t *models.Theme, f themeFields) { t.Description = f.description }},
}

// themeFields are the validated attributes of a theme request.
type themeFields struct {
	title       string
	description *string
}

// validate checks the attributes sent; on create the title must be there.
func (r themeRequest) validate(sent map[string]bool, create bool) (f themeFields, err error) {
	if err = checkReadOnly(sent, "published-at"); err != nil {
		return f, err
	}
	if f.title, err = titleAttr(r.Title, sent["title"], create); err != nil {
		return f, err
	}
	f.description, err = descriptionAttr(r.Description)
	return f, err
}

// Query specs of the themes endpoints.
func themeSpec(collection bool) QuerySpec {
	s := QuerySpec{Includes: includesOf("themes", "theme-assets.asset"), Fields: fieldsOf("themes", "assets")}
	if collection {
		s.Collection = true
		s.Sorts = map[string]string{"title": "title", "created-at": "created_at", "updated-at": "updated_at", "published-at": "published_at"}
		s.DefaultSort = models.OrderNewest
		s.Filters = map[string]string{"title": "title"}
	}
	return s
}

type themesHandler struct{ *themeResources }

// rows writes themes with their linkage and what include asks for.
func (h themesHandler) rows() rowRenderer[models.Theme] {
	return rowRenderer[models.Theme]{cat: h.cat, render: h.renderThemes, version: func(t *models.Theme) int { return t.Version }}
}

// load finds the theme named by the URL.
func (h themesHandler) load(c *fiber.Ctx) (*models.Theme, error) {
	return loadByID(c, h.db, "theme", models.FindTheme)
}

// create serves POST /themes: a new working-copy theme of the caller's
// site, with copies of the layouts and theme assets of a source theme
// when the source relationship names one.
func (h themesHandler) create(c *fiber.Ctx) error {
	req, err := readCreate[themeRequest, themeFields](c, themeSpec(false), "themes", relNames{[]string{"source"}, themeReadOnlyRels})
	if err != nil {
		return err
	}
	source, err := readToOne(req.data.Relationships, "source", "themes", "theme")
	if err != nil {
		return err
	}
	pr := oauth.PrincipalOf(c)
	t := &models.Theme{SiteRecord: models.NewSiteRecord(pr.SiteID), UserID: models.Person(pr.UserID), Title: req.fields.title, Description: req.fields.description,
		Version: 1}
	var sourceID *uuid.UUID
	if source.sent && !source.null {
		sourceID = &source.id
	}
	err = runTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
		auditItem(ctx, t.ID)
		return models.CreateTheme(ctx, tx, t, sourceID)
	})
	if err != nil {
		return err
	}
	return h.rows().respondOne(c, req.q, fiber.StatusCreated, t)
}

// update serves PATCH /themes/:id: changes the attributes sent, and only
// those; description is nulled only when sent as null.
func (h themesHandler) update(c *fiber.Ctx) error {
	req, err := readPatch[themeRequest, themeFields](c, themeSpec(false), "theme", "themes", relNames{readOnly: themeReadOnlyRels})
	if err != nil {
		return err
	}
	return patchRow(c, h.db, patchOf(c, req, h.rows(), models.FindTheme, themeColumns))
}

// related serves GET /themes/:id/{layouts,theme-assets}: the theme's
// layouts or theme assets as a collection, sorted, filtered and paginated
// as GET /layouts is (the catalog's generic endpoint pages through the
// linkage only).
func (h themesHandler) related(name string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		t, err := h.load(c)
		if err != nil {
			return err
		}
		if name == "layouts" {
			return layoutsHandler{h.themeResources}.listOf(c, t)
		}
		return themeAssetsHandler{h.themeResources}.listOf(c, t)
	}
}

// respondRelatedTheme answers a related-resource link that names one theme
// (or none): /site/theme.
func (k *themeResources) respondRelatedTheme(c *fiber.Ctx, q *Query, themeID *uuid.UUID) error {
	if themeID == nil {
		return respondNull(c, k.links.base+c.Path(), q)
	}
	t, err := models.FindTheme(c.UserContext(), k.db, siteOf(c), *themeID)
	if err != nil {
		return err
	}
	return themesHandler{k}.rows().respondOne(c, q, fiber.StatusOK, t)
}

// live serves GET /site/theme: the site's live theme, or data null before
// any theme is published.
func (h themesHandler) live(c *fiber.Ctx) error {
	q, err := parseQuery(c, themeSpec(false))
	if err != nil {
		return err
	}
	s, err := models.FindSite(c.UserContext(), h.db, siteOf(c), false)
	if err != nil {
		return err
	}
	return h.respondRelatedTheme(c, q, s.ThemeID)
}

// registerThemeRoutes registers /themes and its related links (docs/themes.md).
func registerThemeRoutes(r routes) {
	themes := themesHandler{r.themeResources()}
	// GET /themes: the site's themes, newest first, paginated.
	editable(r, "/themes", models.PermRead, models.PermDesign, themes.rows(), themeSpec, models.ListThemes, themes.load, themes.create, themes.update)
	t := themes.themesType()
	t.related = map[string]fiber.Handler{"layouts": themes.related("layouts"), "theme-assets": themes.related("theme-assets")}
	r.cat.add(t)
}
