package oauth_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

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
