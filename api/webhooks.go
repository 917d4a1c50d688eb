package api

import (
	"context"
	"fmt"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/webhooks"
)

// Webhook handlers (docs/webhooks.md): /webhooks, /webhooks/:id/deliveries,
// /webhook-deliveries/:id and its retry.

type webhookAttributes struct {
	URL         string   `json:"url" oas:"uri"`
	Events      []string `json:"events" oas:"enum:webhook-event"`
	Active      bool     `json:"active"`
	Description *string  `json:"description"`
	// Secret is in full only in the answers that made it (create, rotate).
	Secret string `json:"secret"`
	// Why and when Pressroom deactivated the webhook itself (a 410, or too
	// many deliveries queued behind a failing one); null otherwise.
	DeactivatedReason *string `json:"deactivated-reason"`
	DeactivatedAt     *string `json:"deactivated-at" oas:"date-time"`
	timestamps
}

// webhookRequest is what POST and PATCH /webhooks accept.
type webhookRequest struct {
	URL          *string   `json:"url" oas:"uri,required"`
	Events       *[]string `json:"events" oas:"enum:webhook-event,required"`
	Active       *bool     `json:"active"`
	Description  *string   `json:"description" oas:"nullable"`
	RotateSecret *bool     `json:"rotate-secret"`
	Secret       any       `json:"secret"`
	// Read-only, accepted only to be refused with a pointer at them.
	DeactivatedReason any `json:"deactivated-reason"`
	DeactivatedAt     any `json:"deactivated-at"`
	readOnlyTimestamps
}

// webhookReadOnlyRels are the relationships of a webhook the server sets.
var webhookReadOnlyRels = relNames{readOnly: []string{"deliveries"}}

// webhookColumns are the attributes a PATCH /webhooks may change;
// rotate-secret writes the new secret's two columns.
var webhookColumns = []attrColumn[models.Webhook, webhookFields]{
	{"url", "url", func(w *models.Webhook, f webhookFields) { w.URL = f.url }},
	{"events", "events", func(w *models.Webhook, f webhookFields) { w.Events = f.events }},
	{"active", "active", func(w *models.Webhook, f webhookFields) { w.Active = f.active }},
	// Made active again, a webhook no longer says why it was deactivated;
	// kept inactive, it still does.
	{"active", "deactivated_at", func(w *models.Webhook, f webhookFields) {
		if f.active {
			w.DeactivatedAt, w.DeactivatedReason = nil, nil
		}
	}},
	{"active", "deactivated_reason", func(*models.Webhook, webhookFields) {}}, // set with deactivated_at
	{"description", "description", func(w *models.Webhook, f webhookFields) { w.Description = f.description }},
	{"rotate-secret", "secret_sealed", func(w *models.Webhook, f webhookFields) { w.SecretSealed = f.secret.Sealed }},
	{"rotate-secret", "secret_last4", func(w *models.Webhook, f webhookFields) { w.SecretLast4 = f.secret.Last4 }},
}

// webhookFields are the validated attributes of a request.
type webhookFields struct {
	url         string
	events      []string
	active      bool
	description *string
	rotate      bool
	// secret is the new secret (create, rotate-secret), issued by the
	// handler once the request is valid.
	secret models.WebhookSecret
}

// invalidURL is the answer to a url that breaks a rule of webhooks.CheckURL.
func invalidURL(err error) error {
	return invalidAttr("url", "invalid_url", "url "+err.Error()+".")
}

