package api_test

import (
	"context"
	"encoding/json"
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
		out = append(out, method+" "+strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(path, ":id", "{id}"), ":other", "{other}"), ":token", "{token}"), "/*", "/{path}"))
	}
	slices.Sort(out)
	return out
}

// TestOpenAPIExamplesValidate: every operation has a summary, a
// description, its error codes and an example of every answer and of its
// JSON:API request, and each example validates against its schema with
// kin-openapi.
func TestOpenAPIExamplesValidate(t *testing.T) {
	t.Parallel()
	app := mustApp(t, api.Deps{Config: testsupport.Defaults(), Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	r := do(t, app, http.MethodGet, "/openapi.json", "", nil)
	doc, err := openapi3.NewLoader().LoadFromData(r.body)
	if err != nil {
		t.Fatal(err)
	}
	// Examples are validated here, by hand, so a failure names its place.
	if err := doc.Validate(context.Background(), openapi3.DisableExamplesValidation()); err != nil {
		t.Fatal(err)
	}
	checked := 0
	example := func(where string, mt *openapi3.MediaType) {
		if mt.Example == nil {
			t.Errorf("%s has no example", where)
			return
		}
		if mt.Schema == nil || mt.Schema.Value == nil {
			return
		}
		if err := mt.Schema.Value.VisitJSON(mt.Example, openapi3.MultiErrors()); err != nil {
			t.Errorf("%s: the example does not validate: %v", where, err)
		}
		checked++
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			where := method + " " + path
			if op.Summary == "" || len(op.Description) < 40 {
				t.Errorf("%s: summary %q, description %q: want both, the description a paragraph", where, op.Summary, op.Description)
			}
			public := op.Security != nil && len(*op.Security) == 0
			if codes, _ := op.Extensions["x-error-codes"].([]any); len(codes) == 0 && !public {
				t.Errorf("%s lists no error codes (x-error-codes)", where)
			}
			if op.RequestBody != nil {
				for name, mt := range op.RequestBody.Value.Content {
					example(where+" request "+name, mt)
				}
			}
			for status, resp := range op.Responses.Map() {
				for name, mt := range resp.Value.Content {
					example(where+" "+status+" "+name, mt)
				}
			}
		}
	}
	if checked < 300 {
		t.Errorf("only %d examples checked: the walk is broken", checked)
	}
}

// TestOpenAPIDocsStartWithGettingStarted: /docs renders info.description
// first; it is the getting-started section, with each of its parts.
func TestOpenAPIDocsStartWithGettingStarted(t *testing.T) {
	t.Parallel()
	app := mustApp(t, api.Deps{Config: testsupport.Defaults(), Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	var doc struct {
		Info struct{ Description string }
	}
	if err := json.Unmarshal(do(t, app, http.MethodGet, "/openapi.json", "", nil).body, &doc); err != nil {
		t.Fatal(err)
	}
	d := doc.Info.Description
	last := -1
	for _, heading := range []string{"# Getting started", "## The media type", "application/vnd.api+json", "## Signing in",
		"grant_type=password", "code_challenge", "## Drafts, then revisions", "POST /revisions", "## Uploads", "/upload-signatures", "## Errors"} {
		i := strings.Index(d, heading)
		if i < last {
			t.Errorf("info.description lacks %q after the previous part", heading)
		}
		last = max(last, i)
	}
	page := do(t, app, http.MethodGet, "/docs", "", nil)
	if !strings.Contains(string(page.body), `spec-url="/openapi.json"`) {
		t.Errorf("/docs does not render /openapi.json: %s", page.body)
	}
}
