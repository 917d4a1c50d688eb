package api

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/pressroom/pressroom/models"
)

// TestEveryRouteDeclaresAPermission walks every route New registers: each
// is public (specialRoutes says so) or was registered with a permission,
// and the OpenAPI description names it (x-permission). Fails for a route
// registered without routes.get/post/patch/delete.
func TestEveryRouteDeclaresAPermission(t *testing.T) {
	app := bareApp(t)
	resp, err := app.Test(httptest.NewRequest("GET", "/openapi.json", nil))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Permission string `json:"x-permission"`
		}
	}
	if err := json.Unmarshal(spec, &doc); err != nil {
		t.Fatal(err)
	}
	registered := map[string]bool{}
	for _, r := range app.GetRoutes(true) {
		registered[r.Method+" "+r.Path] = true
	}
	n := 0
	for _, r := range servedRoutes(app.GetRoutes(true)) {
		method, path := r[0], r[1]
		declared := doc.Paths["/"+strings.TrimPrefix(strings.ReplaceAll(strings.ReplaceAll(path, ":id", "{id}"), ":other", "{other}"), "/")][strings.ToLower(method)].Permission
		if specialRoutes[method+" "+path].public {
			if declared != "" {
				t.Errorf("%s %s is public but declares a permission", method, path)
			}
			continue
		}
		if declared == "" {
			t.Errorf("%s %s is served behind no declared permission: register it with routes.get/post/patch/delete", method, path)
			continue
		}
		p := models.Permission(declared)
		if len(models.PermissionsOf(models.RoleAdmin)) == 0 || !models.RoleAdmin.Can(p) {
			t.Errorf("%s %s needs %q, which no role holds", method, path, p)
		}
		if method == "GET" && !registered["HEAD "+path] {
			t.Errorf("GET %s is registered without its HEAD twin", path)
		}
		if !slices.Contains(models.Permissions, p) {
			t.Errorf("%s %s: x-permission %q is no permission", method, path, p)
		}
		n++
	}
	if n < 50 {
		t.Errorf("only %d routes with a permission; the walk missed the route table", n)
	}
}

// TestRolesNest: each role holds its own permissions and every weaker
// role's, and the table matches the (docs/auth.md, "Roles").
func TestRolesNest(t *testing.T) {
	want := map[models.Role][]models.Permission{
		models.RoleViewer: {models.PermRead},
		models.RoleAuthor: {models.PermRead, models.PermEdit, models.PermUpload},
		models.RoleEditor: {models.PermRead, models.PermEdit, models.PermUpload, models.PermRevertAny, models.PermPublish, models.PermDesign},
		models.RoleAdmin:  models.Permissions,
	}
	for role, perms := range want {
		for _, p := range models.Permissions {
			holds := false
			for _, q := range perms {
				holds = holds || q == p
			}
			if role.Can(p) != holds {
				t.Errorf("%s.Can(%s) = %v, want %v", role, p, role.Can(p), holds)
			}
		}
	}
	if models.Role("owner").Can(models.PermRead) {
		t.Error("an unknown role reads")
	}
}
