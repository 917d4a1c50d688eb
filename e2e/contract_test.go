package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// rawRequest sends a request with the given headers and returns the
// response with its body, for plain-JSON and HTML endpoints.
func (s *system) rawRequest(t *testing.T, method, url string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := s.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// TestAssetTypesNeedsABearerToken: GET /asset-types is behind the token
// like every endpoint of the spec but /oauth/token (issue 11 item 1), while
// health, readiness, discovery, JWKS and the authorize page stay public.
func TestAssetTypesNeedsABearerToken(t *testing.T) {
	t.Parallel()
	s := start(t)
	for _, auth := range []string{"", "Bearer ", "Bearer not-a-token", "Basic ZWRpdG9yOnB3"} {
		h := []string{"Accept", "application/json"}
		if auth != "" {
			h = append(h, "Authorization", auth)
		}
		resp, body := s.rawRequest(t, http.MethodGet, s.URL+"/asset-types", h...)
		if resp.StatusCode != 401 {
			t.Fatalf("GET /asset-types with Authorization %q = %d, want 401: %s", auth, resp.StatusCode, body)
		}
		if got := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
			t.Errorf("WWW-Authenticate = %q, want a Bearer challenge", got)
		}
		if strings.Contains(string(body), "asset_image") {
			t.Errorf("the 401 leaks the table: %s", body)
		}
	}
	// With a token: the plain-JSON table, not for shared caches.
	token := s.token(t, "editor@demo.test")
	resp, body := s.rawRequest(t, http.MethodGet, s.URL+"/asset-types", "Authorization", "Bearer "+token)
	var table map[string]json.RawMessage
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || json.Unmarshal(body, &table) != nil || table["image"] == nil {
		t.Fatalf("GET /asset-types with a token = %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if cc := resp.Header.Get("Cache-Control"); strings.Contains(cc, "public") {
		t.Errorf("Cache-Control = %q: a shared cache could hand the table to a caller without a token", cc)
	}

	// The public endpoints answer without a token.
	resp, body = s.rawRequest(t, http.MethodGet, s.URL+"/.well-known/openid-configuration")
	var disc struct {
		JWKS      string `json:"jwks_uri"`
		Authorize string `json:"authorization_endpoint"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &disc) != nil || disc.JWKS == "" {
		t.Fatalf("discovery without a token = %d %s", resp.StatusCode, body)
	}
	for _, u := range []string{s.URL + "/healthz", s.URL + "/readyz", disc.JWKS} {
		if resp, body := s.rawRequest(t, http.MethodGet, u); resp.StatusCode != 200 {
			t.Errorf("GET %s without a token = %d, want 200 (public): %s", u, resp.StatusCode, body)
		}
	}
	// The authorize endpoint answers the browser (an error page or a
	// redirect to the login form for this unknown client), never 401.
	noRedirect := *s.http
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, _ := http.NewRequest(http.MethodGet, disc.Authorize+"?client_id=nobody&response_type=code&scope=openid&redirect_uri=urn:ietf:wg:oauth:2.0:oob", nil)
	if resp, err := noRedirect.Do(req); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
		if resp.StatusCode == 401 || resp.Header.Get("WWW-Authenticate") != "" {
			t.Errorf("GET /oauth/authorize without a token = %d with a bearer challenge; it is public", resp.StatusCode)
		}
	}
}