// validate checks the attributes sent; on create url and events are
// required. Only the url's form is checked here: whether its host is
// public needs a DNS lookup (checkHost).
func (r webhookRequest) validate(sent map[string]bool, create bool) (f webhookFields, err error) {
	if err = checkReadOnly(sent, "secret", "deactivated-reason", "deactivated-at"); err != nil {
		return f, err
	}
	if create && sent["rotate-secret"] {
		return f, invalidAttr("rotate-secret", "invalid_rotate_secret", "rotate-secret is for PATCH; a new webhook gets a new secret.")
	}
	if sent["url"] || create {
		if r.URL == nil || *r.URL == "" {
			return f, invalidAttr("url", "invalid_url", "url is required: an http or https URL.")
		}
		if len(*r.URL) > 2048 {
			return f, invalidAttr("url", "invalid_url", "url is longer than 2048 characters.")
		}
		if _, err := webhooks.ParseURL(*r.URL); err != nil {
			return f, invalidURL(err)
		}
		f.url = *r.URL
	}
	if sent["events"] || create {
		if r.Events == nil || len(*r.Events) == 0 {
			return f, invalidAttr("events", "invalid_events", "events must be a non-empty array of event types.")
		}
		seen := map[string]bool{}
		for i, e := range *r.Events {
			if !webhooks.KnownEvent(e) {
				return f, invalidAttr(fmt.Sprintf("events/%d", i), "invalid_events", fmt.Sprintf("%q is not an event type; known: %v.", e, webhooks.Events))
			}
			if !seen[e] {
				seen[e] = true
				f.events = append(f.events, e)
			}
		}
	}
	f.active = true
	if sent["active"] {
		if r.Active == nil {
			return f, invalidAttr("active", "invalid_active", "active must be true or false.")
		}
		f.active = *r.Active
	}
	if f.description, err = descriptionAttr(r.Description); err != nil {
		return f, err
	}
	if sent["rotate-secret"] {
		if r.RotateSecret == nil || !*r.RotateSecret {
			return f, invalidAttr("rotate-secret", "invalid_rotate_secret", "rotate-secret may only be true.")
		}
		f.rotate = true
	}
	return f, nil
}

func webhookSpec(collection bool) QuerySpec {
	s := QuerySpec{Includes: includesOf("webhooks"), Fields: fieldsOf("webhooks")}
	if collection {
		s.Collection = true
		s.Sorts = map[string]string{"created-at": "created_at", "updated-at": "updated_at", "url": "url"}
		s.DefaultSort = models.OrderNewest
		s.Filters = map[string]string{"active": "active", "url": "url"}
	}
	return s
}

func deliverySpec(collection bool) QuerySpec {
	s := QuerySpec{Includes: includesOf("webhook-deliveries"), Fields: fieldsOf("webhook-deliveries")}
	if collection {
		s.Collection = true
		s.Sorts = map[string]string{"created-at": "created_at", "status": "status"}
		s.DefaultSort = models.OrderNewest
		s.Filters = map[string]string{"status": "status", "event": "event"}
	}
	return s
}

type webhooksHandler struct {
	db           *bun.DB
	links        links
	box          *models.SecretBox
	allowPrivate bool
	cat          *catalog
}

func webhookPath(id uuid.UUID) string { return "/webhooks/" + id.String() }

// resource renders w; secret is the full secret when this answer made it.
func (h webhooksHandler) resource(w *models.Webhook, secret string) *jsonapi.Resource {
	if secret == "" {
		secret = webhooks.Mask(w.SecretLast4)
	}
	p := webhookPath(w.ID)
	return versioned(&jsonapi.Resource{Type: "webhooks", ID: w.ID.String(), Links: h.links.self(p),
		Attributes: webhookAttributes{URL: w.URL, Events: w.Events, Active: w.Active, Description: w.Description, Secret: secret,
			DeactivatedReason: w.DeactivatedReason, DeactivatedAt: optionalTimestamp(w.DeactivatedAt),
			timestamps: timestampsOf(w.CreatedAt, w.UpdatedAt)},
		Relationships: map[string]*jsonapi.Relationship{"deliveries": h.links.relationship(p, "deliveries", nil)},
	}, w.Version)
}

// rows writes webhooks; secret is the full secret when this answer made it
// (create, rotate-secret), otherwise each secret is masked.
func (h webhooksHandler) rows(secret string) rowRenderer[models.Webhook] {
	return rowRenderer[models.Webhook]{cat: h.cat, version: func(w *models.Webhook) int { return w.Version },
		render: func(ctx context.Context, siteID uuid.UUID, ws []models.Webhook) ([]*jsonapi.Resource, error) {
			return h.render(ctx, siteID, ws, secret)
		}}
}

