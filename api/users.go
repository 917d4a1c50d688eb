package api

import (
	"github.com/gofiber/fiber/v2"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/models"
)

type userAttributes struct {
	Email     string `json:"email" oas:"email"`
	Name      string `json:"name"`
	CreatedAt string `json:"created-at" oas:"date-time"`
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
	u, err := models.FindUser(c.UserContext(), h.db, siteOf(c), oauth.PrincipalOf(c).UserID)
	if err != nil {
		return err
	}
	return respond(c, fiber.StatusOK, jsonapi.Document{Data: h.resource(u)})
}

// registerUserRoutes registers /users/me and /users/:id (within the
// caller's site only: another site's user looks the same as none).
func registerUserRoutes(r routes) {
	users := usersHandler{db: r.deps.DB, links: r.links}
	t := &resourceType{typ: "users", what: "user", fetch: byIDs(users.db, users.resource)}
	r.cat.add(t)
	r.get("/users/me", users.me)
	r.get("/users/:id", r.cat.get(t))
}
