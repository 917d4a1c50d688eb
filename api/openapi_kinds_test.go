package api

import (
	"maps"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/pressroom/pressroom/models/drafts"
)

// TestOpenAPIContentKindsListWhatTheRendererEmits: the description of
// pages, contents and content-blocks names exactly the attributes
// contentHandler.resource renders (live and drafted), typed, with no
// other allowed; the read-only ones (derived, timestamps) are marked so
// and left out of what a request may send, and a create request requires
// what the kind's declarations require on create. Fails on the old code,
// which described their attributes as {}.
func TestOpenAPIContentKindsListWhatTheRendererEmits(t *testing.T) {
	b := specBuilder{paths: map[string]map[string]any{}, schemas: map[string]any{}}
	for _, k := range []*drafts.Kind{drafts.Pages, drafts.Contents, drafts.ContentBlocks} {
		b.resourceSchemas(k.Type)
		name := schemaName(k.Type)
		schema := b.schemas[name+"Attributes"].(map[string]any)
		props := schema["properties"].(map[string]any)
		if schema["additionalProperties"] != false {
			t.Errorf("%s: additionalProperties = %v, want false", name, schema["additionalProperties"])
		}
		row := drafts.Row{"id": uuid.NewString(), "version": float64(3), "path": "/a", "created_at": "2026-11-27T10:00:00+00:00",
			"updated_at": "2026-11-27T10:00:00+00:00", "published_at": nil, "trashed_at": nil}
		for _, f := range k.Fields {
			row[f.Column] = f.Default
		}
		h := contentHandler{kind: k}
		// In the base locale and in another (localized attributes resolved,
		// none added): the same attributes.
		for i, drafted := range []bool{false, true, false, true} {
			loc := drafts.Locale{}
			if i > 1 {
				loc = drafts.Locale{Tag: "de", Base: "en", Default: "en", Chain: []string{"de", "en"}}
			}
			r := h.resource(&drafts.View{Kind: k, Row: row}, drafted, nil, h.links.drafted(), loc)
			got, want := slices.Sorted(maps.Keys(r.Attributes.(map[string]any))), slices.Sorted(maps.Keys(props))
			if !slices.Equal(got, want) {
				t.Errorf("%s (drafted %v): rendered attributes %v, described %v", k.Type, drafted, got, want)
			}
		}
		req := b.schemas[name+"RequestAttributes"].(map[string]any)["properties"].(map[string]any)
		for attr, s := range props {
			s := s.(map[string]any)
			if s["type"] == nil || s["description"] == "" {
				t.Errorf("%s.%s is described without a type or a description: %v", k.Type, attr, s)
			}
			ro := s["readOnly"] == true
			if _, accepted := req[attr]; ro == accepted || ro != roAttributes[attr] {
				t.Errorf("%s.%s: readOnly %v, in requests %v, set by the server %v", k.Type, attr, ro, accepted, roAttributes[attr])
			}
		}
		var required []any
		for _, f := range k.Fields {
			if f.RequiredOnCreate && !f.IsRef() {
				required = append(required, f.Name)
			}
		}
		if got := b.schemas[name+"CreateRequestAttributes"].(map[string]any)["required"]; !slices.Equal(asList(got), required) {
			t.Errorf("%s create requires %v, want %v", k.Type, got, required)
		}
	}
	title := b.schemas["PagesAttributes"].(map[string]any)["properties"].(map[string]any)["title"].(map[string]any)
	// Localized: null where no locale of the read's chain has a title (a
	// page made in another locale only, docs/locales.md).
	if title["minLength"] != 1 || title["maxLength"] != 200 || !slices.Equal(asList(title["type"]), []any{"string", "null"}) {
		t.Errorf("pages.title = %v, want a string of 1 to 200, or null (localized)", title)
	}
	rels := b.schemas["ContentsCreateRequest"].(map[string]any)["properties"].(map[string]any)["data"].(map[string]any)["properties"].(map[string]any)["relationships"].(map[string]any)
	if !slices.Equal(asList(rels["required"]), []any{"page"}) {
		t.Errorf("a content's create request requires relationships %v, want [page]", rels["required"])
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }
