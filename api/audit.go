package api

import (
	"context"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/models"
)

// The audit trail (docs/audit.md). Every write route is wrapped, where it
// is registered (routes.add), by audited: it starts the request's
// models.Audit (action, actor, site, request id, client address, the id
// in the URL) and carries it in the request's context. The one decode path
// adds the names of the attributes and relationships the document sends
// (decodeResource); a create names its new record (auditItem); the one
// transaction helper records it last in the change's transaction (runTx).
// A route cannot forget it: it is attached by registration, and a write
// that answers 2xx without having recorded it is logged as an error.
// Reads are never wrapped: GET pays nothing.

// unaudited are the write routes that change nothing, so record nothing.
var unaudited = map[string]string{
	fiber.MethodPost + " /publish-plans": "a dry run in a read-only transaction",
}

// auditAction is the action and item type a write route records: the
// path's first segment is the type (site: sites), the method the verb
// (POST create, PATCH update, DELETE delete), and a last segment after
// :id (retry) a verb of its own.
func auditAction(method, path string) (action, itemType string) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	itemType = segs[0]
	if itemType == "site" {
		itemType = "sites"
	}
	verb := map[string]string{fiber.MethodPost: "create", fiber.MethodPatch: "update", fiber.MethodDelete: "delete"}[method]
	if len(segs) == 3 && segs[1] == ":id" {
		verb = segs[2]
	}
	// A relationship's endpoint changes its record: releases.update (the
	// relationship named in changed, by audited).
	if len(segs) == 4 && segs[1] == ":id" && segs[2] == "relationships" {
		verb = "update"
	}
	return itemType + "." + verb, itemType
}

// audited wraps h, a write route's handler, with the request's audit.
func audited(method, path string, h fiber.Handler, log func(c *fiber.Ctx, action string)) fiber.Handler {
	if _, skip := unaudited[method+" "+path]; skip {
		return h
	}
	action, itemType := auditAction(method, path)
	// PATCH /site/relationships/theme changes the site's theme.
	changed := []string(nil)
	if strings.HasPrefix(path, "/site/relationships/") {
		changed = []string{strings.TrimPrefix(path, "/site/relationships/")}
	} else if _, rel, ok := strings.Cut(path, "/:id/relationships/"); ok {
		changed = []string{rel} // POST, DELETE /releases/:id/relationships/drafts
	}
	return func(c *fiber.Ctx) error {
		a := newAudit(c, action, itemType)
		a.AddChanged(changed...)
		if id := c.Params("id"); id != "" {
			a.SetItem(id)
		} else if itemType == "sites" { // /site: the caller's
			a.SetItem(siteOf(c).String())
		}
		c.SetUserContext(models.WithAudit(c.UserContext(), a))
		err := h(c)
		if err == nil && c.Response().StatusCode() < 300 && !a.Recorded() && log != nil {
			log(c, action)
		}
		return err
	}
}

// newAudit starts the audit of c's request: the principal is the actor (a
// person, or an integration client when the token names no person).
func newAudit(c *fiber.Ctx, action, itemType string) *models.Audit {
	pr := oauth.PrincipalOf(c)
	site := pr.SiteID
	var user *uuid.UUID
	client := ""
	if pr.UserID != uuid.Nil {
		u := pr.UserID
		user = &u
	} else {
		client = pr.ClientID
	}
	return models.NewAudit(action, itemType, &site, user, client, requestID(c), c.IP())
}

// auditSent adds the member names a decoded document sends to the
// request's audit, if any: names, never values.
func auditSent(c *fiber.Ctx, sent map[string]bool, rels []string) {
	a := models.AuditOf(c.UserContext())
	if a == nil {
		return
	}
	names := make([]string, 0, len(sent)+len(rels))
	for n, ok := range sent {
		if ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	a.AddChanged(names...)
	a.AddChanged(rels...)
}

// auditItem names the record a create made, for the audit of ctx's
// request.
func auditItem(ctx context.Context, id uuid.UUID) {
	if a := models.AuditOf(ctx); a != nil {
		a.SetItem(id.String())
	}
}
