package api

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/pressroom/pressroom/api/jsonapi"
)

// TestPreviewDocLinks: a token preview read's links each carry
// preview-release once (added to a query or starting one, kept when there),
// URLs elsewhere are left as they are; and the builder applies the map to
// every links member it writes, leaving out a link the map refuses.
func TestPreviewDocLinks(t *testing.T) {
	rel := uuid.MustParse("6f1d8a4e-0000-4000-8000-000000000001")
	m := previewLinks("http://api.test", rel)
	p := "preview-release=" + rel.String()
	for in, want := range map[string]string{
		"http://api.test/pages/1":                           "http://api.test/pages/1?" + p,
		"http://api.test/pages?page%5Bsize%5D=1":            "http://api.test/pages?page%5Bsize%5D=1&" + p,
		"http://api.test/contents/2?" + p:                   "http://api.test/contents/2?" + p,
		"http://api.test/pages?" + p + "&page%5Bafter%5D=x": "http://api.test/pages?" + p + "&page%5Bafter%5D=x",
		"https://elsewhere.test/pages/1":                    "https://elsewhere.test/pages/1",
		"http://api.test.evil/pages/1":                      "http://api.test.evil/pages/1",
	} {
		if got, ok := m(in); !ok || got != want {
			t.Errorf("%s -> %s %v, want %s", in, got, ok, want)
		}
	}

	id := "1"
	doc := jsonapi.Document{
		Data: &jsonapi.Resource{Type: "pages", ID: id, Links: &jsonapi.Links{Self: "http://api.test/pages/1"},
			Relationships: map[string]*jsonapi.Relationship{
				"parent": {Links: &jsonapi.Links{Self: "http://api.test/pages/1/relationships/parent", Related: "http://api.test/pages/1/parent"}, Data: jsonapi.ToOne("pages", nil)},
				"draft":  {Links: &jsonapi.Links{Self: "http://api.test/pages/1/relationships/draft"}, Data: jsonapi.ToOne("drafts", nil)},
			}},
		Included: []*jsonapi.Resource{{Type: "layouts", ID: "2", Links: &jsonapi.Links{Self: "http://api.test/layouts/2"}}},
		Links:    &jsonapi.Links{Self: "http://api.test/pages/1", Next: "http://api.test/pages?page%5Bafter%5D=1"},
		MapLinks: func(u string) (string, bool) {
			if strings.Contains(u, "draft") {
				return "", false
			}
			return m(u)
		},
	}
	out, err := doc.Encode(true)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), "http://api.test/"); n != 6 || strings.Count(string(out), p) != 6 || strings.Contains(string(out), "relationships/draft") {
		t.Errorf("encoded with the map: %d URLs, %d with the parameter, want 6 and 6 and no draft link: %s", n, strings.Count(string(out), p), out)
	}
	if !strings.Contains(string(out), `"draft":{"data":null}`) {
		t.Errorf("a relationship whose links are all refused: want its data without links: %s", out)
	}
}
