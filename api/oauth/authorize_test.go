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
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/config"
)

// --- scope and the out-of-band URI ---------------------------------------------

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

// --- the browser binding ----------------------------------------------------------

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
	// Refused posts are no password attempts: the throttle has nothing
	// (but the count of /oauth/authorize requests from the address).
	var failures int
	if err := s.DB.NewSelect().Table("oauth_login_failures").ColumnExpr("count(*)").Where("key NOT LIKE 'authorize-addr:%'").
		Scan(context.Background(), &failures); err != nil || failures != 0 {
		t.Errorf("login failures recorded: %d (%v), want 0", failures, err)
	}
	r := s.postLogin(t, s.http, url.Values{"id": {id}, "token": {token}, "username": {"editor@demo.test"}, "password": {password}})
	if s.codeOf(t, r) == "" {
		t.Errorf("with the right token: %d, no code", r.StatusCode)
	}
}
