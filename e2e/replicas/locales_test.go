package replicas_test

import (
	"net/http"
	"testing"
)

// TestSiteLocalesAcrossReplicas: a token's lookup, which the read cache
// keeps (docs/caching.md), carries the site's locales, by which locale-tag
// is judged (docs/locales.md). A locale added through one replica is
// accepted by the very next request through the other, whose lookup was
// kept from before; one removed is refused there at once.
func TestSiteLocalesAcrossReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three pressroom processes")
	}
	t.Parallel()
	f := newFixture(t, setup{apis: 2, workers: 1})
	a, b := f.APIs[0].URL, f.APIs[1].URL
	tokA, tokB := f.token(t, a, "editor@demo.test"), f.token(t, b, "editor@demo.test")
	// B's lookup of its token is kept by these reads (and refused "de").
	for range 3 {
		if r := f.send(b, tokB, http.MethodGet, "/users/me", nil); r.Status != http.StatusOK {
			t.Fatalf("GET /users/me on B = %s", r)
		}
	}
	if r := f.send(b, tokB, http.MethodGet, "/users/me?locale-tag=de", nil); r.Status != http.StatusBadRequest {
		t.Fatalf("locale-tag=de before the site has it, on B = %s, want 400", r)
	}
	site := func(locales []string) map[string]any {
		return map[string]any{"data": map[string]any{"type": "sites", "attributes": map[string]any{"locales": locales}}}
	}
	if r := f.send(a, tokA, http.MethodPatch, "/site", site([]string{"en", "de"})); r.Status != http.StatusOK {
		t.Fatalf("PATCH /site locales [en de] on A = %s", r)
	}
	r := f.send(b, tokB, http.MethodGet, "/users/me?locale-tag=de", nil)
	if r.Status != http.StatusOK || r.Header.Get("Content-Language") != "de" {
		t.Fatalf("locale-tag=de on B right after A added it = %s (Content-Language %q), want 200 de", r, r.Header.Get("Content-Language"))
	}
	if r := f.send(a, tokA, http.MethodPatch, "/site", site([]string{"en"})); r.Status != http.StatusOK {
		t.Fatalf("PATCH /site locales [en] on A = %s", r)
	}
	if r := f.send(b, tokB, http.MethodGet, "/users/me?locale-tag=de", nil); r.Status != http.StatusBadRequest {
		t.Fatalf("locale-tag=de on B right after A removed it = %s, want 400", r)
	}
}
