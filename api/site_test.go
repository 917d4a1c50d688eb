package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/pressroom/pressroom/auth"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/testsupport"
)

// editorApp is the app on a real database with one site and editor, and a
// bearer token for that editor obtained through the password grant.
func editorApp(t *testing.T) (*fiber.App, string, *models.Site) {
	t.Helper()
	d := liveDeps(t)
	ctx := context.Background()
	site, err := models.CreateSite(ctx, d.DB, "Demo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	hash, _ := auth.HashPassword("pressroom-dev")
	if _, err := models.CreateUser(ctx, d.DB, site.ID, "editor@demo.test", "Ed", hash); err != nil {
		t.Fatal(err)
	}
	app := mustApp(t, d)
	r := do(t, app, http.MethodPost, "/oauth/token", url.Values{"grant_type": {"password"}, "username": {"editor@demo.test"}, "password": {"pressroom-dev"}}.Encode(),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(r.body, &tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("password grant = %d %s", r.status, r.body)
	}
	return app, tok.AccessToken, site
}

func bearer(token string, more ...string) map[string]string {
	h := map[string]string{"Authorization": "Bearer " + token, "Accept": mt}
	for i := 0; i+1 < len(more); i += 2 {
		h[more[i]] = more[i+1]
	}
	return h
}

type siteDoc struct {
	Data struct {
		Type, ID   string
		Attributes map[string]any
		Links      struct{ Self string }
	}
}

func TestSiteReadAndPatch(t *testing.T) {
	t.Parallel()
	app, token, site := editorApp(t)
	r := do(t, app, http.MethodGet, "/site", "", bearer(token))
	if r.status != 200 {
		t.Fatalf("GET /site = %d %s", r.status, r.body)
	}
	testsupport.ValidateJSONAPI(t, r.body)
	var doc siteDoc
	_ = json.Unmarshal(r.body, &doc)
	if doc.Data.Type != "sites" || doc.Data.ID != site.ID.String() || doc.Data.Attributes["subdomain-slug"] != "demo" ||
		!strings.HasSuffix(doc.Data.Links.Self, "/site") || !strings.HasPrefix(doc.Data.Links.Self, "http") {
		t.Fatalf("GET /site = %s", r.body)
	}
	created := doc.Data.Attributes["created-at"].(string)
	if len(created) != len("2026-11-21T12:04:05.123Z") || !strings.HasSuffix(created, "Z") {
		t.Errorf("created-at %q is not ISO 8601 UTC with milliseconds", created)
	}

	// PATCH changes what is sent and nothing else.
	patch := `{"data":{"type":"sites","id":"` + site.ID.String() + `","attributes":{"title":"  New title  "}}}`
	r = do(t, app, http.MethodPatch, "/site", patch, bearer(token, "Content-Type", mt))
	if r.status != 200 {
		t.Fatalf("PATCH /site = %d %s", r.status, r.body)
	}
	testsupport.ValidateJSONAPI(t, r.body)
	_ = json.Unmarshal(r.body, &doc)
	if doc.Data.Attributes["title"] != "New title" || doc.Data.Attributes["subdomain-slug"] != "demo" {
		t.Errorf("after PATCH: %s", r.body)
	}
	r = do(t, app, http.MethodGet, "/site", "", bearer(token))
	_ = json.Unmarshal(r.body, &doc)
	if doc.Data.Attributes["title"] != "New title" {
		t.Errorf("PATCH did not persist: %s", r.body)
	}
}

func TestSitePatchErrors(t *testing.T) {
	t.Parallel()
	app, token, site := editorApp(t)
	id := site.ID.String()
	cases := []struct {
		name, body string
		status     int
		pointer    string
	}{
		{"wrong type", `{"data":{"type":"pages","id":"` + id + `","attributes":{"title":"x"}}}`, 409, "/data/type"},
		{"wrong id", `{"data":{"type":"sites","id":"00000000-0000-4000-8000-000000000000","attributes":{"title":"x"}}}`, 409, "/data/id"},
		{"empty title", `{"data":{"type":"sites","attributes":{"title":"   "}}}`, 422, "/data/attributes/title"},
		{"title too long", `{"data":{"type":"sites","attributes":{"title":"` + strings.Repeat("é", 201) + `"}}}`, 422, "/data/attributes/title"},
		{"bad slug", `{"data":{"type":"sites","attributes":{"subdomain-slug":"Not A Slug"}}}`, 422, "/data/attributes/subdomain-slug"},
		{"read-only attribute", `{"data":{"type":"sites","attributes":{"created-at":"2020-01-01T00:00:00.000Z"}}}`, 422, "/data/attributes/created-at"},
		// As for every other resource: sent at all is refused, null or not a string too.
		{"read-only attribute null", `{"data":{"type":"sites","attributes":{"created-at":null}}}`, 422, "/data/attributes/created-at"},
		{"read-only attribute a number", `{"data":{"type":"sites","attributes":{"updated-at":7}}}`, 422, "/data/attributes/updated-at"},
		{"unknown attribute", `{"data":{"type":"sites","attributes":{"colour":"red"}}}`, 400, "/data/attributes/colour"},
		{"title not a string", `{"data":{"type":"sites","attributes":{"title":7}}}`, 400, "/data/attributes/title"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, app, http.MethodPatch, "/site", tc.body, bearer(token, "Content-Type", mt))
			if e := errorOf(t, r, tc.status, ""); pointer(e) != tc.pointer {
				t.Errorf("pointer = %q, want %q", pointer(e), tc.pointer)
			}
		})
	}
}

func TestResourcesNeedAToken(t *testing.T) {
	t.Parallel()
	app, _, _ := editorApp(t)
	for _, path := range []string{"/site", "/users/me"} {
		r := do(t, app, http.MethodGet, path, "", map[string]string{"Accept": mt})
		errorOf(t, r, 401, "invalid_token")
		if h := r.header.Get("WWW-Authenticate"); !strings.Contains(h, `Bearer`) || !strings.Contains(h, `error="invalid_token"`) {
			t.Errorf("WWW-Authenticate = %q", h)
		}
	}
}
