package api

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models"
)

// GET /audit-events: the site's audit trail (docs/audit.md), admins only,
// newest first, paged by cursor (page[after]) since it grows without bound:
// no total, no last page.

type auditEventAttributes struct {
	Action        string   `json:"action"`
	ItemType      string   `json:"item-type"`
	ItemID        *string  `json:"item-id"`
	Changed       []string `json:"changed"`
	RequestID     string   `json:"request-id"`
	ClientAddress string   `json:"client-address"`
	CreatedAt     string   `json:"created-at" oas:"date-time"`
}

// auditFilters are the query parameters GET /audit-events takes beyond
// fields: its filters and its cursor page.
var auditFilters = []string{"filter[user]", "filter[oauth-client]", "filter[item]", "filter[action]", "filter[created-at][gte]", "filter[created-at][lt]",
	"page[after]", "page[size]"}

func auditEventSpec() QuerySpec {
	return QuerySpec{Fields: fieldsOf("audit-events"), Extra: auditFilters}
}

type auditEventsHandler struct {
	db    *bun.DB
	links links
}

func (h auditEventsHandler) resource(e *models.AuditEvent) *jsonapi.Resource {
	p := "/audit-events/" + e.ID.String()
	var user *string
	if e.UserID != nil {
		u := e.UserID.String()
		user = &u
	}
	changed := e.Changed
	if changed == nil {
		changed = []string{}
	}
	return &jsonapi.Resource{Type: "audit-events", ID: e.ID.String(), Links: h.links.self(p),
		Attributes: auditEventAttributes{Action: e.Action, ItemType: e.ItemType, ItemID: e.ItemID, Changed: changed,
			RequestID: e.RequestID, ClientAddress: e.ClientAddress, CreatedAt: timestamp(e.CreatedAt)},
		Relationships: map[string]*jsonapi.Relationship{"user": h.links.relationship(p, "user", jsonapi.ToOne("users", user)),
			"oauth-client": h.clientRelationship(p, e)},
	}
}

// clientRelationship is an event's oauth-client: the integration client
// that acted (null for a person), with its client-id in meta, which names
// it even once the client is deleted (the linkage is then null).
func (h auditEventsHandler) clientRelationship(p string, e *models.AuditEvent) *jsonapi.Relationship {
	var id *string
	if e.SiteClientID != nil {
		s := e.SiteClientID.String()
		id = &s
	}
	rel := h.links.relationship(p, "oauth-client", jsonapi.ToOne("oauth-clients", id))
	if e.OAuthClientID != nil {
		rel.Meta = map[string]any{"client-id": *e.OAuthClientID}
	}
	return rel
}

// list serves GET /audit-events.
func (h auditEventsHandler) list(c *fiber.Ctx) error {
	q, err := parseQuery(c, auditEventSpec())
	if err != nil {
		return err
	}
	f, err := auditFilterOf(q.Values)
	if err != nil {
		return err
	}
	events, more, err := models.ListAuditEvents(c.UserContext(), h.db, siteOf(c), f)
	if errors.Is(err, models.ErrBadCursor) {
		return jsonapi.BadRequest("invalid_page", "page[after] must be a links.next cursor of this list.").AtParameter("page[after]")
	}
	if err != nil {
		return err
	}
	rs := make([]*jsonapi.Resource, len(events))
	for i := range events {
		rs[i] = q.Sparse(h.resource(&events[i]))
	}
	links := &jsonapi.Links{Self: h.pageLink(q.Values, "")}
	links.First = h.pageLink(q.Values, "-")
	if more {
		links.Next = h.pageLink(q.Values, models.AuditCursor(events[len(events)-1]))
	}
	return respond(c, fiber.StatusOK, jsonapi.Document{Data: rs, Links: links})
}

// pageLink is the list's link with page[after] set to after ("": as
// asked; "-": none, the first page).
func (h auditEventsHandler) pageLink(values url.Values, after string) string {
	return cursorLink(h.links, "/audit-events", values, "page[after]", after)
}

// auditFilterOf reads GET /audit-events' filters and page.
func auditFilterOf(v url.Values) (models.AuditFilter, error) {
	f := models.AuditFilter{Limit: defaultPageSize, Action: v.Get("filter[action]"), After: v.Get("page[after]")}
	if s := v.Get("page[size]"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxPageSize {
			return f, jsonapi.BadRequest("invalid_page", fmt.Sprintf("page[size] must be a whole number from 1 to %d.", maxPageSize)).AtParameter("page[size]")
		}
		f.Limit = n
	}
	if s := v.Get("filter[user]"); s != "" {
		id, err := uuid.Parse(s)
		if err != nil {
			return f, jsonapi.BadRequest("invalid_filter", "filter[user] must be a user id.").AtParameter("filter[user]")
		}
		f.UserID = &id
	}
	if s := v.Get("filter[oauth-client]"); s != "" {
		if len(s) > 200 {
			return f, jsonapi.BadRequest("invalid_filter", "filter[oauth-client] must be an OAuth client's id or client-id.").AtParameter("filter[oauth-client]")
		}
		if id, err := uuid.Parse(s); err == nil {
			f.SiteClientID = &id
		} else {
			f.OAuthClientID = s
		}
	}
	if s := v.Get("filter[item]"); s != "" {
		typ, id, ok := strings.Cut(s, ":")
		if !ok || typ == "" || id == "" {
			return f, jsonapi.BadRequest("invalid_filter", "filter[item] must be type:id, such as pages:0b7c….").AtParameter("filter[item]")
		}
		f.ItemType, f.ItemID = typ, id
	}
	var err error
	if f.From, err = auditTime(v, "filter[created-at][gte]"); err != nil {
		return f, err
	}
	f.Before, err = auditTime(v, "filter[created-at][lt]")
	return f, err
}

func auditTime(v url.Values, name string) (*time.Time, error) {
	s := v.Get(name)
	if s == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil, jsonapi.BadRequest("invalid_filter", name+" must be a time in RFC 3339 (2026-11-28T07:00:00Z).").AtParameter(name)
	}
	return &t, nil
}

// load finds the audit event the URL names.
func (h auditEventsHandler) load(c *fiber.Ctx) (*models.AuditEvent, error) {
	return loadByID(c, h.db, "audit event", models.FindAuditEvent)
}

// registerAuditRoutes registers GET /audit-events and /audit-events/:id
// (the events' own links), for admins (models.PermMemberships).
func registerAuditRoutes(r routes) {
	h := auditEventsHandler{db: r.deps.DB, links: r.links}
	rows := rowRenderer[models.AuditEvent]{render: renderEach(h.resource), cat: r.cat}
	r.get("/audit-events", models.PermMemberships, h.list)
	r.get("/audit-events/:id", models.PermMemberships, rows.get(QuerySpec{Fields: fieldsOf("audit-events")}, h.load))
	r.cat.add(&resourceType{typ: "audit-events", what: "audit event",
		fetch: fetchRows(h.db, models.AuditEventsByIDs, renderEach(h.resource))})
}
