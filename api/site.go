package api

import (
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/models"
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

func (h siteHandler) resource(s *models.Site) *jsonapi.Resource {
	return &jsonapi.Resource{Type: "sites", ID: s.ID.String(),
		Attributes: siteAttributes{Title: s.Title, SubdomainSlug: s.SubdomainSlug, CreatedAt: timestamp(s.CreatedAt), UpdatedAt: timestamp(s.UpdatedAt)},
		Links:      h.links.self("/site")}
}

func (h siteHandler) load(c *fiber.Ctx) (*models.Site, error) {
	s := new(models.Site)
	err := h.db.NewSelect().Model(s).Where("id = ?", oauth.PrincipalOf(c).SiteID).Scan(c.UserContext())
	return s, err
}

// get serves GET /site: the caller's site.
func (h siteHandler) get(c *fiber.Ctx) error {
	s, err := h.load(c)
	if err != nil {
		return err
	}
	return respond(c, fiber.StatusOK, jsonapi.Document{Data: h.resource(s)})
}

// patch serves PATCH /site: changes the attributes sent, and only those.
func (h siteHandler) patch(c *fiber.Ctx) error {
	var doc jsonapi.RequestDocument[siteUpdate]
	if err := jsonapi.Decode(c.Body(), &doc); err != nil {
		return err
	}
	s, err := h.load(c)
	if err != nil {
		return err
	}
	if doc.Data.Type != "sites" {
		return jsonapi.Conflict("type_mismatch", "data.type must be \"sites\".").AtPointer("/data/type")
	}
	if doc.Data.ID != "" && doc.Data.ID != s.ID.String() {
		return jsonapi.Conflict("id_mismatch", "data.id is not this site's id.").AtPointer("/data/id")
	}
	a := doc.Data.Attributes
	if a.CreatedAt != nil || a.UpdatedAt != nil {
		name := "created-at"
		if a.UpdatedAt != nil {
			name = "updated-at"
		}
		return jsonapi.Unprocessable("read_only", name+" is set by the server.").AtPointer("/data/attributes/" + name)
	}
	q := h.db.NewUpdate().Model(s).WherePK()
	if a.Title != nil {
		t := strings.TrimSpace(cleanText(*a.Title))
		if t == "" || utf8.RuneCountInString(t) > 200 {
			return jsonapi.Unprocessable("invalid_title", "title must be 1 to 200 characters.").AtPointer("/data/attributes/title")
		}
		s.Title = t
		q = q.Column("title")
	}
	if a.SubdomainSlug != nil {
		if !slugPattern.MatchString(*a.SubdomainSlug) {
			return jsonapi.Unprocessable("invalid_slug", "subdomain-slug must be 1 to 63 lowercase letters, digits or inner hyphens.").AtPointer("/data/attributes/subdomain-slug")
		}
		s.SubdomainSlug = *a.SubdomainSlug
		q = q.Column("subdomain_slug")
	}
	if a.Title != nil || a.SubdomainSlug != nil {
		s.UpdatedAt = time.Now().UTC()
		if _, err := q.Column("updated_at").Exec(c.UserContext()); err != nil {
			if models.IsConflict(err) {
				return jsonapi.Unprocessable("taken", "That subdomain-slug is taken.").AtPointer("/data/attributes/subdomain-slug")
			}
			return err
		}
	}
	return respond(c, fiber.StatusOK, jsonapi.Document{Data: h.resource(s)})
}
