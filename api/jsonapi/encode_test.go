package jsonapi

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestEncodeMatchesReflection pins Document.Encode to what encoding/json
// writes for the same document, byte for byte.
func TestEncodeMatchesReflection(t *testing.T) {
	id := "0b7a9c6e-3f1d-4c2a-9b8e-2d4f6a8c0e1f"
	tricky := "a \"quoted\" <b>&</b> \\ \n\t\u2028 é \x7f \xff end"
	cases := map[string]*Resource{
		"bare":  {Type: "pages", ID: id},
		"empty": {Type: "pages", ID: id, Attributes: map[string]any{}, Relationships: map[string]*Relationship{}, Meta: map[string]any{}},
		"page": {Type: "pages", ID: id,
			Attributes: map[string]any{"title": "Home", "slug": "", "search-engine-indexable": true, "position": float64(3),
				"big": float64(1e20), "frac": 0.25, "neg": float64(-7), "negzero": math.Copysign(0, -1), "nil": nil,
				"list": []any{"a", float64(1)}, "obj": map[string]any{"z": 1, "a": tricky}, "int": 12, "ptr": &id, "nilptr": (*string)(nil)},
			Relationships: map[string]*Relationship{
				"parent": {Links: &Links{Self: "http://x/pages/" + id + "/relationships/parent", Related: "http://x/pages/" + id + "/parent"}, Data: ToOne("pages", &id)},
				"draft":  {Links: &Links{Self: "http://x/d"}, Data: ToOne("drafts", nil)},
				"blocks": {Links: &Links{Related: "http://x/b"}},
				"many":   {Data: ToMany("pages", []string{id, tricky})},
				"paged":  {Links: &Links{Self: "s", Next: "n"}, Data: ToMany("pages", []string{id}), Meta: map[string]any{"count": 101}},
				"meta":   {Meta: map[string]any{"count": 0}},
				"nil":    nil,
			},
			Links: &Links{Self: "http://x/pages/" + id, First: "f", Prev: "p", Next: "n", Last: "l"},
			Meta:  map[string]any{"version": 3}},
		"tricky": {Type: tricky, ID: tricky, Attributes: map[string]any{tricky: tricky}, Links: &Links{}},
		"struct attrs": {Type: "themes", ID: id, Attributes: struct {
			Name string `json:"name"`
		}{"x"}},
		"emptylinks":     {Type: "pages", ID: id, Links: &Links{}},
		"tricky linkage": {Type: "pages", ID: id, Relationships: map[string]*Relationship{"x": {Data: ToOne(tricky, &tricky)}}},
	}
	links := &Links{Self: "s", Next: "n"}
	for name, r := range cases {
		docs := map[string]Document{
			"one":             {Data: r, JSONAPI: V11},
			"one included":    {Data: r, Included: []*Resource{r, r}, Links: links, Meta: map[string]any{"total": 2}, JSONAPI: V11},
			"list":            {Data: []*Resource{r, r}, Links: links, Meta: map[string]any{"total": float64(2)}},
			"empty list":      {Data: []*Resource{}, Included: []*Resource{}},
			"nil list":        {Data: []*Resource(nil)},
			"nil resource":    {Data: (*Resource)(nil)},
			"nil data":        {},
			"other data":      {Data: map[string]any{"x": tricky}},
			"nil in included": {Data: r, Included: []*Resource{nil}},
		}
		for shape, doc := range docs {
			want, err := json.Marshal(doc)
			if err != nil {
				t.Fatalf("%s, %s: %v", name, shape, err)
			}
			got, err := doc.Encode(false)
			if err != nil {
				t.Fatalf("%s, %s: %v", name, shape, err)
			}
			if string(got) != string(want) {
				t.Errorf("%s, %s:\n got %s\nwant %s", name, shape, got, want)
			}
			// included always present: as compound documents are written,
			// an empty one right after data.
			if len(doc.Included) == 0 {
				data, _ := json.Marshal(doc.Data)
				head := `{"data":` + string(data)
				if !strings.HasPrefix(string(want), head) {
					t.Fatalf("%s, %s: %s does not start with the data member", name, shape, want)
				}
				want = []byte(head + `,"included":[]` + strings.TrimPrefix(string(want), head))
			}
			if got, _ = doc.Encode(true); string(got) != string(want) {
				t.Errorf("%s, %s, included:\n got %s\nwant %s", name, shape, got, want)
			}
		}
	}
	bad := Document{Data: &Resource{Type: "pages", ID: "1", Relationships: map[string]*Relationship{"x": {Data: []byte("{")}}}}
	if _, err := bad.Encode(false); err == nil {
		t.Error("Encode took relationship data that is not JSON")
	}
	for _, typ := range []string{"pages", tricky} {
		want, _ := json.Marshal(Identifier{Type: typ, ID: tricky})
		if got := ToOne(typ, &tricky); string(got) != string(want) {
			t.Errorf("ToOne(%q) = %s, want %s", typ, got, want)
		}
	}
}

func BenchmarkResourceMarshal(b *testing.B) {
	id := "0b7a9c6e-3f1d-4c2a-9b8e-2d4f6a8c0e1f"
	r := &Resource{Type: "pages", ID: id, Attributes: map[string]any{"title": "Page 1", "slug": "page-1", "path": "/page-0/page-1",
		"page-type": "page", "description": nil, "keywords": nil, "search-engine-indexable": true, "search-engine-followable": true,
		"canonical-url": nil, "published-at": "2026-11-24T04:00:00.000Z", "trashed-at": nil, "created-at": "2026-11-24T04:00:00.000Z", "updated-at": "2026-11-24T04:00:00.000Z"},
		Relationships: map[string]*Relationship{
			"parent": {Links: &Links{Self: "http://127.0.0.1:1/pages/" + id + "/relationships/parent", Related: "http://127.0.0.1:1/pages/" + id + "/parent"}, Data: ToOne("pages", &id)},
			"layout": {Links: &Links{Self: "http://127.0.0.1:1/pages/" + id + "/relationships/layout", Related: "http://127.0.0.1:1/pages/" + id + "/layout"}, Data: ToOne("layouts", nil)},
			"draft":  {Links: &Links{Self: "http://127.0.0.1:1/pages/" + id + "/relationships/draft", Related: "http://127.0.0.1:1/pages/" + id + "/draft"}, Data: ToOne("drafts", nil)},
		},
		Links: &Links{Self: "http://127.0.0.1:1/pages/" + id}, Meta: map[string]any{"version": 2}}
	doc := Document{Data: r, JSONAPI: V11}
	b.Run("Encode", func(b *testing.B) {
		for b.Loop() {
			_, _ = doc.Encode(false)
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			_, _ = json.Marshal(doc)
		}
	})
}
