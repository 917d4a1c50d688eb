package oauth_test

// The browser part of the code flow: the default scope, error pages for the
// out-of-band URI, the binding of a request to the browser that started it
// (a sign-in link is useless in any other browser), code-once, the login
// form's CSRF token, which op routes and methods are served at all, and the
// whole flow through golang.org/x/oauth2 (PKCE, Basic auth, out-of-band).
//
// Two parties are two *http.Client values with separate cookie jars
// (newBrowser): the server's own s.http is the victim's browser.

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/config"
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

// --- 1. scope and the out-of-band URI ---------------------------------------------

// The specification's flow sends no scope; the request gets the default.
func TestAuthorizeWithoutScope(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	for _, redirect := range []string{oauth.OOBRedirectURI, s.RedirectURI} {
		r := s.authorize(t, s.authURL(s.ConfID, redirect, url.Values{"state": {"st"}}), "editor@demo.test", password)
		assertNotURN(t, "authorize without scope", r)
		code := s.codeOf(t, r)
		if code == "" {
			t.Fatalf("%s: no code without a scope: %d %s", redirect, r.StatusCode, r.Header.Get("Location"))
		}
		status, m := s.exchange(t, code, redirect, url.Values{"client_id": {s.ConfID}, "client_secret": {s.ConfSecret}})
		if status != 200 || m["access_token"] == nil {
			t.Fatalf("%s: exchange = %d %v", redirect, status, m)
		}
		if m["scope"] != oauth.DefaultScope {
			t.Errorf("%s: scope = %v, want the default %q", redirect, m["scope"], oauth.DefaultScope)
		}
	}
}

func TestAuthorizeErrorsForOOBArePages(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	for name, extra := range map[string]url.Values{
		"unsupported response_type": {"response_type": {"token"}},
		"no response_type":          {"response_type": {""}},
		"request object":            {"request": {"eyJhbGciOiJub25lIn0.e30."}},
		"repeated parameter":        {"state": {"a", "b"}},
		"bad prompt":                {"prompt": {"none login"}},
	} {
		for _, redirect := range []string{oauth.OOBRedirectURI, s.RedirectURI} {
			r := s.browse(t, s.http, http.MethodGet, s.authURL(s.ConfID, redirect, extra), nil)
			b := string(body(t, r))
			assertNotURN(t, name, r)
			switch {
			case redirect == oauth.OOBRedirectURI || name == "repeated parameter":
				if r.StatusCode != 400 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") || !strings.Contains(b, `role="alert"`) {
					t.Errorf("%s, %s: %d %q %s, want a 400 HTML page", name, redirect, r.StatusCode, r.Header.Get("Content-Type"), b)
				}
			default: // RFC 6749 §4.1.2.1: the error goes back to a redirect URI a browser can follow
				loc, _ := url.Parse(r.Header.Get("Location"))
				if r.StatusCode != 302 || loc == nil || !strings.HasPrefix(loc.String(), s.RedirectURI) || loc.Query().Get("error") == "" {
					t.Errorf("%s, %s: %d to %q, want a redirect to the client with error", name, redirect, r.StatusCode, r.Header.Get("Location"))
				}
			}
		}
	}
	// What cannot be trusted to redirect anywhere is a page too.
	for name, u := range map[string]string{
		"unknown client":            s.authURL("no-such-client", oauth.OOBRedirectURI, nil),
		"unregistered redirect_uri": s.authURL(s.ConfID, "https://evil.example/cb", nil),
		"double-escaped redirect":   s.authURL(s.ConfID, url.QueryEscape(s.RedirectURI), nil),
		"no client_id":              s.URL + "/oauth/authorize?redirect_uri=" + url.QueryEscape(oauth.OOBRedirectURI) + "&response_type=code",
		"no redirect_uri":           s.URL + "/oauth/authorize?client_id=" + url.QueryEscape(s.ConfID) + "&response_type=code",
	} {
		r := s.browse(t, s.http, http.MethodGet, u, nil)
		if b := body(t, r); r.StatusCode != 400 || r.Header.Get("Location") != "" || !strings.Contains(string(b), `role="alert"`) {
			t.Errorf("%s: %d to %q %s, want a 400 page", name, r.StatusCode, r.Header.Get("Location"), b)
		}
	}
}

// --- 2. the browser binding ----------------------------------------------------------

