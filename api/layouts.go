package api

import (
	"context"
	"regexp"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models"
)

type layoutAttributes struct {
	Title       string  `json:"title"`
	FileName    string  `json:"file-name"`
	Description *string `json:"description"`
	Unique      bool    `json:"unique"`
	Content     string  `json:"content"`
	PagesCount  int     `json:"pages-count"` // live pages that use the layout
	timestamps
}

// layoutRequest is what POST and PATCH /layouts accept.
type layoutRequest struct {
	Title       *string `json:"title" oas:"required"`
	FileName    *string `json:"file-name" oas:"required,pattern:liquid-file"`
	Description *string `json:"description" oas:"nullable"`
	Unique      *bool   `json:"unique"`
	Content     *string `json:"content" oas:"required"`
	PagesCount  any     `json:"pages-count"` // read-only: known here so validate answers 422 read_only, not 400 unknown
	readOnlyTimestamps
}

// layoutColumns are the attributes a PATCH /layouts may change.
var layoutColumns = []attrColumn[models.Layout, layoutFields]{
	{"title", "title", func(l *models.Layout, f layoutFields) { l.Title = f.title }},
	{"file-name", "file_name", func(l *models.Layout, f layoutFields) { l.FileName = f.fileName }},
	{"description", "description", func(l *models.Layout, f layoutFields) { l.Description = f.description }},
	{"unique", "is_unique", func(l *models.Layout, f layoutFields) { l.Unique = f.unique }},
	{"content", "content", func(l *models.Layout, f layoutFields) { l.Content = f.content }},
}

