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

// me serves GET /users/me: the token's user, and in meta.memberships
// every site the user belongs to (site-id, subdomain-slug, role,
// path-prefix), so a client can offer to sign in to another.
func (h usersHandler) me(c *fiber.Ctx) error {
	pr := oauth.PrincipalOf(c)
	if pr.UserID == uuid.Nil {
		return h.meClient(c, pr)
	}
	u, err := models.FindUserByID(c.UserContext(), h.db, pr.UserID)
	if err != nil {
		return err
	}
	ms, err := models.MembershipsOfUser(c.UserContext(), h.db, pr.UserID)
	if err != nil {
		return err
	}
	list := make([]any, len(ms))
	for i, m := range ms {
		list[i] = map[string]any{"site-id": m.SiteID.String(), "subdomain-slug": m.Slug, "role": string(m.Role), "path-prefix": m.PathPrefix}
	}
	return respond(c, fiber.StatusOK, jsonapi.Document{Data: h.resource(u), Meta: map[string]any{"memberships": list}})
}

// meClient serves GET /users/me to an integration client's token, which
// acts for no person: data null, and the client in meta.oauth-client (its
// oauth-clients id, client-id, name, role and site), memberships none.
func (h usersHandler) meClient(c *fiber.Ctx, pr *oauth.Principal) error {
	sc, err := models.SiteClientOf(c.UserContext(), h.db, pr.SiteID, pr.ClientID)
	if err != nil {
		return err
	}
	client := map[string]any{"id": sc.ID.String(), "client-id": sc.ClientID, "name": sc.Name, "role": string(sc.Role), "site-id": sc.SiteID.String()}
	return respond(c, fiber.StatusOK, jsonapi.Document{Data: nil, Links: &jsonapi.Links{Self: h.links.base + "/users/me"}, Meta: map[string]any{"oauth-client": client, "memberships": []any{}}})
}

// registerUserRoutes registers /users/me and /users/:id (within the
// caller's site only: another site's user looks the same as none).
func registerUserRoutes(r routes) {
	users := usersHandler{db: r.deps.DB, links: r.links}
	// A site's users: those created in it and its members, wherever they
	// were created.
	t := &resourceType{typ: "users", what: "user", fetch: func(ctx context.Context, siteID uuid.UUID, ids []uuid.UUID, _ bool) ([]*jsonapi.Resource, error) {
		us, err := models.UsersOfSite(ctx, users.db, siteID, ids)
		if err != nil {
			return nil, err
		}
		out := make([]*jsonapi.Resource, len(us))
		for i := range us {
			out[i] = users.resource(&us[i])
		}
		return out, nil
	}}
	r.cat.add(t)
	r.get("/users/me", models.PermRead, users.me)
	r.get("/users/:id", models.PermRead, r.cat.get(t))
}
