package api

import (
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models"
)

// TestEveryRelationshipIsServed: every relationship jsonapi.Relationships
// declares has its related and relationship endpoints, and every type its
// GET /<type>/:id, so the links documents advertise (built from the same
// declaration) answer; the site's are under /site, and a publish plan is
// not kept.
func TestEveryRelationshipIsServed(t *testing.T) {
	app := bareApp(t)
	served := map[string]bool{}
	for _, r := range servedRoutes(app.GetRoutes(true)) {
		if r[0] == fiber.MethodGet {
			served[r[1]] = true
		}
	}
	for typ, rels := range jsonapi.Relationships {
		var want []string
		switch typ {
		case "publish-plans":
			continue
		case "sites":
			want = []string{"/site"}
			for name := range rels {
				want = append(want, "/site/"+name, "/site/relationships/"+name)
			}
		default:
			want = []string{"/" + typ + "/:id"}
			for name := range rels {
				want = append(want, "/"+typ+"/:id/"+name, "/"+typ+"/:id/relationships/"+name)
			}
		}
		for _, path := range want {
			if !served[path] {
				t.Errorf("GET %s is not served", path)
			}
		}
	}
}

// TestCatalogRefusesUnpageableToMany: a declared to-many relationship whose
// type cannot page through it, or a declared type missing from the
// catalog, fails New, naming it.
func TestCatalogRefusesUnpageableToMany(t *testing.T) {
	cat := newCatalog(links{})
	cat.add(&resourceType{typ: "themes", what: "theme"})
	err := cat.routes(routes{app: fiber.New(), authed: func(_ models.Permission, h fiber.Handler) []fiber.Handler { return []fiber.Handler{h} }})
	if err == nil || !strings.Contains(err.Error(), "themes.layouts") || !strings.Contains(err.Error(), "pages (no resourceType)") {
		t.Fatalf("err = %v, want one naming themes.layouts and pages", err)
	}
}