// render renders webhooks with the first page of their deliveries' linkage.
func (h webhooksHandler) render(ctx context.Context, siteID uuid.UUID, ws []models.Webhook, secret string) ([]*jsonapi.Resource, error) {
	out := make([]*jsonapi.Resource, len(ws))
	for i := range ws {
		out[i] = h.resource(&ws[i], secret)
	}
	return out, h.cat.fillMany(ctx, siteID, h.cat.types["webhooks"], out, false)
}

// load finds the webhook named by the URL.
func (h webhooksHandler) load(c *fiber.Ctx) (*models.Webhook, error) {
	return loadByID(c, h.db, "webhook", models.FindWebhook)
}

// checkHost refuses a url sent whose host is not public, unless private
// hosts are allowed (the SSRF guard, docs/webhooks.md). It resolves the
// host, so it runs once the attributes are valid.
func (h webhooksHandler) checkHost(ctx context.Context, f webhookFields) error {
	if f.url == "" {
		return nil
	}
	if err := webhooks.CheckURL(ctx, f.url, h.allowPrivate); err != nil {
		return invalidURL(err)
	}
	return nil
}

// create serves POST /webhooks: the answer shows the secret in full, once.
func (h webhooksHandler) create(c *fiber.Ctx) error {
	req, err := readCreate[webhookRequest, webhookFields](c, webhookSpec(false), "webhooks", webhookReadOnlyRels)
	if err != nil {
		return err
	}
	f := req.fields
	if err := h.checkHost(c.UserContext(), f); err != nil {
		return err
	}
	w := &models.Webhook{SiteRecord: models.NewSiteRecord(siteOf(c)), URL: f.url, Events: f.events, Active: f.active, Description: f.description,
		Version: 1}
	if f.secret, err = h.box.Issue(w.ID); err != nil {
		return err
	}
	w.SecretSealed, w.SecretLast4 = f.secret.Sealed, f.secret.Last4
	err = runTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
		auditItem(ctx, w.ID)
		return models.CreateWebhook(ctx, tx, w)
	})
	if err != nil {
		return err
	}
	return h.rows(f.secret.Plain).respondOne(c, req.q, fiber.StatusCreated, w)
}

// update serves PATCH /webhooks/:id; with rotate-secret: true the secret
// is replaced and the answer shows the new one, once.
func (h webhooksHandler) update(c *fiber.Ctx) error {
	req, err := readPatch[webhookRequest, webhookFields](c, webhookSpec(false), "webhook", "webhooks", webhookReadOnlyRels)
	if err != nil {
		return err
	}
	if err := h.checkHost(c.UserContext(), req.fields); err != nil {
		return err
	}
	if req.fields.rotate {
		if req.fields.secret, err = h.box.Issue(req.id); err != nil {
			return err
		}
	}
	return patchRow(c, h.db, patchOf(c, req, h.rows(req.fields.secret.Plain), models.FindWebhook, webhookColumns))
}

type deliveryAttributes struct {
	Event          string  `json:"event" oas:"enum:webhook-event"`
	Status         string  `json:"status" oas:"enum:delivery-status"`
	Attempts       int     `json:"attempts"`
	LastStatusCode *int    `json:"last-status-code"`
	LastError      *string `json:"last-error"`
	LastResponse   *string `json:"last-response"`
	NextAttemptAt  *string `json:"next-attempt-at" oas:"date-time"`
	CreatedAt      string  `json:"created-at" oas:"date-time"`
	DeliveredAt    *string `json:"delivered-at" oas:"date-time"`
}

func (h webhooksHandler) deliveryResource(d *models.WebhookDelivery) *jsonapi.Resource {
	p := "/webhook-deliveries/" + d.ID.String()
	hook := d.WebhookID.String()
	rel := h.links.relationship(p, "webhook", jsonapi.ToOne("webhooks", &hook))
	return &jsonapi.Resource{Type: "webhook-deliveries", ID: d.ID.String(), Links: h.links.self(p),
		Attributes: deliveryAttributes{Event: d.Event, Status: d.Status, Attempts: d.Attempts, LastStatusCode: d.LastStatusCode,
			LastError: d.LastError, LastResponse: d.LastResponse, NextAttemptAt: optionalTimestamp(d.NextAttemptAt),
			CreatedAt: timestamp(d.CreatedAt), DeliveredAt: optionalTimestamp(d.DeliveredAt)},
		Relationships: map[string]*jsonapi.Relationship{"webhook": rel},
	}
}

