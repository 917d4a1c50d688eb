package oauth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

// --- routes ---------------------------------------------------------------------

// Only the op endpoints and methods Pressroom uses are served: wrong methods
// are 405 with Allow, every other op path is 404.
func TestOAuthRoutesAndMethods(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	b := newBrowser()
	served := map[string]string{ // path → Allow
		"/.well-known/openid-configuration": "GET, HEAD",
		"/oauth/keys":                       "GET, HEAD",
		"/oauth/token":                      "POST",
		"/oauth/token.json":                 "POST",
		"/oauth/introspect":                 "POST",
		"/oauth/revoke":                     "POST",
		"/oauth/authorize":                  "GET",
		"/oauth/login":                      "GET, POST",
	}
	methods := []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions}
	for path, allow := range served {
		for _, m := range methods {
			if strings.Contains(", "+allow+",", ", "+m+",") {
				continue
			}
			var form url.Values
			if m != http.MethodGet && m != http.MethodHead {
				form = url.Values{}
			}
			r := s.browse(t, b, m, path, form)
			if r.StatusCode != http.StatusMethodNotAllowed || r.Header.Get("Allow") != allow {
				t.Errorf("%s %s = %d Allow %q, want 405 Allow %q", m, path, r.StatusCode, r.Header.Get("Allow"), allow)
			}
		}
	}
	// The token endpoint never answers a GET with tokens (the code and verifier
	// would sit in URLs and logs, and op's tokens belong to no refresh chain).
	r := s.browse(t, b, http.MethodGet, "/oauth/token?"+url.Values{"grant_type": {"password"}, "username": {"editor@demo.test"}, "password": {password}}.Encode(), nil)
	if bb := body(t, r); r.StatusCode != 405 || strings.Contains(string(bb), "access_token") {
		t.Errorf("GET /oauth/token with a grant = %d %s", r.StatusCode, bb)
	}
	for _, path := range []string{"/oauth/authorize/callback?id=00000000-0000-4000-8000-000000000000", "/oauth/userinfo", "/oauth/logout",
		"/oauth/end_session", "/oauth/device_authorization", "/oauth/", "/oauth/no-such-thing", "/.well-known/jwks.json",
		"/oauth/keys/", "/oauth/token/"} {
		for _, m := range []string{http.MethodGet, http.MethodPost} {
			var form url.Values
			if m == http.MethodPost {
				form = url.Values{}
			}
			if r := s.browse(t, b, m, path, form); r.StatusCode != http.StatusNotFound {
				t.Errorf("%s %s = %d, want 404", m, path, r.StatusCode)
			}
		}
	}
	// What is served answers.
	for _, c := range []struct{ method, path string }{{"GET", "/.well-known/openid-configuration"}, {"HEAD", "/.well-known/openid-configuration"},
		{"GET", "/oauth/keys"}, {"HEAD", "/oauth/keys"}} {
		if r := s.browse(t, b, c.method, c.path, nil); r.StatusCode != 200 {
			t.Errorf("%s %s = %d, want 200", c.method, c.path, r.StatusCode)
		}
	}
	// Discovery names nothing that is not served.
	var d map[string]any
	if err := json.Unmarshal(body(t, s.browse(t, b, http.MethodGet, "/.well-known/openid-configuration", nil)), &d); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"userinfo_endpoint", "end_session_endpoint", "device_authorization_endpoint", "check_session_iframe"} {
		if v, ok := d[k]; ok {
			t.Errorf("discovery advertises %s %v, which is not served", k, v)
		}
	}
	for k, v := range d {
		if u, ok := v.(string); ok && (strings.HasSuffix(k, "_endpoint") || k == "jwks_uri") {
			p := strings.TrimPrefix(u, s.URL)
			if _, ok := served[p]; !ok {
				t.Errorf("discovery %s = %q, not a served path", k, u)
			}
		}
	}
	if rt, _ := json.Marshal(d["response_types_supported"]); string(rt) != `["code"]` {
		t.Errorf("response_types_supported = %s, want [\"code\"]", rt)
	}
}

// The library client still walks the flow (oauth2 sends scope when asked):
// the binding is invisible to a well-behaved browser.
func TestCodeFlowWithOAuth2LibraryNoScope(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	conf := &oauth2.Config{ClientID: s.PublicID, RedirectURL: s.RedirectURI,
		Endpoint: oauth2.Endpoint{AuthURL: s.URL + "/oauth/authorize", TokenURL: s.URL + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams}}
	verifier := oauth2.GenerateVerifier()
	q := s.followToCode(t, s.authorize(t, conf.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier)), "editor@demo.test", password))
	tok, err := conf.Exchange(context.Background(), q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if r := s.get(t, "/users/me", tok.AccessToken); r.StatusCode != 200 {
		t.Errorf("/users/me = %d", r.StatusCode)
	}
}

