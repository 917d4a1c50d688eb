package api

import (
	"context"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/models"
)

type userAttributes struct {
	Email     string `json:"email"`
	Name      string `json:"name"`
	CreatedAt string `json:"created-at"`
}

type usersHandler struct {
	db    *bun.DB
	links links
}

func (h usersHandler) resource(u *models.User) *jsonapi.Resource {
	return &jsonapi.Resource{Type: "users", ID: u.ID.String(),
		Attributes: userAttributes{Email: u.Email, Name: u.Name, CreatedAt: timestamp(u.CreatedAt)},
		Links:      h.links.self("/users/" + u.ID.String())}
}

// me serves GET /users/me: the token's user.
func (h usersHandler) me(c *fiber.Ctx) error {
	return h.respondUser(c, oauth.PrincipalOf(c).UserID.String())
}

// get serves GET /users/:id, within the caller's site only.
func (h usersHandler) get(c *fiber.Ctx) error { return h.respondUser(c, c.Params("id")) }

// find loads a user of a site.
func (h usersHandler) find(ctx context.Context, siteID, id uuid.UUID) (*models.User, error) {
	u := new(models.User)
	err := h.db.NewSelect().Model(u).Where("id = ? AND site_id = ?", id, siteID).Scan(ctx)
	return u, err
}

func (h usersHandler) respondUser(c *fiber.Ctx, id string) error {
	uid, err := uuid.Parse(id)
	if err != nil {
		return models.NotFound("user")
	}
	u := new(models.User)
	err = h.db.NewSelect().Model(u).Where("id = ? AND site_id = ?", uid, oauth.PrincipalOf(c).SiteID).Scan(c.UserContext())
	if models.IsNoRows(err) {
		return models.NotFound("user") // another site's user looks the same as none
	}
	if err != nil {
		return err
	}
	return respond(c, fiber.StatusOK, jsonapi.Document{Data: h.resource(u)})
}

// registerUserRoutes registers /users/me and /users/:id.
func registerUserRoutes(r routes) {
	users := usersHandler{db: r.deps.DB, links: r.links}
	r.get("/users/me", users.me)
	r.get("/users/:id", users.get)
}