// deliveryRows writes deliveries (they have no version: no ETag).
func (h webhooksHandler) deliveryRows() rowRenderer[models.WebhookDelivery] {
	return rowRenderer[models.WebhookDelivery]{render: renderEach(h.deliveryResource), cat: h.cat}
}

// deliveries serves GET /webhooks/:id/deliveries.
func (h webhooksHandler) deliveries(c *fiber.Ctx) error {
	siteID := siteOf(c)
	// respondPage reads the query first; a bad id is answered after it, as
	// list's error, so a bad query and a bad id answer as they always did.
	id, idErr := idParam(c, "webhook")
	return h.deliveryRows().respondPage(c, deliverySpec(true), h.links, webhookPath(id)+"/deliveries", siteID,
		func(ctx context.Context, page models.Page) ([]models.WebhookDelivery, int64, error) {
			if idErr != nil {
				return nil, 0, idErr
			}
			return models.ListDeliveries(ctx, h.db, siteID, id, page)
		})
}

// loadDelivery finds the delivery named by the URL.
func (h webhooksHandler) loadDelivery(c *fiber.Ctx) (*models.WebhookDelivery, error) {
	return loadByID(c, h.db, "webhook delivery", models.FindDelivery)
}

// retry serves POST /webhook-deliveries/:id/retry: a failed delivery is
// made pending again and the worker starts it at once (docs/webhooks.md);
// 202 with the delivery.
func (h webhooksHandler) retry(c *fiber.Ctx) error {
	q, err := parseQuery(c, deliverySpec(false))
	if err != nil {
		return err
	}
	id, err := idParam(c, "webhook delivery")
	if err != nil {
		return err
	}
	var d *models.WebhookDelivery
	if err := runTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
		d, err = models.RetryDelivery(ctx, tx, siteOf(c), id)
		return err
	}); err != nil {
		return err
	}
	return h.deliveryRows().respondOne(c, q, fiber.StatusAccepted, d)
}

// registerWebhookRoutes registers /webhooks and /webhook-deliveries.
func registerWebhookRoutes(r routes) error {
	box, err := models.NewSecretBox(r.deps.Config.Webhooks.SecretKey)
	if err != nil {
		return fmt.Errorf("webhooks: %w", err)
	}
	h := webhooksHandler{db: r.deps.DB, links: r.links, box: box, allowPrivate: r.deps.Config.Webhooks.AllowPrivate, cat: r.cat}
	editable(r, "/webhooks", models.PermWebhooks, models.PermWebhooks, h.rows(""), webhookSpec, models.ListWebhooks, h.load, h.create, h.update)
	// DELETE: the webhook and its deliveries go.
	r.delete("/webhooks/:id", models.PermWebhooks, deleteRow(h.db, "webhook", models.DeleteWebhook))
	r.get("/webhook-deliveries/:id", models.PermWebhooks, h.deliveryRows().get(deliverySpec(false), h.loadDelivery))
	r.post("/webhook-deliveries/:id/retry", models.PermWebhooks, h.retry)
	// The relationships' endpoints (catalog.routes); GET
	// /webhooks/:id/deliveries sorts and filters as a list does.
	r.cat.add(&resourceType{typ: "webhooks", what: "webhook",
		fetch: func(ctx context.Context, siteID uuid.UUID, ids []uuid.UUID, _ bool) ([]*jsonapi.Resource, error) {
			ws, err := models.ByIDs[models.Webhook](ctx, h.db, siteID, ids)
			if err != nil {
				return nil, err
			}
			return h.render(ctx, siteID, ws, "")
		},
		many:    map[string]manyFunc{"deliveries": childMany(h.db, "webhook_deliveries", "webhook_id", models.OrderNewest)},
		related: map[string]fiber.Handler{"deliveries": h.deliveries}})
	r.cat.add(&resourceType{typ: "webhook-deliveries", what: "webhook delivery", fetch: byIDs(h.db, h.deliveryResource)})
	return nil
}