// --- the whole flow through an OAuth 2 client ------------------------------------

func TestCodeFlowWithPKCEForAPublicClient(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	conf := &oauth2.Config{ClientID: s.PublicID, RedirectURL: s.RedirectURI, Scopes: []string{"openid"},
		Endpoint: oauth2.Endpoint{AuthURL: s.URL + "/oauth/authorize", TokenURL: s.URL + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams}}
	verifier := oauth2.GenerateVerifier()
	q := s.followToCode(t, s.authorize(t, conf.AuthCodeURL("state-123", oauth2.S256ChallengeOption(verifier)), "editor@demo.test", password))
	if q.Get("state") != "state-123" || q.Get("code") == "" {
		t.Fatalf("redirect query = %v", q)
	}
	ctx := context.Background()
	if _, err := conf.Exchange(ctx, q.Get("code"), oauth2.VerifierOption("wrong-verifier-"+verifier)); err == nil {
		t.Fatal("exchange with the wrong code_verifier succeeded")
	}
	tok, err := conf.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if r := s.get(t, "/users/me", tok.AccessToken); r.StatusCode != 200 {
		t.Fatalf("/users/me with the code-flow token = %d", r.StatusCode)
	}
	if _, err := conf.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier)); err == nil {
		t.Fatal("a code was exchanged twice")
	}
}

func TestPublicClientWithoutPKCEIsRefused(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	conf := &oauth2.Config{ClientID: s.PublicID, RedirectURL: s.RedirectURI, Scopes: []string{"openid"},
		Endpoint: oauth2.Endpoint{AuthURL: s.URL + "/oauth/authorize"}}
	r, err := s.http.Get(conf.AuthCodeURL("x"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	login := must(url.Parse(r.Header.Get("Location")))
	page := s.get(t, login.RequestURI(), "")
	if b := string(body(t, page)); page.StatusCode != 400 || !strings.Contains(b, "PKCE") {
		t.Fatalf("login form for a public client without PKCE = %d %s", page.StatusCode, b)
	}
}

func TestCodeFlowConfidentialClientWithBasicAuth(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	conf := &oauth2.Config{ClientID: s.ConfID, ClientSecret: s.ConfSecret, RedirectURL: s.RedirectURI, Scopes: []string{"openid"},
		Endpoint: oauth2.Endpoint{AuthURL: s.URL + "/oauth/authorize", TokenURL: s.URL + "/oauth/token", AuthStyle: oauth2.AuthStyleInHeader}}
	q := s.followToCode(t, s.authorize(t, conf.AuthCodeURL("s"), "editor@demo.test", password))
	tok, err := conf.Exchange(context.Background(), q.Get("code"))
	if err != nil {
		t.Fatal(err)
	}
	if tok.RefreshToken == "" || tok.TokenType != "bearer" {
		t.Fatalf("token = %+v", tok)
	}
	bad := *conf
	bad.ClientSecret = "not-the-secret"
	q = s.followToCode(t, s.authorize(t, conf.AuthCodeURL("s"), "editor@demo.test", password))
	if _, err := bad.Exchange(context.Background(), q.Get("code")); err == nil || !strings.Contains(err.Error(), "invalid_client") {
		t.Fatalf("exchange with a wrong secret: %v", err)
	}
}

func TestOutOfBandCodeFlow(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	authURL := s.URL + "/oauth/authorize?" + url.Values{
		"client_id": {s.ConfID}, "redirect_uri": {"urn:ietf:wg:oauth:2.0:oob"}, "response_type": {"code"}, "scope": {"openid"},
	}.Encode()
	wrong := s.authorize(t, authURL, "editor@demo.test", "wrong password")
	if b := string(body(t, wrong)); wrong.StatusCode != 400 || !strings.Contains(b, `role="alert"`) {
		t.Fatalf("wrong password on the form = %d %s", wrong.StatusCode, b)
	}
	page := s.authorize(t, authURL, "editor@demo.test", password)
	b := string(body(t, page))
	m := codeOnPage.FindStringSubmatch(b)
	if page.StatusCode != 200 || m == nil {
		t.Fatalf("code page = %d %s", page.StatusCode, b)
	}
	// The exchange exactly as the spec lists it: client_id, client_secret,
	// redirect_uri (the OOB URN) and the code, in the form body.
	r := s.form(t, "/oauth/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {s.ConfID},
		"client_secret": {s.ConfSecret}, "redirect_uri": {"urn:ietf:wg:oauth:2.0:oob"}, "code": {m[1]}})
	if tb := body(t, r); r.StatusCode != 200 || !strings.Contains(string(tb), `"token_type":"bearer"`) {
		t.Fatalf("OOB exchange = %d %s", r.StatusCode, tb)
	}
}
