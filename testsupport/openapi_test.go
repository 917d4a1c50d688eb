package testsupport_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pressroom/pressroom/api"
	"github.com/pressroom/pressroom/testsupport"
)

// TestOpenAPICheckCatchesDrift: the check call runs on every e2e response
// refuses what the description does not allow.
func TestOpenAPICheckCatchesDrift(t *testing.T) {
	app, err := api.New(api.Deps{Config: testsupport.Defaults(), Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := app.Test(httptest.NewRequest(http.MethodGet, "/openapi.json", nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	o, err := testsupport.LoadOpenAPI(raw)
	if err != nil {
		t.Fatal(err)
	}
	jsonapi := http.Header{"Content-Type": {"application/vnd.api+json"}}
	user := `{"data":{"type":"users","id":"1","attributes":{"email":"a@b.test","name":"A","created-at":"2026-01-01T00:00:00.000Z"}}}`
	for _, tc := range []struct {
		name, method, path string
		status             int
		body               string
		ok                 bool
	}{
		{"a user", "GET", "/users/me", 200, user, true},
		{"an error document", "GET", "/users/me", 401, `{"errors":[{"status":"401","code":"unauthorized","title":"Unauthorized"}]}`, true},
		{"a page where a user belongs", "GET", "/users/me", 200, strings.Replace(user, `"users"`, `"pages"`, 1), false},
		{"an attribute the user has not", "GET", "/users/me", 200, strings.Replace(user, `"name"`, `"nickname"`, 1), false},
		{"a to-one linkage as an array", "GET", "/layouts/0b6f6c8e-3f7e-4a53-9a0d-7d1c1b3c2a10/relationships/theme", 200, `{"data":[]}`, false},
		{"an undescribed path", "GET", "/nothing-here", 200, `{}`, false},
	} {
		req := httptest.NewRequest(tc.method, "http://127.0.0.1:8080"+tc.path, nil)
		err := o.Check(req, tc.status, jsonapi, []byte(tc.body))
		if (err == nil) != tc.ok {
			t.Errorf("%s: Check = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

// TestOpenAPICheckRequestCatchesDrift: what the e2e tests send and the API
// accepts is checked too, so an attribute accepted but not described fails.
func TestOpenAPICheckRequestCatchesDrift(t *testing.T) {
	app, err := api.New(api.Deps{Config: testsupport.Defaults(), Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := app.Test(httptest.NewRequest(http.MethodGet, "/openapi.json", nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	o, err := testsupport.LoadOpenAPI(raw)
	if err != nil {
		t.Fatal(err)
	}
	theme := `{"data":{"type":"themes","attributes":{"title":"Spring","description":null}}}`
	for _, tc := range []struct {
		name, method, path, body string
		ok                       bool
	}{
		{"a theme", "POST", "/themes", theme, true},
		{"a theme with an attribute themes lack", "POST", "/themes", strings.Replace(theme, `"description"`, `"colour"`, 1), false},
		{"a theme without its required title", "POST", "/themes", `{"data":{"type":"themes","attributes":{}}}`, false},
		{"a read-only attribute", "POST", "/themes", strings.Replace(theme, `"description"`, `"published-at"`, 1), false},
		{"an include the route offers", "GET", "/themes?include=layouts", "", true},
		{"a sort key it does not", "GET", "/themes?sort=colour", "", false},
	} {
		var body io.Reader
		if tc.body != "" {
			body = strings.NewReader(tc.body)
		}
		req := httptest.NewRequest(tc.method, "http://127.0.0.1:8080"+tc.path, body)
		if tc.body != "" {
			req.Header.Set("Content-Type", "application/vnd.api+json")
		}
		err := o.CheckRequest(req, []byte(tc.body))
		if (err == nil) != tc.ok {
			t.Errorf("%s: CheckRequest = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}
