package oauth_test

// The browser helpers of the code-flow tests (authorize_test.go,
// authorize_routes_test.go).

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/pressroom/pressroom/api/oauth"
)

// --- helpers -------------------------------------------------------------------

// browse sends method to path (or an absolute URL) with browser b; a non-nil
// form is posted.
func (s *server) browse(t *testing.T, b *http.Client, method, path string, form url.Values) *http.Response {
	t.Helper()
	u := path
	if !strings.HasPrefix(u, "http") {
		u = s.URL + path
	}
	var req *http.Request
	if form != nil {
		req, _ = http.NewRequest(method, u, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req, _ = http.NewRequest(method, u, nil)
	}
	r, err := b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Body.Close() })
	return r
}

// startAuthorize opens authURL in browser b and returns the id of the
// request from the redirect to the login form.
func (s *server) startAuthorize(t *testing.T, b *http.Client, authURL string) string {
	t.Helper()
	r := s.browse(t, b, http.MethodGet, authURL, nil)
	if r.StatusCode != http.StatusFound {
		t.Fatalf("authorize = %d %s", r.StatusCode, body(t, r))
	}
	login, err := url.Parse(r.Header.Get("Location"))
	if err != nil || login.Path != "/oauth/login" || login.Query().Get("id") == "" {
		t.Fatalf("authorize redirected to %q, want the login form", r.Header.Get("Location"))
	}
	return login.Query().Get("id")
}

var formTokenOnPage = regexp.MustCompile(`<input type="hidden" name="token" value="([A-Za-z0-9_-]+)">`)

// codeOnPage finds the code the out-of-band page shows.
var codeOnPage = regexp.MustCompile(`<code id="code"[^>]*>([A-Za-z0-9_-]+)</code>`)

// loginForm opens the login form of request id in browser b and returns
// the form's token.
func (s *server) loginForm(t *testing.T, b *http.Client, id string) string {
	t.Helper()
	r := s.browse(t, b, http.MethodGet, "/oauth/login?id="+url.QueryEscape(id), nil)
	page := string(body(t, r))
	if r.StatusCode != 200 || !strings.Contains(page, `<label for="password">`) || !strings.Contains(page, `autocomplete="current-password"`) {
		t.Fatalf("login form = %d %s", r.StatusCode, page)
	}
	m := formTokenOnPage.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("login form has no token: %s", page)
	}
	return m[1]
}

// postLogin posts the login form with browser b.
func (s *server) postLogin(t *testing.T, b *http.Client, v url.Values) *http.Response {
	t.Helper()
	return s.browse(t, b, http.MethodPost, "/oauth/login", v)
}

func (s *server) authURL(clientID, redirectURI string, extra url.Values) string {
	v := url.Values{"client_id": {clientID}, "redirect_uri": {redirectURI}, "response_type": {"code"}}
	for k, vs := range extra {
		v[k] = vs
	}
	return s.URL + "/oauth/authorize?" + v.Encode()
}

func pkce(verifier string) url.Values {
	sum := sha256.Sum256([]byte(verifier))
	return url.Values{"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}}
}

// codeOf is the code a login response hands out: from the redirect to the
// client, or from the out-of-band page; "" when there is none.
func (s *server) codeOf(t *testing.T, r *http.Response) string {
	t.Helper()
	if loc := r.Header.Get("Location"); loc != "" {
		u, err := url.Parse(loc)
		if err != nil {
			t.Fatal(err)
		}
		return u.Query().Get("code")
	}
	if m := codeOnPage.FindStringSubmatch(string(body(t, r))); m != nil {
		return m[1]
	}
	return ""
}

// exchange redeems code at the token endpoint with form v and returns the
// status and body.
func (s *server) exchange(t *testing.T, code, redirectURI string, v url.Values) (int, map[string]any) {
	t.Helper()
	f := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI}}
	for k, vs := range v {
		f[k] = vs
	}
	r := s.form(t, "/oauth/token", f)
	m := map[string]any{}
	_ = json.Unmarshal(body(t, r), &m)
	return r.StatusCode, m
}

// assertNotURN fails when r sends the browser to the out-of-band URN.
func assertNotURN(t *testing.T, what string, r *http.Response) {
	t.Helper()
	if loc := r.Header.Get("Location"); strings.HasPrefix(loc, oauth.OOBRedirectURI) {
		t.Errorf("%s: redirects to %q; no browser can follow the out-of-band URN", what, loc)
	}
}

// authorize walks the browser part of the code flow in the server's own
// browser: /oauth/authorize, the login form, the login POST. It returns the
// final response of the login (a redirect toward the client, or the
// out-of-band code page).
func (s *server) authorize(t *testing.T, authURL, username, pass string) *http.Response {
	t.Helper()
	id := s.startAuthorize(t, s.http, authURL)
	token := s.loginForm(t, s.http, id)
	return s.postLogin(t, s.http, url.Values{"id": {id}, "token": {token}, "username": {username}, "password": {pass}})
}

// followToCode follows the redirects after login to the client's redirect URI
// and returns its query.
func (s *server) followToCode(t *testing.T, r *http.Response) url.Values {
	t.Helper()
	for i := 0; i < 3 && r.StatusCode == http.StatusFound; i++ {
		loc, err := url.Parse(r.Header.Get("Location"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(loc.String(), s.RedirectURI) {
			return loc.Query()
		}
		if !loc.IsAbs() {
			loc = must(url.Parse(s.URL)).ResolveReference(loc)
		}
		r, err = s.http.Get(loc.String())
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
	}
	t.Fatalf("never redirected to %s: %d %s", s.RedirectURI, r.StatusCode, body(t, r))
	return nil
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
