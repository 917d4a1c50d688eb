package api

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/webhooks"
)

type siteAttributes struct {
	Title         string `json:"title"`
	SubdomainSlug string `json:"subdomain-slug"`
	CreatedAt     string `json:"created-at"`
	UpdatedAt     string `json:"updated-at"`
}

// siteUpdate is what PATCH /site accepts; pointers tell sent from omitted.
type siteUpdate struct {
	Title         *string `json:"title"`
	SubdomainSlug *string `json:"subdomain-slug"`
	CreatedAt     *string `json:"created-at"`
	UpdatedAt     *string `json:"updated-at"`
}

var slugPattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

type siteHandler struct {
	db    *bun.DB
	links links
}

// siteSpec: GET and PATCH /site may include the live theme.
func siteSpec() QuerySpec {
	return QuerySpec{Includes: []string{"theme"}, Fields: []string{"sites", "themes"}}
}

func (h siteHandler) resource(s *models.ThemedSite) *jsonapi.Resource {
	var theme *string
	if s.ThemeID != nil {
		id := s.ThemeID.String()
		theme = &id
	}
	r := &jsonapi.Resource{Type: "sites", ID: s.ID.String(),
		Attributes: siteAttributes{Title: s.Title, SubdomainSlug: s.SubdomainSlug, CreatedAt: timestamp(s.CreatedAt), UpdatedAt: timestamp(s.UpdatedAt)},
		Links:      h.links.self("/site"),
		Relationships: map[string]*jsonapi.Relationship{
			// The live theme: PATCH it to publish a theme.
			"theme": h.links.relationship("/site", "theme", jsonapi.ToOne("themes", theme)),
		}}
	return versioned(r, s.Version)
}

// themes renders the live theme for include=theme. Only theme resources
// with their linkage are rendered through it (nothing nested is included),
// so it needs no asset or user rendering; GET /site/theme, which may
// include more, is served by themesHandler.live.
func (h siteHandler) themes() *themeResources { return &themeResources{db: h.db, links: h.links} }

func (h siteHandler) load(ctx context.Context, db bun.IDB, siteID uuid.UUID, lock bool) (*models.ThemedSite, error) {
	s := new(models.ThemedSite)
	sel := db.NewSelect().Model(s).Where("id = ?", siteID)
	if lock {
		sel = sel.For("UPDATE")
	}
	return s, sel.Scan(ctx)
}

