package api

import (
	"context"
	"fmt"
	"time"

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
	URL         string   `json:"url"`
	Events      []string `json:"events"`
	Active      bool     `json:"active"`
	Description *string  `json:"description"`
	// Secret is in full only in the answers that made it (create, rotate).
	Secret    string `json:"secret"`
	CreatedAt string `json:"created-at"`
	UpdatedAt string `json:"updated-at"`
}

// webhookRequest is what POST and PATCH /webhooks accept.
type webhookRequest struct {
	URL          *string   `json:"url"`
	Events       *[]string `json:"events"`
	Active       *bool     `json:"active"`
	Description  *string   `json:"description"`
	RotateSecret *bool     `json:"rotate-secret"`
	Secret       any       `json:"secret"`
	CreatedAt    any       `json:"created-at"`
	UpdatedAt    any       `json:"updated-at"`
}

var webhookReadOnly = []string{"secret", "created-at", "updated-at"}

// webhookColumns are the columns of the attributes a PATCH may change
// (attribute and column names are the same).
var webhookColumns = []string{"url", "events", "active", "description"}

// maxWebhooksPerSite bounds a site's webhooks: each event fans out to all.
const maxWebhooksPerSite = 20

// webhookFields are the validated attributes of a request.
type webhookFields struct {
	url         string
	events      []string
	active      bool
	description *string
	rotate      bool
}

// validate checks the attributes sent; on create url and events are required.
func (h webhooksHandler) validate(ctx context.Context, r webhookRequest, sent map[string]bool, create bool) (f webhookFields, err error) {
	if err = checkReadOnly(sent, webhookReadOnly); err != nil {
		return f, err
	}
	if create && sent["rotate-secret"] {
		return f, models.Invalid("/data/attributes/rotate-secret", "invalid_rotate_secret", "rotate-secret is for PATCH; a new webhook gets a new secret.")
	}
	if sent["url"] || create {
		if r.URL == nil || *r.URL == "" {
			return f, models.Invalid("/data/attributes/url", "invalid_url", "url is required: an http or https URL.")
		}
		if len(*r.URL) > 2048 {
			return f, models.Invalid("/data/attributes/url", "invalid_url", "url is longer than 2048 characters.")
		}
		if err := webhooks.CheckURL(ctx, *r.URL, h.allowPrivate); err != nil {
			return f, models.Invalid("/data/attributes/url", "invalid_url", "url "+err.Error()+".")
		}
		f.url = *r.URL
	}
	if sent["events"] || create {
		if r.Events == nil || len(*r.Events) == 0 {
			return f, models.Invalid("/data/attributes/events", "invalid_events", "events must be a non-empty array of event types.")
		}
		seen := map[string]bool{}
		for i, e := range *r.Events {
			if !webhooks.KnownEvent(e) {
				return f, models.Invalid(fmt.Sprintf("/data/attributes/events/%d", i), "invalid_events", fmt.Sprintf("%q is not an event type; known: %v.", e, webhooks.Events))
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
			return f, models.Invalid("/data/attributes/active", "invalid_active", "active must be true or false.")
		}
		f.active = *r.Active
	}
	if f.description, err = descriptionAttr(r.Description); err != nil {
		return f, err
	}
	if sent["rotate-secret"] {
		if r.RotateSecret == nil || !*r.RotateSecret {
			return f, models.Invalid("/data/attributes/rotate-secret", "invalid_rotate_secret", "rotate-secret may only be true.")
		}
		f.rotate = true
	}
	return f, nil
}

func webhookSpec(collection bool) QuerySpec {
	s := QuerySpec{Fields: []string{"webhooks"}}
	if collection {
		s.Collection = true
		s.Sorts = map[string]string{"created-at": "created_at", "updated-at": "updated_at", "url": "url"}
		s.DefaultSort = "created_at DESC, id"
		s.Filters = map[string]string{"active": "active", "url": "url"}
	}
	return s
}

func deliverySpec(collection bool) QuerySpec {
	s := QuerySpec{Fields: []string{"webhook-deliveries"}}
	if collection {
		s.Collection = true
		s.Sorts = map[string]string{"created-at": "created_at", "status": "status"}
		s.DefaultSort = "created_at DESC, id"
		s.Filters = map[string]string{"status": "status", "event": "event"}
	}
	return s
}

type webhooksHandler struct {
	db           *bun.DB
	links        links
	box          *models.SecretBox
	allowPrivate bool
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
			CreatedAt: timestamp(w.CreatedAt), UpdatedAt: timestamp(w.UpdatedAt)},
		Relationships: map[string]*jsonapi.Relationship{"deliveries": h.links.relationship(p, "deliveries", nil)},
	}, w.Version)
}

