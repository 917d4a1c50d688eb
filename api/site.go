package api

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"slices"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/intake"
	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models"
)

type siteAttributes struct {
	Title         string `json:"title"`
	SubdomainSlug string `json:"subdomain-slug"` // a DNS label (slugPattern), unique among sites
	// ReleaseApprovals is how many valid approvals a release needs before
	// it is published (docs/releases.md "Review"); 0: no review step.
	ReleaseApprovals int `json:"release-approvals"`
	// Locales are the site's BCP 47 language tags in order, the first the
	// default; LocaleFallbacks maps a tag to the one its missing values
	// come from; BaseLocale is the locale of the records' own values;
	// RequireDefaultLocale: a create is published only with a title in the
	// default locale (docs/locales.md).
	Locales              []string          `json:"locales"`
	LocaleFallbacks      map[string]string `json:"locale-fallbacks"`
	BaseLocale           string            `json:"base-locale"`
	RequireDefaultLocale bool              `json:"require-default-locale"`
	timestamps
}

// siteUpdate is what PATCH /site accepts; pointers tell sent from omitted.
type siteUpdate struct {
	Title            *string `json:"title"`
	SubdomainSlug    *string `json:"subdomain-slug" oas:"pattern:dns-label"`
	ReleaseApprovals *int    `json:"release-approvals"`
	// Locales, LocaleFallbacks, RequireDefaultLocale: the locale settings
	// (site_locales.go); base-locale is set by the server.
	Locales              *[]string          `json:"locales"`
	LocaleFallbacks      *map[string]string `json:"locale-fallbacks"`
	RequireDefaultLocale *bool              `json:"require-default-locale"`
	BaseLocale           any                `json:"base-locale"`
	readOnlyTimestamps
}

var slugPattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

type siteHandler struct {
	db    *bun.DB
	links links
	cat   *catalog
}

// siteSpec: GET and PATCH /site may include the live theme.
func siteSpec() QuerySpec {
	return QuerySpec{Includes: includesOf("sites"), Fields: fieldsOf("sites")}
}

func (h siteHandler) resource(s *models.ThemedSite) *jsonapi.Resource {
	theme := optionalID(s.ThemeID)
	r := &jsonapi.Resource{Type: "sites", ID: s.ID.String(),
		Attributes: siteAttributes{Title: s.Title, SubdomainSlug: s.SubdomainSlug, ReleaseApprovals: s.ReleaseApprovals,
			Locales: s.Locales, LocaleFallbacks: fallbacksOf(s), BaseLocale: s.BaseLocale, RequireDefaultLocale: s.RequireDefaultLocale,
			timestamps: timestampsOf(s.CreatedAt, s.UpdatedAt)},
		Links: h.links.self("/site"),
		Relationships: map[string]*jsonapi.Relationship{
			// The live theme: PATCH it to publish a theme.
			"theme": h.links.relationship("/site", "theme", jsonapi.ToOne("themes", theme)),
		}}
	return versioned(r, s.Version)
}

func (h siteHandler) respondSite(c *fiber.Ctx, q *Query, s *models.ThemedSite) error {
	r := h.resource(s)
	cd := newCompound(q, r)
	if err := h.cat.include(c.UserContext(), s.ID, q, cd, []*jsonapi.Resource{r}, false); err != nil {
		return err
	}
	setETag(c, s.ID.String(), s.Version)
	return cd.respond(c, fiber.StatusOK, q.Sparse(r), nil, nil)
}

// get serves GET /site: the caller's site.
func (h siteHandler) get(c *fiber.Ctx) error {
	q, err := parseQuery(c, siteSpec())
	if err != nil {
		return err
	}
	s, err := models.FindSite(c.UserContext(), h.db, siteOf(c), false)
	if err != nil {
		return err
	}
	return h.respondSite(c, q, s)
}

// update serves PATCH /site: changes the attributes sent, and only those;
// a theme relationship publishes that theme (docs/themes.md).
func (h siteHandler) update(c *fiber.Ctx) error {
	q, err := parseQuery(c, siteSpec())
	if err != nil {
		return err
	}
	body, err := intake.Body(c)
	if err != nil {
		return err
	}
	var doc jsonapi.RequestDocument[siteUpdate]
	if err := jsonapi.Decode(body, &doc); err != nil {
		return err
	}
	siteID := siteOf(c)
	if err := checkType(doc.Data.Type, "sites"); err != nil {
		return err
	}
	if doc.Data.ID != "" && doc.Data.ID != siteID.String() {
		return jsonapi.Conflict("id_mismatch", "data.id is not this site's id.").AtPointer("/data/id")
	}
	bodyVersion, err := metaVersion(doc.Data.Meta)
	if err != nil {
		return err
	}
	if err := checkReadOnly(doc.Data.Sent, "base-locale"); err != nil {
		return err
	}
	attrs := doc.Data.Attributes
	change, err := localeChange(c, doc.Data.Sent, attrs, doc.Meta)
	if err != nil {
		return err
	}
	if attrs.Title != nil {
		title, err := titleAttr(attrs.Title, true, false)
		if err != nil {
			return err
		}
		change.Title = &title
	}
	if attrs.SubdomainSlug != nil {
		if !slugPattern.MatchString(*attrs.SubdomainSlug) {
			return jsonapi.Unprocessable("invalid_slug", "subdomain-slug must be 1 to 63 lowercase letters, digits or inner hyphens.").AtPointer("/data/attributes/subdomain-slug")
		}
		change.Slug = attrs.SubdomainSlug
	}
	if attrs.ReleaseApprovals != nil {
		if n := *attrs.ReleaseApprovals; n < 0 || n > 5 {
			return jsonapi.Unprocessable("invalid_approvals", "release-approvals is a whole number from 0 to 5.").AtPointer("/data/attributes/release-approvals")
		}
		change.ReleaseApprovals = attrs.ReleaseApprovals
	}
	if err := checkRelationshipNames(doc.Data.Relationships, []string{"theme"}, nil); err != nil {
		return err
	}
	theme, err := readToOne(doc.Data.Relationships, "theme", "themes", "theme")
	if err != nil {
		return err
	}
	if theme.sent {
		if theme.null {
			return noUnpublish("/data/relationships/theme/data")
		}
		change.Theme = &theme.id
	}
	s, err := h.save(c, siteID, bodyVersion, change)
	if err != nil {
		return err
	}
	return h.respondSite(c, q, s)
}