func TestAuthorizeSetsBindingCookie(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, publicURL, cookie string
		secure                  bool
	}{
		{"http", "", "pressroom-oauth", false},
		{"https", "https://pressroom.test", "__Host-pressroom-oauth", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newServer(t, func(cfg *config.Config) {
				if c.publicURL != "" {
					cfg.PublicURL = c.publicURL
				}
			})
			r := s.browse(t, newBrowser(), http.MethodGet, s.authURL(s.ConfID, oauth.OOBRedirectURI, nil), nil)
			if r.StatusCode != 302 {
				t.Fatalf("authorize = %d %s", r.StatusCode, body(t, r))
			}
			var got *http.Cookie
			for _, ck := range r.Cookies() {
				if ck.Name == c.cookie {
					got = ck
				}
			}
			if got == nil {
				t.Fatalf("no %s cookie in %q", c.cookie, r.Header.Values("Set-Cookie"))
			}
			raw, err := base64.RawURLEncoding.DecodeString(got.Value)
			if err != nil || len(raw) != 32 {
				t.Errorf("cookie value %q is not 32 random bytes", got.Value)
			}
			if !got.HttpOnly || got.SameSite != http.SameSiteLaxMode || got.Path != "/" || got.Secure != c.secure || got.Domain != "" || got.MaxAge != 600 {
				t.Errorf("cookie %s: HttpOnly %v SameSite %v Path %q Secure %v Domain %q Max-Age %d; want HttpOnly, Lax, /, Secure %v, no Domain, 600",
					got.Name, got.HttpOnly, got.SameSite, got.Path, got.Secure, got.Domain, got.MaxAge, c.secure)
			}
			// Only its hash is stored.
			var stored string
			if err := s.DB.NewSelect().Table("oauth_auth_requests").Column("browser_hash").Limit(1).Scan(context.Background(), &stored); err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256([]byte(got.Value))
			if stored != hex.EncodeToString(sum[:]) {
				t.Errorf("browser_hash = %q, want the SHA-256 of the cookie", stored)
			}
		})
	}
}

// The attack of issue 12: an attacker starts the flow for the first-party
// public client with their own PKCE challenge and sends the sign-in link to
// a victim. Whatever the victim does with it, the attacker gets no code.
func TestSignInLinkSentToAnotherBrowserGivesNoCode(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	ctx := context.Background()
	attacker, victim := newBrowser(), newBrowser()
	const verifier = "attacker-verifier-0123456789-0123456789-0123456789"
	// The victim's browser has a binding cookie of its own (an earlier sign-in
	// it started): a valid cookie, just not the attacker's.
	s.startAuthorize(t, victim, s.authURL(s.ConfID, oauth.OOBRedirectURI, nil))

	for _, target := range []struct{ client, redirect string }{
		{oauth.FirstPartyClientID, oauth.OOBRedirectURI}, // the client of the issue
		{s.PublicID, s.RedirectURI},
	} {
		id := s.startAuthorize(t, attacker, s.authURL(target.client, target.redirect, pkce(verifier)))
		link := "/oauth/login?id=" + url.QueryEscape(id)
		attackerToken := s.loginForm(t, attacker, id) // the attacker's own form works for the attacker

		// The victim opens the link: no form, nothing to sign in to.
		r := s.browse(t, victim, http.MethodGet, link, nil)
		if b := string(body(t, r)); r.StatusCode != http.StatusForbidden || strings.Contains(b, `name="password"`) {
			t.Errorf("%s: the victim opening the attacker's link = %d %s, want 403 without a form", target.client, r.StatusCode, b)
		}
		// The victim signs in anyway (a form the attacker built, with the
		// attacker's token, or none): refused before the password is checked.
		for _, token := range []string{attackerToken, ""} {
			r = s.postLogin(t, victim, url.Values{"id": {id}, "token": {token}, "username": {"editor@demo.test"}, "password": {password}})
			if code := s.codeOf(t, r); r.StatusCode != http.StatusForbidden || code != "" {
				t.Errorf("%s: the victim's sign-in on the attacker's request = %d (code %q), want 403 and no code", target.client, r.StatusCode, code)
			}
		}
		// op's callback is not served: knowing the id gets nothing.
		r = s.browse(t, attacker, http.MethodGet, "/oauth/authorize/callback?id="+url.QueryEscape(id), nil)
		if loc := r.Header.Get("Location"); r.StatusCode != http.StatusNotFound || strings.Contains(loc, "code=") {
			t.Errorf("%s: the attacker calling the callback = %d to %q, want 404", target.client, r.StatusCode, loc)
		}
		if code := s.codeOf(t, r); code != "" {
			if status, m := s.exchange(t, code, target.redirect, url.Values{"client_id": {target.client}, "code_verifier": {verifier}}); status == 200 {
				t.Errorf("%s: the attacker exchanged the callback's code for the victim's tokens: %v", target.client, m)
			}
		}
		// Nothing was completed or issued for the request.
		var completed, coded bool
		if err := s.DB.NewSelect().Table("oauth_auth_requests").ColumnExpr("user_id IS NOT NULL, code_hash IS NOT NULL").
			Where("id = ?", id).Scan(ctx, &completed, &coded); err != nil {
			t.Fatal(err)
		}
		if completed || coded {
			t.Errorf("%s: the attacker's request was completed (%v) or got a code (%v)", target.client, completed, coded)
		}
	}
	var tokens int
	if err := s.DB.NewSelect().Table("oauth_access_tokens").ColumnExpr("count(*)").Where("user_id = ?", s.Editor.ID).Scan(ctx, &tokens); err != nil || tokens != 0 {
		t.Errorf("access tokens of the victim: %d (%v), want 0", tokens, err)
	}

	// The victim's own flow in the victim's browser still works.
	v := url.Values{"state": {"mine"}}
	for k, vs := range pkce(verifier + "-victim") {
		v[k] = vs
	}
	id := s.startAuthorize(t, victim, s.authURL(oauth.FirstPartyClientID, oauth.OOBRedirectURI, v))
	r := s.postLogin(t, victim, url.Values{"id": {id}, "token": {s.loginForm(t, victim, id)}, "username": {"editor@demo.test"}, "password": {password}})
	code := s.codeOf(t, r)
	if code == "" {
		t.Fatalf("the victim's own sign-in = %d, no code", r.StatusCode)
	}
	// The attacker, who saw nothing, cannot get the code now either.
	r = s.browse(t, attacker, http.MethodGet, "/oauth/authorize/callback?id="+url.QueryEscape(id), nil)
	if c := s.codeOf(t, r); c != "" {
		t.Errorf("the attacker got a code for the victim's request from the callback")
	}
	if status, m := s.exchange(t, code, oauth.OOBRedirectURI, url.Values{"client_id": {oauth.FirstPartyClientID}, "code_verifier": {verifier + "-victim"}}); status != 200 {
		t.Errorf("the victim's exchange = %d %v", status, m)
	}
}