// fileNamePattern is a layout's file name: one path segment of letters,
// digits, '_', '-' and '.', not starting with a dot, ending in .liquid.
var fileNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9_.-]*\.liquid$`)

func layoutSpec(collection bool) QuerySpec {
	s := QuerySpec{Includes: includesOf("layouts"), Fields: fieldsOf("layouts")}
	if collection {
		s.Collection = true
		s.Sorts = map[string]string{"title": "title", "file-name": "file_name", "created-at": "created_at", "updated-at": "updated_at"}
		s.DefaultSort = models.OrderFileName
		s.Filters = map[string]string{"title": "title", "file-name": "file_name"}
	}
	return s
}

func (k *themeResources) layoutResource(l *models.Layout, pages int) *jsonapi.Resource {
	p := "/layouts/" + l.ID.String()
	theme := l.ThemeID.String()
	r := &jsonapi.Resource{Type: "layouts", ID: l.ID.String(), Links: k.links.self(p),
		Attributes: layoutAttributes{Title: l.Title, FileName: l.FileName, Description: l.Description, Unique: l.Unique,
			Content: l.Content, PagesCount: pages, timestamps: timestampsOf(l.CreatedAt, l.UpdatedAt)},
		Relationships: map[string]*jsonapi.Relationship{"theme": k.links.relationship(p, "theme", jsonapi.ToOne("themes", &theme))},
	}
	return versioned(r, l.Version)
}

// renderLayouts renders layouts with their pages-count, counted in one call.
func (k *themeResources) renderLayouts(ctx context.Context, siteID uuid.UUID, ls []models.Layout) ([]*jsonapi.Resource, error) {
	out := make([]*jsonapi.Resource, len(ls))
	if len(ls) == 0 {
		return out, nil
	}
	counts, err := k.pageCounts(ctx, siteID, ids(ls, func(l *models.Layout) uuid.UUID { return l.ID }))
	if err != nil {
		return nil, err
	}
	for i := range ls {
		out[i] = k.layoutResource(&ls[i], counts[ls[i].ID])
	}
	return out, nil
}

// layoutsHandler serves /layouts. Its pageCounts (from themeResources)
// fills pages-count.
type layoutsHandler struct{ *themeResources }

// listOf serves GET /themes/:id/layouts: any theme's layouts.
func (h layoutsHandler) listOf(c *fiber.Ctx, t *models.Theme) error {
	return h.rows().respondPage(c, layoutSpec(true), h.links, themePath(t.ID)+"/layouts", t.SiteID, func(ctx context.Context, page models.Page) ([]models.Layout, int64, error) {
		return models.ListLayouts(ctx, h.db, t.SiteID, t.ID, page)
	})
}

// rows writes layouts with their pages-count and what include asks for.
func (h layoutsHandler) rows() rowRenderer[models.Layout] {
	return rowRenderer[models.Layout]{render: h.renderLayouts, cat: h.cat, version: func(l *models.Layout) int { return l.Version }}
}

// load finds the layout (of any theme of the site) named by the URL.
func (h layoutsHandler) load(c *fiber.Ctx) (*models.Layout, error) {
	return loadByID(c, h.db, "layout", models.FindLayout)
}

// layoutFields are the validated attributes of a layout request.
type layoutFields struct {
	title, fileName, content string
	description              *string
	unique                   bool
}

// validate checks the attributes sent; on create every required one must be there.
func (r layoutRequest) validate(sent map[string]bool, create bool) (layoutFields, error) {
	var f layoutFields
	if err := checkReadOnly(sent, "pages-count"); err != nil {
		return f, err
	}
	var err error
	if f.title, err = titleAttr(r.Title, sent["title"], create); err != nil {
		return f, err
	}
	if create || sent["file-name"] {
		if r.FileName == nil || len(*r.FileName) > 255 || !fileNamePattern.MatchString(*r.FileName) {
			return f, invalidAttr("file-name", "invalid_file_name",
				"file-name is required: a file name ending in .liquid (letters, digits, '_', '-', '.'; no folders; at most 255 characters).")
		}
		f.fileName = *r.FileName
	}
	if f.description, err = descriptionAttr(r.Description); err != nil {
		return f, err
	}
	if sent["unique"] {
		if r.Unique == nil {
			return f, invalidAttr("unique", "invalid_unique", "unique must be true or false.")
		}
		f.unique = *r.Unique
	}
	if create || sent["content"] {
		switch {
		case r.Content == nil || *r.Content == "":
			return f, invalidAttr("content", "invalid_content", "content is required: the layout's Liquid template.")
		case len(*r.Content) > maxLayoutContent:
			return f, invalidAttr("content", "content_too_large", "content must be at most 1 MiB (1048576 bytes).")
		case strings.ContainsRune(*r.Content, 0):
			return f, invalidAttr("content", "invalid_content", "content must not contain NUL characters.")
		}
		f.content = *r.Content
	}
	return f, nil
}

// create serves POST /layouts: a layout in a theme of the caller's site.
func (h layoutsHandler) create(c *fiber.Ctx) error {
	req, err := readCreate[layoutRequest, layoutFields](c, layoutSpec(false), "layouts", relNames{writable: []string{"theme"}})
	if err != nil {
		return err
	}
	themeID, err := readRequiredToOne(req.data.Relationships, "theme", "themes", "theme", "theme the layout belongs to")
	if err != nil {
		return err
	}
	l := &models.Layout{SiteRecord: models.NewSiteRecord(siteOf(c)), ThemeID: themeID, Title: req.fields.title, FileName: req.fields.fileName,
		Description: req.fields.description, Unique: req.fields.unique, Content: req.fields.content, Version: 1}
	return createRow(c, h.db, h.rows(), req.q, l.ID, l, models.CreateLayout)
}

// update serves PATCH /layouts/:id: changes the attributes sent, and only those.
func (h layoutsHandler) update(c *fiber.Ctx) error {
	req, err := readPatch[layoutRequest, layoutFields](c, layoutSpec(false), "layout", "layouts", relNames{writable: []string{"theme"}})
	if err != nil {
		return err
	}
	theme, err := readToOne(req.data.Relationships, "theme", "themes", "theme")
	if err != nil {
		return err
	}
	if theme.sent && !theme.null {
		// A theme the site does not have is 404 (themes are never deleted,
		// so this holds for the transaction below); naming another of its
		// themes is the 422 below.
		if err := models.CheckTheme(c.UserContext(), h.db, siteOf(c), theme.id, "theme"); err != nil {
			return err
		}
	}
	patch := patchOf(c, req, h.rows(), models.FindLayout, layoutColumns)
	patch.check = func(l *models.Layout) error {
		if theme.sent && (theme.null || theme.id != l.ThemeID) {
			return jsonapi.Unprocessable("immutable_relationship", "A layout stays in the theme it was created in; copy it with POST /layouts to put it in another theme.").
				AtPointer("/data/relationships/theme/data")
		}
		return nil
	}
	patch.conflict = models.LayoutFileNameTaken()
	return patchRow(c, h.db, patch)
}

// registerLayoutRoutes registers /layouts (docs/themes.md; the theme
// relationship's endpoints: catalog.routes).
func registerLayoutRoutes(r routes) {
	layouts := layoutsHandler{r.themeResources()}
	// GET /layouts: the layouts of the latest published theme (the one with
	// the greatest published-at), an empty list while none is published.
	editable(r, "/layouts", models.PermRead, models.PermDesign, layouts.rows(), layoutSpec, models.ListLiveLayouts, layouts.load, layouts.create, layouts.update)
	r.cat.add(&resourceType{typ: "layouts", what: "layout",
		fetch: fetchRows(layouts.db, models.ByIDs[models.Layout], layouts.renderLayouts)})
}
