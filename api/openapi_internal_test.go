package api

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
)

// A route the description cannot derive fails the build, naming the fix.
func TestOpenAPIRefusesUndescribedRoutes(t *testing.T) {
	for _, r := range []fiber.Route{
		{Method: fiber.MethodGet, Path: "/widgets"},                        // a type jsonapi.Relationships lacks
		{Method: fiber.MethodGet, Path: "/pages/:id/colour"},               // a relationship it lacks
		{Method: fiber.MethodPost, Path: "/pages/:id/publish"},             // not of the JSON:API shape
		{Method: fiber.MethodGet, Path: "/themes/:id/relationships/pages"}, // a relationship it lacks
	} {
		_, err := buildOpenAPI([]fiber.Route{r}, "http://127.0.0.1:8080", nil, nil)
		if err == nil || !strings.Contains(err.Error(), r.Path) {
			t.Errorf("%s %s: err = %v, want one naming the route", r.Method, r.Path, err)
		}
	}
}

// Every specialRoutes entry is a route New registers: none is left behind
// when a route goes.
func TestOpenAPISpecialRoutesAreServed(t *testing.T) {
	app := bareApp(t)
	served := map[string]bool{}
	for _, r := range servedRoutes(app.GetRoutes(true)) {
		served[r[0]+" "+r[1]] = true
	}
	for k := range specialRoutes {
		if !served[k] {
			t.Errorf("specialRoutes describes %s, which is not served", k)
		}
	}
}

// Attributes shared by embedding (timestamps, readOnlyTimestamps) are
// described as encoding/json flattens them; read-only request members are
// left out of what a request accepts.
func TestOpenAPIDescribesEmbeddedAttributes(t *testing.T) {
	b := specBuilder{paths: map[string]map[string]any{}, schemas: map[string]any{}}
	b.resourceSchemas("themes")
	props := func(schema string) map[string]any {
		return b.schemas[schema].(map[string]any)["properties"].(map[string]any)
	}
	attrs, req := props("ThemesAttributes"), props("ThemesRequestAttributes")
	for _, name := range []string{"title", "created-at", "updated-at"} {
		if attrs[name] == nil {
			t.Errorf("ThemesAttributes lacks %s: %v", name, attrs)
		}
	}
	if req["title"] == nil || req["created-at"] != nil || req["updated-at"] != nil || req["timestamps"] != nil {
		t.Errorf("ThemesRequestAttributes = %v, want title without the read-only timestamps", req)
	}
}

// The query parameters described are the QuerySpec the handler parses
// with: GET /themes's include paths, sort keys and filters are
// themeSpec(true)'s, and a handler that reads its record before its query
// (GET /webhooks/:id/deliveries) is described with its page parameters.
func TestOpenAPIQueryParametersAreTheHandlersSpecs(t *testing.T) {
	app := bareApp(t)
	specs := probeQuerySpecs(app)
	want := themeSpec(true)
	got, ok := specs["GET /themes"]
	if !ok || !slices.Equal(got.Includes, want.Includes) || !maps.Equal(got.Sorts, want.Sorts) || !maps.Equal(got.Filters, want.Filters) {
		t.Errorf("GET /themes probed %+v, want themeSpec(true) %+v", got, want)
	}
	if d, ok := specs["GET /webhooks/:id/deliveries"]; !ok || !d.Collection {
		t.Errorf("GET /webhooks/:id/deliveries probed %+v (found %v), want deliverySpec(true)", d, ok)
	}
	b := specBuilder{paths: map[string]map[string]any{}, schemas: map[string]any{}, responses: map[string]any{}}
	b.commonSchemas()
	names := map[string]any{}
	for _, p := range b.queryParameters(got) {
		names[p.(map[string]any)["name"].(string)] = p.(map[string]any)["schema"]
	}
	for _, name := range []string{"include", "fields[themes]", "sort", "filter[title]", "page[number]", "page[size]"} {
		if names[name] == nil {
			t.Errorf("GET /themes's parameters lack %s: %v", name, names)
		}
	}
	sorts := names["sort"].(map[string]any)["items"].(map[string]any)["enum"].([]string)
	if !slices.Contains(sorts, "title") || !slices.Contains(sorts, "-created-at") {
		t.Errorf("sort keys = %v", sorts)
	}
}
