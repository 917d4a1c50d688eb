package api

import (
	"sync"

	"github.com/gofiber/fiber/v2"

	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/models"
)

// The permission each route needs is declared where the route is
// registered: routes.get, post, patch and delete take it, and authed both
// checks it and records it here, in one place. The OpenAPI description
// reads it (x-permission, permissionOf), and permissions_test.go fails
// for a served route that is neither public nor declared.
//
// The roles' permissions are models/roles.go; docs/auth.md has the table.

// routePermissions is every declared route's permission, by "METHOD path".
// Declarations are the same for every app New builds.
var routePermissions struct {
	sync.RWMutex
	m map[string]models.Permission
}

// declarePermission records that method path needs p.
func declarePermission(method, path string, p models.Permission) {
	routePermissions.Lock()
	defer routePermissions.Unlock()
	if routePermissions.m == nil {
		routePermissions.m = map[string]models.Permission{}
	}
	routePermissions.m[method+" "+path] = p
	if method == fiber.MethodGet {
		routePermissions.m[fiber.MethodHead+" "+path] = p
	}
}

// permissionOf is the permission method path was declared with; ok is
// false for a route declared with none (public, or not registered).
func permissionOf(method, path string) (models.Permission, bool) {
	routePermissions.RLock()
	defer routePermissions.RUnlock()
	p, ok := routePermissions.m[method+" "+path]
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
// webhooks and their deliveries, which only admins see.
func readPermission(typ string) models.Permission {
	switch typ {
	case "webhooks", "webhook-deliveries":
		return models.PermWebhooks
	}
	return models.PermRead
}

// withPermission adds to an OpenAPI operation the permission its route
// needs (x-permission), so clients can hide what the role forbids; a
// public route gets none.
func withPermission(op map[string]any, method, path string) {
	if p, ok := permissionOf(method, path); ok {
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
