package api

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models"
)

// Integration clients (docs/auth.md, "Integration tokens"): GET and POST
// /oauth-clients, GET and DELETE /oauth-clients/:id, for the site's
// admins (PermMemberships: a client acts on the site as a member does).

type oauthClientAttributes struct {
	Name      string `json:"name"`
	Role      string `json:"role" oas:"enum:role"`
	RateLimit int    `json:"rate-limit"`
	ClientID  string `json:"client-id"`
	// ClientSecret is only in the answer that made the client (201); null
	// ever after: only its hash is stored.
	ClientSecret *string `json:"client-secret"`
	CreatedAt    string  `json:"created-at" oas:"date-time"`
}

// oauthClientRequest is what POST /oauth-clients accepts.
type oauthClientRequest struct {
	Name      *string `json:"name" oas:"required"`
	Role      *string `json:"role" oas:"enum:role,required"`
	RateLimit *int    `json:"rate-limit"`
	// Read-only, accepted only to be refused with a pointer at them.
	ClientID     any `json:"client-id"`
	ClientSecret any `json:"client-secret"`
	readOnlyTimestamps
}

// oauthClientFields are the validated attributes of a request.
type oauthClientFields struct {
	name      string
	role      models.Role
	rateLimit int
}

func (r oauthClientRequest) validate(sent map[string]bool, _ bool) (f oauthClientFields, err error) {
	if err = checkReadOnly(sent, "client-id", "client-secret"); err != nil {
		return f, err
	}
	if r.Name == nil || strings.TrimSpace(*r.Name) == "" || utf8.RuneCountInString(*r.Name) > 200 {
		return f, invalidAttr("name", "invalid_name", "name is required: up to 200 characters.")
	}
	if r.Role == nil || !models.ValidRole(*r.Role) {
		return f, invalidAttr("role", "invalid_role", "role is required: one of viewer, author, editor, admin.")
	}
	f.name, f.role, f.rateLimit = strings.TrimSpace(*r.Name), models.Role(*r.Role), models.DefaultRateLimit
	if sent["rate-limit"] {
		if r.RateLimit == nil || *r.RateLimit < 1 || *r.RateLimit > models.MaxRateLimit {
			return f, invalidAttr("rate-limit", "invalid_rate_limit",
				fmt.Sprintf("rate-limit must be a whole number of requests per minute from 1 to %d.", models.MaxRateLimit))
		}
		f.rateLimit = *r.RateLimit
	}
	return f, nil
}

func oauthClientSpec(collection bool) QuerySpec {
	s := QuerySpec{Fields: fieldsOf("oauth-clients")}
	if collection {
		s.Collection = true
		s.Sorts = map[string]string{"created-at": "created_at"}
		s.DefaultSort = models.OrderNewest
	}
	return s
}

type oauthClientsHandler struct {
	db        *bun.DB
	links     links
	secretKey []byte
	cat       *catalog
}

// resource renders sc; secret is the client secret when this answer made it.
func (h oauthClientsHandler) resource(sc *models.SiteClient, secret *string) *jsonapi.Resource {
	return &jsonapi.Resource{Type: "oauth-clients", ID: sc.ID.String(), Links: h.links.self("/oauth-clients/" + sc.ID.String()),
		Attributes: oauthClientAttributes{Name: sc.Name, Role: string(sc.Role), RateLimit: sc.RateLimit, ClientID: sc.ClientID,
			ClientSecret: secret, CreatedAt: timestamp(sc.CreatedAt)}}
}

func (h oauthClientsHandler) rows(secret *string) rowRenderer[models.SiteClient] {
	return rowRenderer[models.SiteClient]{cat: h.cat, render: renderEach(func(sc *models.SiteClient) *jsonapi.Resource {
		return h.resource(sc, secret)
	})}
}

func (h oauthClientsHandler) load(c *fiber.Ctx) (*models.SiteClient, error) {
	return loadByID(c, h.db, "OAuth client", models.FindSiteClient)
}

// create serves POST /oauth-clients: the answer shows the secret, once.
func (h oauthClientsHandler) create(c *fiber.Ctx) error {
	req, err := readCreate[oauthClientRequest, oauthClientFields](c, oauthClientSpec(false), "oauth-clients", relNames{})
	if err != nil {
		return err
	}
	f := req.fields
	var sc *models.SiteClient
	var secret string
	if err := runTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
		sc, secret, err = models.CreateSiteClient(ctx, tx, h.secretKey, siteOf(c), f.name, f.role, f.rateLimit)
		return err
	}); err != nil {
		return err
	}
	return h.rows(&secret).respondOne(c, req.q, fiber.StatusCreated, sc)
}

// registerOAuthClientRoutes registers /oauth-clients.
func registerOAuthClientRoutes(r routes) {
	h := oauthClientsHandler{db: r.deps.DB, links: r.links, secretKey: []byte(r.deps.Config.OAuth.ClientSecretKey), cat: r.cat}
	r.get("/oauth-clients", models.PermMemberships, h.rows(nil).list(oauthClientSpec(true), r.links, "/oauth-clients", r.deps.DB, models.ListSiteClients))
	r.post("/oauth-clients", models.PermMemberships, h.create)
	r.get("/oauth-clients/:id", models.PermMemberships, h.rows(nil).get(oauthClientSpec(false), h.load))
	// DELETE: the client and every token it holds go at once.
	r.delete("/oauth-clients/:id", models.PermMemberships, deleteRow(h.db, "OAuth client", models.DeleteSiteClient))
	r.cat.add(&resourceType{typ: "oauth-clients", what: "OAuth client",
		fetch: fetchRows(h.db, models.SiteClientsByIDs, renderEach(func(sc *models.SiteClient) *jsonapi.Resource { return h.resource(sc, nil) }))})
}