func (h siteHandler) respondSite(c *fiber.Ctx, q *Query, s *models.ThemedSite) error {
	r := h.resource(s)
	cd := newCompound(q, r)
	if q.Include["theme"] && s.ThemeID != nil {
		if err := h.themes().includeThemes(c.UserContext(), s.ID, []uuid.UUID{*s.ThemeID}, cd); err != nil {
			return err
		}
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
	s, err := h.load(c.UserContext(), h.db, oauth.PrincipalOf(c).SiteID, false)
	if err != nil {
		return err
	}
	return h.respondSite(c, q, s)
}

// siteChange is a validated PATCH of the site.
type siteChange struct {
	title, slug *string
	// theme, when set, is the theme to publish; themePointer is where an
	// unknown theme is reported.
	theme        *uuid.UUID
	themePointer string
}

// update serves PATCH /site: changes the attributes sent, and only those;
// a theme relationship publishes that theme (docs/themes.md).
func (h siteHandler) update(c *fiber.Ctx) error {
	q, err := parseQuery(c, siteSpec())
	if err != nil {
		return err
	}
	var doc jsonapi.RequestDocument[siteUpdate]
	if err := jsonapi.Decode(c.Body(), &doc); err != nil {
		return err
	}
	siteID := oauth.PrincipalOf(c).SiteID
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
	a := doc.Data.Attributes
	if a.CreatedAt != nil || a.UpdatedAt != nil {
		name := "created-at"
		if a.UpdatedAt != nil {
			name = "updated-at"
		}
		return jsonapi.Unprocessable("read_only", name+" is set by the server.").AtPointer("/data/attributes/" + name)
	}
	var change siteChange
	if a.Title != nil {
		t := strings.TrimSpace(cleanText(*a.Title))
		if t == "" || utf8.RuneCountInString(t) > 200 {
			return jsonapi.Unprocessable("invalid_title", "title must be 1 to 200 characters.").AtPointer("/data/attributes/title")
		}
		change.title = &t
	}
	if a.SubdomainSlug != nil {
		if !slugPattern.MatchString(*a.SubdomainSlug) {
			return jsonapi.Unprocessable("invalid_slug", "subdomain-slug must be 1 to 63 lowercase letters, digits or inner hyphens.").AtPointer("/data/attributes/subdomain-slug")
		}
		change.slug = a.SubdomainSlug
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
		change.theme, change.themePointer = &theme.id, "/data/relationships/theme/data/id"
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

// save applies change in one transaction with the site row locked: the
// precondition (If-Match or meta.version) is judged against the locked
// version, and the write bumps it, so two editors never both land.
//
// Publishing a theme sets its published-at to the database's clock, but
// always later than any published-at of the site's themes, so "the theme
// with the greatest published-at" and sites.theme_id never disagree, even
// across API replicas with skewed clocks. Naming the theme that is already
// live changes nothing.
func (h siteHandler) save(c *fiber.Ctx, siteID uuid.UUID, bodyVersion *int, change siteChange) (*models.ThemedSite, error) {
	var out *models.ThemedSite
	err := runTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
		s, err := h.load(ctx, tx, siteID, true)
		if err != nil {
			return err
		}
		if err := checkVersion(c, s.ID.String(), s.Version, bodyVersion); err != nil {
			return err
		}
		out = s
		var cols []string
		if change.title != nil {
			s.Title = *change.title
			cols = append(cols, "title")
		}
		if change.slug != nil {
			s.SubdomainSlug = *change.slug
			cols = append(cols, "subdomain_slug")
		}
		if change.theme != nil && (s.ThemeID == nil || *s.ThemeID != *change.theme) {
			res, err := tx.NewRaw(`UPDATE themes SET
				published_at = GREATEST(clock_timestamp(), (SELECT max(published_at) FROM themes WHERE site_id = ?) + interval '1 millisecond'),
				updated_at = clock_timestamp(), version = version + 1
				WHERE id = ? AND site_id = ?`, siteID, *change.theme, siteID).Exec(ctx)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 0 {
				return unknownRelated("theme", "theme").AtPointer(change.themePointer)
			}
			s.ThemeID = change.theme
			cols = append(cols, "theme_id")
			// The webhook event commits with the publication (docs/webhooks.md).
			if err := models.RecordEvent(ctx, tx, models.Event{SiteID: siteID, Type: webhooks.ThemePublished, SubjectType: "themes", SubjectID: *change.theme}); err != nil {
				return err
			}
		}
		if len(cols) == 0 {
			return nil
		}
		s.UpdatedAt = time.Now().UTC()
		err = tx.NewUpdate().Model(s).Column(append(cols, "updated_at")...).Set("version = version + 1").
			Where("id = ? AND version = ?", s.ID, s.Version).Returning("*").Scan(ctx)
		if models.IsConflict(err) {
			return jsonapi.Unprocessable("taken", "That subdomain-slug is taken.").AtPointer("/data/attributes/subdomain-slug")
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
	s, err := h.load(c.UserContext(), h.db, oauth.PrincipalOf(c).SiteID, false)
	if err != nil {
		return err
	}
	setETag(c, s.ID.String(), s.Version)
	return linkageDocument(c, h.resource(s).Relationships["theme"])
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
	dec := json.NewDecoder(bytes.NewReader(c.Body()))
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
		return unknownRelated("theme", "theme").AtPointer("/data/id")
	}
	s, err := h.save(c, oauth.PrincipalOf(c).SiteID, nil, siteChange{theme: &id, themePointer: "/data/id"})
	if err != nil {
		return err
	}
	setETag(c, s.ID.String(), s.Version)
	return linkageDocument(c, h.resource(s).Relationships["theme"])
}

// registerSiteRoutes registers /site, its live theme and its theme
// relationship (docs/themes.md).
func registerSiteRoutes(r routes) {
	site := siteHandler{db: r.deps.DB, links: r.links}
	r.get("/site", site.get)
	r.patch("/site", site.update)
	r.get("/site/theme", themesHandler{r.themeResources()}.live)
	r.get("/site/relationships/theme", site.themeRelationship)
	r.patch("/site/relationships/theme", site.updateThemeRelationship)
}
