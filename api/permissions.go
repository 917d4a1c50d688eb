package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/models"
)

// The permission each route needs is declared where the route is
// registered: routes.get, post, patch and delete take it, and authed both
// checks it and records it here, in one place. The OpenAPI description
// reads it (x-permission, permissionTable), and permissions_test.go fails
// for a served route that is neither public nor declared.
//
// The roles' permissions are models/roles.go; docs/auth.md has the table.

// permissionTable is every declared route's permission, by "METHOD path":
// one per app (New), filled as routes are registered, read by the
// OpenAPI description.
type permissionTable map[string]models.Permission

// declare records that method path needs p (a GET's HEAD twin too). A nil
// table (a test's routes) records nothing.
func (t permissionTable) declare(method, path string, p models.Permission) {
	if t == nil {
		return
	}
	t[method+" "+path] = p
	if method == fiber.MethodGet {
		t[fiber.MethodHead+" "+path] = p
	}
}

// of is the permission method path was declared with; ok is false for a
// route declared with none (public, or not registered).
func (t permissionTable) of(method, path string) (models.Permission, bool) {
	p, ok := t[method+" "+path]
	return p, ok
}

// require answers 403 forbidden, naming p, to a caller whose role lacks
// it. It runs after the token check and before the body is read.
func require(p models.Permission) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if !oauth.PrincipalOf(c).Can(p) {
			return models.Forbidden(p)
		}
		return c.Next()
	}
}

// readPermission is what reading a type's records needs: read, but for
// webhooks and their deliveries, and memberships, which only admins see.
func readPermission(typ string) models.Permission {
	switch typ {
	case "webhooks", "webhook-deliveries":
		return models.PermWebhooks
	case "audit-events", "memberships":
		return models.PermMemberships
	}
	return models.PermRead
}

// withPermission adds to an OpenAPI operation the permission its route
// needs (x-permission), so clients can hide what the role forbids; a
// public route gets none.
func withPermission(op map[string]any, perms permissionTable, method, path string) {
	if p, ok := perms.of(method, path); ok {
		op["x-permission"] = string(p)
	}
}

// sectionOf is the section the principal's page rights are narrowed to
// (nil: the whole site; an admin's prefix narrows nothing).
func sectionOf(pr *oauth.Principal) *string {
	if !pr.Sectioned() {
		return nil
	}
	return pr.PathPrefix
}
