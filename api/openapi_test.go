package api_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/gofiber/fiber/v2"

	"github.com/pressroom/pressroom/api"
	"github.com/pressroom/pressroom/testsupport"
)

// TestOpenAPIDescription loads GET /openapi.json with kin-openapi, validates
// it as OpenAPI 3.1, and checks it describes exactly the routes the app
// serves: every one, and nothing else.
func TestOpenAPIDescription(t *testing.T) {
	t.Parallel()
	app := mustApp(t, api.Deps{Config: testsupport.Defaults(), Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	r := do(t, app, http.MethodGet, "/openapi.json", "", nil)
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /openapi.json without a token = %d %s", r.status, r.header.Get("Content-Type"))
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(r.body)
	if err != nil {
		t.Fatalf("kin-openapi cannot load the description: %v", err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Errorf("openapi = %q, want 3.1", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the description is not valid OpenAPI: %v", err)
	}

	described := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			described[method+" "+path] = true
		}
	}
	served := map[string]bool{}
	for _, route := range servedByApp(app) {
		served[route] = true
		if !described[route] {
			t.Errorf("%s is served but not described", route)
		}
	}
	for route := range described {
		if !served[route] {
			t.Errorf("%s is described but not served", route)
		}
	}
	if len(served) < 50 {
		t.Errorf("only %d routes found; the walk of app.GetRoutes() is broken", len(served))
	}
}

// servedByApp lists "METHOD /path" (OpenAPI path syntax) for every route the
// app registered, without Fiber's automatic HEAD twins and without the 405
// answers registered for every method on OAuth paths (app.All). Fiber merges
// a second registration of one method and path into the first route: on
// such a path a served method's route has its handler and the 405 one.
func servedByApp(app *fiber.App) []string {
	handlers := map[string]int{}
	methods := map[string]int{}
	for _, r := range app.GetRoutes(true) {
		k := r.Method + " " + r.Path
		if _, seen := handlers[k]; !seen {
			methods[r.Path]++
		}
		handlers[k] += len(r.Handlers)
	}
	var out []string
	for k, n := range handlers {
		method, path, _ := strings.Cut(k, " ")
		if method == fiber.MethodHead || methods[path] >= len(fiber.DefaultMethods) && n < 2 {
			continue
		}
		out = append(out, method+" "+strings.ReplaceAll(path, ":id", "{id}"))
	}
	slices.Sort(out)
	return out
}