func noUnpublish(pointer string) *jsonapi.Error {
	return jsonapi.Unprocessable("theme_required", "A site always has a live theme once one is published: publish another theme instead of null.").AtPointer(pointer)
}

// save applies change (models.UpdateSite), judging If-Match or
// meta.version against the locked site.
func (h siteHandler) save(c *fiber.Ctx, siteID uuid.UUID, bodyVersion *int, change models.SiteChange) (*models.ThemedSite, error) {
	var out *models.ThemedSite
	err := runTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
		var err error
		out, err = models.UpdateSite(ctx, tx, siteID, change, func(s *models.ThemedSite) error {
			return checkVersion(c, s.ID.String(), s.Version, bodyVersion)
		})
		if err == nil && change.LocalesChanged() {
			err = localePathsOf(ctx, tx, siteID, change)
		}
		return err
	})
	return out, err
}

// themeRelationship serves GET /site/relationships/theme.
func (h siteHandler) themeRelationship(c *fiber.Ctx) error {
	if _, err := queryParams(c); err != nil {
		return err
	}
	s, err := models.FindSite(c.UserContext(), h.db, siteOf(c), false)
	if err != nil {
		return err
	}
	setETag(c, s.ID.String(), s.Version)
	return respondLinkage(c, h.resource(s).Relationships["theme"])
}

// updateThemeRelationship serves PATCH /site/relationships/theme with
// {"data":{"type":"themes","id":...}}: publishes that theme, as PATCH /site
// does. If-Match applies to the site's ETag.
func (h siteHandler) updateThemeRelationship(c *fiber.Ctx) error {
	if _, err := queryParams(c); err != nil {
		return err
	}
	var body struct {
		Data    json.RawMessage  `json:"data"`
		Meta    map[string]any   `json:"meta"`
		JSONAPI *jsonapi.Version `json:"jsonapi"`
	}
	raw, err := intake.Body(c)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil || dec.More() {
		return jsonapi.BadRequest("malformed_document", "The body must be a relationship document: {\"data\":{\"type\":\"themes\",\"id\":\"...\"}}.").AtPointer("")
	}
	ident, err := jsonapi.RequestRelationship{Data: body.Data}.ToOne()
	switch {
	case err != nil:
		return jsonapi.BadRequest("malformed_document", `data must be {"type":"themes","id":"..."}.`).AtPointer("/data")
	case ident == nil:
		return noUnpublish("/data")
	case ident.Type != "themes":
		return checkType(ident.Type, "themes")
	}
	id, err := uuid.Parse(ident.ID)
	if err != nil {
		return inRelationshipDocument(models.RefNotFound("theme", "theme"))
	}
	s, err := h.save(c, siteOf(c), nil, models.SiteChange{Theme: &id})
	if err != nil {
		return inRelationshipDocument(err)
	}
	setETag(c, s.ID.String(), s.Version)
	return respondLinkage(c, h.resource(s).Relationships["theme"])
}

// registerSiteRoutes registers /site, its live theme and its theme
// relationship (docs/themes.md).
func registerSiteRoutes(r routes) {
	site := siteHandler{db: r.deps.DB, links: r.links, cat: r.cat}
	// The site as a related record (a membership's site): the caller's own.
	r.cat.add(&resourceType{typ: "sites", what: "site", fetch: func(ctx context.Context, siteID uuid.UUID, ids []uuid.UUID, _ bool) ([]*jsonapi.Resource, error) {
		if !slices.Contains(ids, siteID) {
			return nil, nil
		}
		s, err := models.FindSite(ctx, site.db, siteID, false)
		if err != nil {
			return nil, err
		}
		return []*jsonapi.Resource{site.resource(s)}, nil
	}})
	r.get("/site", models.PermRead, site.get)
	r.patch("/site", models.PermSite, site.update)
	r.get("/site/theme", models.PermRead, themesHandler{r.themeResources()}.live)
	r.get("/site/relationships/theme", models.PermRead, site.themeRelationship)
	r.patch("/site/relationships/theme", models.PermDesign, site.updateThemeRelationship)
}
