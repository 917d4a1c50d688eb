package api

import (
	"maps"
	"testing"

	"github.com/pressroom/pressroom/models/drafts"
)

// A resource in a locale: each localized attribute along the chain
// (fr-CA → fr → en), meta.fallbacks naming only values of another locale,
// a value null everywhere null and no fallback; the zero Locale (a site
// with one locale) renders the row's own columns and no meta.fallbacks;
// a sparse fieldset narrows meta.fallbacks to the attributes it keeps.
func TestResourceInALocale(t *testing.T) {
	h := contentHandler{kind: drafts.Pages}
	row := drafts.Row{"id": "5b1e0f7e-1d3c-4b8a-9a3e-0c2f7b6d9e11", "version": float64(2), "title": "About", "slug": "about",
		"description": nil, "keywords": "en", "title@fr": "À propos", "keywords@fr-CA": "ca"}
	frCA := drafts.Locale{Tag: "fr-CA", Base: "en", Default: "en", Chain: []string{"fr-CA", "fr", "en"}}
	r := h.resource(&drafts.View{Kind: drafts.Pages, Row: row}, false, nil, h.links.drafted(), frCA)
	attrs := r.Attributes.(map[string]any)
	if attrs["title"] != "À propos" || attrs["slug"] != "about" || attrs["keywords"] != "ca" || attrs["description"] != nil {
		t.Errorf("fr-CA attributes: %v", attrs)
	}
	if want := map[string]any{"title": "fr", "slug": "en"}; !maps.Equal(r.Meta[fallbacksMeta].(map[string]any), want) {
		t.Errorf("meta.fallbacks = %v, want %v", r.Meta[fallbacksMeta], want)
	}
	q := &Query{Fields: map[string]map[string]bool{"pages": {"title": true, "keywords": true}}}
	sparse := q.Sparse(r)
	if want := map[string]any{"title": "fr"}; !maps.Equal(sparse.Meta[fallbacksMeta].(map[string]any), want) || sparse.Meta["version"] != 2 {
		t.Errorf("sparse meta = %v, want fallbacks %v and the version", sparse.Meta, want)
	}
	if len(r.Meta[fallbacksMeta].(map[string]any)) != 2 {
		t.Errorf("Sparse changed the resource's own meta: %v", r.Meta)
	}
	q = &Query{Fields: map[string]map[string]bool{"pages": {"keywords": true}}}
	if _, has := q.Sparse(r).Meta[fallbacksMeta]; has {
		t.Errorf("a fieldset of own values only keeps meta.fallbacks: %v", q.Sparse(r).Meta)
	}
	base := h.resource(&drafts.View{Kind: drafts.Pages, Row: row}, false, nil, h.links.drafted(), drafts.Locale{})
	if a := base.Attributes.(map[string]any); a["title"] != "About" || a["keywords"] != "en" {
		t.Errorf("base attributes: %v", a)
	}
	if want := (map[string]any{"version": 2}); !maps.Equal(base.Meta, want) {
		t.Errorf("base meta = %v, want %v", base.Meta, want)
	}
}