func (h webhooksHandler) respondOne(c *fiber.Ctx, q *Query, status int, w *models.Webhook, secret string) error {
	r := h.resource(w, secret)
	return newCompound(q, r).respondOne(c, status, r, w.Version)
}

// list serves GET /webhooks.
func (h webhooksHandler) list(c *fiber.Ctx) error {
	q, err := parseQuery(c, webhookSpec(true))
	if err != nil {
		return err
	}
	ws, total, err := models.ListWebhooks(c.UserContext(), h.db, siteOf(c), q.Apply)
	if err != nil {
		return err
	}
	rs := make([]*jsonapi.Resource, len(ws))
	for i := range ws {
		rs[i] = h.resource(&ws[i], "")
	}
	return newCompound(q).respondPage(c, h.links, "/webhooks", rs, total)
}

func (h webhooksHandler) load(c *fiber.Ctx) (*models.Webhook, error) {
	id, err := idParam(c, "webhook")
	if err != nil {
		return nil, err
	}
	return models.FindWebhook(c.UserContext(), h.db, siteOf(c), id)
}

// get serves GET /webhooks/:id.
func (h webhooksHandler) get(c *fiber.Ctx) error {
	return serveOne(c, webhookSpec(false), h.load, func(q *Query, w *models.Webhook) error {
		return h.respondOne(c, q, fiber.StatusOK, w, "")
	})
}

// create serves POST /webhooks: the answer shows the secret in full, once.
func (h webhooksHandler) create(c *fiber.Ctx) error {
	q, err := parseQuery(c, webhookSpec(false))
	if err != nil {
		return err
	}
	data, err := decodeCreate[webhookRequest](c, "webhooks")
	if err != nil {
		return err
	}
	f, err := h.validate(c.UserContext(), data.Attributes, data.Sent, true)
	if err != nil {
		return err
	}
	if err := checkRelationshipNames(data.Relationships, nil, []string{"deliveries"}); err != nil {
		return err
	}
	secret, err := webhooks.NewSecret()
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	w := &models.Webhook{ID: uuid.New(), SiteID: siteOf(c), URL: f.url, Events: f.events, Active: f.active, Description: f.description,
		SecretLast4: webhooks.Last4(secret), Version: 1, CreatedAt: now, UpdatedAt: now}
	if w.SecretSealed, err = h.box.Seal(w.ID, secret); err != nil {
		return err
	}
	err = runTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
		return models.CreateWebhook(ctx, tx, w, maxWebhooksPerSite)
	})
	if err != nil {
		return err
	}
	return h.respondOne(c, q, fiber.StatusCreated, w, secret)
}

// update serves PATCH /webhooks/:id; with rotate-secret: true the secret
// is replaced and the answer shows the new one, once.
func (h webhooksHandler) update(c *fiber.Ctx) error {
	q, err := parseQuery(c, webhookSpec(false))
	if err != nil {
		return err
	}
	req, err := decodePatch[webhookRequest](c, "webhook", "webhooks")
	if err != nil {
		return err
	}
	sent := req.data.Sent
	f, err := h.validate(c.UserContext(), req.data.Attributes, sent, false)
	if err != nil {
		return err
	}
	if err := checkRelationshipNames(req.data.Relationships, nil, []string{"deliveries"}); err != nil {
		return err
	}
	var cols []string
	for _, col := range webhookColumns {
		if sent[col] {
			cols = append(cols, col)
		}
	}
	var secret string
	var sealed []byte
	if f.rotate {
		if secret, err = webhooks.NewSecret(); err != nil {
			return err
		}
		if sealed, err = h.box.Seal(req.id, secret); err != nil {
			return err
		}
		cols = append(cols, "secret_sealed", "secret_last4")
	}
	return patchRow(c, h.db, rowPatch[models.Webhook]{
		id: req.id, bodyVersion: req.bodyVersion, cols: cols,
		find:    models.FindWebhook,
		version: func(w *models.Webhook) int { return w.Version },
		apply: func(w *models.Webhook) {
			if sent["url"] {
				w.URL = f.url
			}
			if sent["events"] {
				w.Events = f.events
			}
			if sent["active"] {
				w.Active = f.active
			}
			if sent["description"] {
				w.Description = f.description
			}
			if f.rotate {
				w.SecretSealed, w.SecretLast4 = sealed, webhooks.Last4(secret)
			}
			w.UpdatedAt = time.Now().UTC()
		},
		respond: func(w *models.Webhook) error { return h.respondOne(c, q, fiber.StatusOK, w, secret) },
	})
}

// delete serves DELETE /webhooks/:id: the webhook and its deliveries go.
func (h webhooksHandler) delete(c *fiber.Ctx) error {
	id, err := idParam(c, "webhook")
	if err != nil {
		return err
	}
	if err := runTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
		return models.DeleteWebhook(ctx, tx, siteOf(c), id)
	}); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

type deliveryAttributes struct {
	Event          string  `json:"event"`
	Status         string  `json:"status"`
	Attempts       int     `json:"attempts"`
	LastStatusCode *int    `json:"last-status-code"`
	LastError      *string `json:"last-error"`
	LastResponse   *string `json:"last-response"`
	NextAttemptAt  *string `json:"next-attempt-at"`
	CreatedAt      string  `json:"created-at"`
	DeliveredAt    *string `json:"delivered-at"`
}

func optionalTimestamp(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := timestamp(*t)
	return &s
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

// deliveries serves GET /webhooks/:id/deliveries.
func (h webhooksHandler) deliveries(c *fiber.Ctx) error {
	q, err := parseQuery(c, deliverySpec(true))
	if err != nil {
		return err
	}
	id, err := idParam(c, "webhook")
	if err != nil {
		return err
	}
	ds, total, err := models.ListDeliveries(c.UserContext(), h.db, siteOf(c), id, q.Apply)
	if err != nil {
		return err
	}
	rs := make([]*jsonapi.Resource, len(ds))
	for i := range ds {
		rs[i] = h.deliveryResource(&ds[i])
	}
	return newCompound(q).respondPage(c, h.links, webhookPath(id)+"/deliveries", rs, total)
}

func (h webhooksHandler) loadDelivery(c *fiber.Ctx) (*models.WebhookDelivery, error) {
	id, err := idParam(c, "webhook delivery")
	if err != nil {
		return nil, err
	}
	return models.FindDelivery(c.UserContext(), h.db, siteOf(c), id)
}

// delivery serves GET /webhook-deliveries/:id.
func (h webhooksHandler) delivery(c *fiber.Ctx) error {
	return serveOne(c, deliverySpec(false), h.loadDelivery, func(q *Query, d *models.WebhookDelivery) error {
		r := h.deliveryResource(d)
		return newCompound(q, r).respond(c, fiber.StatusOK, q.Sparse(r), nil, nil)
	})
}

// deliveryWebhook serves GET /webhook-deliveries/:id/webhook.
func (h webhooksHandler) deliveryWebhook(c *fiber.Ctx) error {
	return serveOne(c, webhookSpec(false), h.loadDelivery, func(q *Query, d *models.WebhookDelivery) error {
		w, err := models.FindWebhook(c.UserContext(), h.db, siteOf(c), d.WebhookID)
		if err != nil {
			return err
		}
		return h.respondOne(c, q, fiber.StatusOK, w, "")
	})
}

// deliveryRelationship serves GET /webhook-deliveries/:id/relationships/webhook.
func (h webhooksHandler) deliveryRelationship(c *fiber.Ctx) error {
	if _, err := queryParams(c); err != nil {
		return err
	}
	d, err := h.loadDelivery(c)
	if err != nil {
		return err
	}
	rel := h.deliveryResource(d).Relationships["webhook"]
	return respondRaw(c, fiber.StatusOK, map[string]any{"links": rel.Links, "data": rel.Data, "jsonapi": jsonapi.V11})
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
	r := h.deliveryResource(d)
	return newCompound(q, r).respond(c, fiber.StatusAccepted, q.Sparse(r), nil, nil)
}

// registerWebhookRoutes registers /webhooks and /webhook-deliveries.
func registerWebhookRoutes(r routes) error {
	box, err := models.NewSecretBox(r.deps.Config.Webhooks.SecretKey)
	if err != nil {
		return fmt.Errorf("webhooks: %w", err)
	}
	h := webhooksHandler{db: r.deps.DB, links: r.links, box: box, allowPrivate: r.deps.Config.Webhooks.AllowPrivate}
	r.get("/webhooks", h.list)
	r.post("/webhooks", h.create)
	r.get("/webhooks/:id", h.get)
	r.patch("/webhooks/:id", h.update)
	r.delete("/webhooks/:id", h.delete)
	r.get("/webhooks/:id/deliveries", h.deliveries)
	r.get("/webhook-deliveries/:id", h.delivery)
	r.get("/webhook-deliveries/:id/webhook", h.deliveryWebhook)
	r.get("/webhook-deliveries/:id/relationships/webhook", h.deliveryRelationship)
	r.post("/webhook-deliveries/:id/retry", h.retry)
	return nil
}