// The victim's normal flows, in one browser: with and without PKCE, with a
// redirect URI and out of band; and two sign-ins in two tabs at once.
func TestCodeFlowInOneBrowser(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	const verifier = "victim-verifier-0123456789-0123456789-0123456789"
	for _, c := range []struct {
		name, client, redirect string
		pkce                   bool
	}{
		{"public, PKCE, redirect", s.PublicID, s.RedirectURI, true},
		{"public, PKCE, OOB", s.PublicID, oauth.OOBRedirectURI, true},
		{"first-party, PKCE, OOB", oauth.FirstPartyClientID, oauth.OOBRedirectURI, true},
		{"confidential, no PKCE, redirect", s.ConfID, s.RedirectURI, false},
		{"confidential, no PKCE, OOB", s.ConfID, oauth.OOBRedirectURI, false},
		{"confidential, PKCE, OOB", s.ConfID, oauth.OOBRedirectURI, true},
	} {
		extra, creds := url.Values{"state": {"s1"}}, url.Values{"client_id": {c.client}}
		if c.pkce {
			extra = pkce(verifier)
			extra.Set("state", "s1")
			creds.Set("code_verifier", verifier)
		}
		if c.client == s.ConfID {
			creds.Set("client_secret", s.ConfSecret)
		}
		r := s.authorize(t, s.authURL(c.client, c.redirect, extra), "editor@demo.test", password)
		assertNotURN(t, c.name, r)
		if c.redirect != oauth.OOBRedirectURI {
			if q := s.followToCode(t, r); q.Get("state") != "s1" {
				t.Errorf("%s: state = %q", c.name, q.Get("state"))
			}
		}
		code := s.codeOf(t, r)
		if code == "" {
			t.Fatalf("%s: no code: %d", c.name, r.StatusCode)
		}
		if status, m := s.exchange(t, code, c.redirect, creds); status != 200 {
			t.Errorf("%s: exchange = %d %v", c.name, status, m)
		}
	}

	// Two tabs: both requests are bound to the one browser and both complete.
	a := s.startAuthorize(t, s.http, s.authURL(s.ConfID, oauth.OOBRedirectURI, nil))
	b := s.startAuthorize(t, s.http, s.authURL(s.ConfID, oauth.OOBRedirectURI, nil))
	ta, tb := s.loginForm(t, s.http, a), s.loginForm(t, s.http, b)
	for id, token := range map[string]string{a: ta, b: tb} {
		r := s.postLogin(t, s.http, url.Values{"id": {id}, "token": {token}, "username": {"editor@demo.test"}, "password": {password}})
		if s.codeOf(t, r) == "" {
			t.Errorf("tab %s: no code (%d)", id, r.StatusCode)
		}
	}
	// A token belongs to its request.
	if ta == tb {
		t.Error("two requests got the same form token")
	}
}

// A request hands out one code, once: a replayed login and op's callback
// get nothing, and the code issued stays the one that works.
func TestCodeIssuedOnce(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	for _, redirect := range []string{s.RedirectURI, oauth.OOBRedirectURI} {
		id := s.startAuthorize(t, s.http, s.authURL(s.ConfID, redirect, url.Values{"state": {"x"}}))
		login := url.Values{"id": {id}, "token": {s.loginForm(t, s.http, id)}, "username": {"editor@demo.test"}, "password": {password}}
		code := s.codeOf(t, s.postLogin(t, s.http, login))
		if code == "" {
			t.Fatalf("%s: first login gave no code", redirect)
		}
		r := s.postLogin(t, s.http, login)
		if again := s.codeOf(t, r); r.StatusCode != 400 || again != "" {
			t.Errorf("%s: replayed login = %d code %q, want 400 and no code", redirect, r.StatusCode, again)
		}
		r = s.browse(t, s.http, http.MethodGet, "/oauth/authorize/callback?id="+url.QueryEscape(id), nil)
		if again := s.codeOf(t, r); r.StatusCode != 404 || again != "" {
			t.Errorf("%s: callback after the login = %d code %q, want 404 and no code", redirect, r.StatusCode, again)
		}
		if r := s.browse(t, s.http, http.MethodGet, "/oauth/login?id="+url.QueryEscape(id), nil); r.StatusCode != 400 {
			t.Errorf("%s: login form of a completed request = %d, want 400", redirect, r.StatusCode)
		}
		if status, m := s.exchange(t, code, redirect, url.Values{"client_id": {s.ConfID}, "client_secret": {s.ConfSecret}}); status != 200 {
			t.Errorf("%s: the first code after the replays = %d %v", redirect, status, m)
		}
	}
}

// The login form's token: a post without it, with a wrong one, or with the
// token of another request is refused before the password is checked.
func TestLoginFormCSRFToken(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	id := s.startAuthorize(t, s.http, s.authURL(s.ConfID, oauth.OOBRedirectURI, nil))
	token := s.loginForm(t, s.http, id)
	other := s.startAuthorize(t, s.http, s.authURL(s.ConfID, oauth.OOBRedirectURI, nil))
	otherToken := s.loginForm(t, s.http, other)
	for name, tok := range map[string]string{"no token": "", "wrong token": strings.Repeat("A", len(token)), "another request's token": otherToken} {
		r := s.postLogin(t, s.http, url.Values{"id": {id}, "token": {tok}, "username": {"editor@demo.test"}, "password": {password}})
		if code := s.codeOf(t, r); r.StatusCode != http.StatusForbidden || code != "" {
			t.Errorf("%s: %d code %q, want 403", name, r.StatusCode, code)
		}
	}
	// Refused posts are no password attempts: the throttle has nothing.
	var failures int
	if err := s.DB.NewSelect().Table("oauth_login_failures").ColumnExpr("count(*)").Scan(context.Background(), &failures); err != nil || failures != 0 {
		t.Errorf("login failures recorded: %d (%v), want 0", failures, err)
	}
	r := s.postLogin(t, s.http, url.Values{"id": {id}, "token": {token}, "username": {"editor@demo.test"}, "password": {password}})
	if s.codeOf(t, r) == "" {
		t.Errorf("with the right token: %d, no code", r.StatusCode)
	}
}

// --- 3. routes ---------------------------------------------------------------------

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

// --- 4. the whole flow through an OAuth 2 client ------------------------------------

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

var codeOnPage = regexp.MustCompile(`<code id="code"[^>]*>([A-Za-z0-9_-]+)</code>`)

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
