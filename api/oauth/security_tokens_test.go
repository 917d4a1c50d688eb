package oauth_test

// Security properties of the provider (security_test.go): the token
// endpoint's error answers and introspection.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/auth"
	"github.com/pressroom/pressroom/models"
)

// --- token endpoint errors ----------------------------------------------------

type secTokenCase struct {
	name        string
	path        string // default /oauth/token
	contentType string // default form
	body        string
	basic       string // Authorization header value
	status      int
	code        string
}

// secTokenRequest posts raw to a token endpoint and checks the RFC 6749 §5
// shape of the answer; it returns the decoded body.
func secTokenRequest(t *testing.T, s *server, c secTokenCase) (map[string]any, *http.Response) {
	t.Helper()
	path, ct := c.path, c.contentType
	if path == "" {
		path = "/oauth/token"
	}
	if ct == "" {
		ct = "application/x-www-form-urlencoded"
	}
	req, _ := http.NewRequest(http.MethodPost, s.URL+path, strings.NewReader(c.body))
	req.Header.Set("Content-Type", ct)
	if c.basic != "" {
		req.Header.Set("Authorization", c.basic)
	}
	r, err := s.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b := body(t, r)
	if r.StatusCode != c.status {
		t.Errorf("%s: status %d, want %d: %s", c.name, r.StatusCode, c.status, b)
	}
	for h, want := range map[string]string{"Content-Type": "application/json;charset=UTF-8", "Cache-Control": "no-store", "Pragma": "no-cache"} {
		if got := r.Header.Get(h); got != want {
			t.Errorf("%s: %s = %q, want %q", c.name, h, got, want)
		}
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Errorf("%s: body is not JSON: %s", c.name, b)
	}
	if c.code != "" && m["error"] != c.code {
		t.Errorf("%s: error = %v, want %q: %s", c.name, m["error"], c.code, b)
	}
	return m, r
}

func secBasic(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
}

func TestTokenEndpointErrors(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	pw := func(user, pass string) string {
		return url.Values{"grant_type": {"password"}, "username": {user}, "password": {pass}}.Encode()
	}
	wrong, _ := secTokenRequest(t, s, secTokenCase{name: "wrong password", body: pw("editor@demo.test", "not the password"), status: 400, code: "invalid_grant"})
	unknown, _ := secTokenRequest(t, s, secTokenCase{name: "unknown user", body: pw("nobody@demo.test", "not the password"), status: 400, code: "invalid_grant"})
	if wrong["error_description"] == nil || wrong["error_description"] != unknown["error_description"] {
		t.Errorf("unknown user and wrong password must answer alike: %v vs %v", unknown["error_description"], wrong["error_description"])
	}

	for _, c := range []secTokenCase{
		{name: "missing grant_type", body: "username=editor%40demo.test&password=x", status: 400, code: "invalid_request"},
		// A sign-in client is no integration client (docs/auth.md, "Integration tokens"): RFC 6749 §5.2.
		{name: "client_credentials grant of a sign-in client", body: "grant_type=client_credentials", basic: secBasic(s.ConfID, s.ConfSecret), status: 400, code: "unauthorized_client"},
		{name: "unknown grant", body: "grant_type=urn%3Aexample%3Anothing", status: 400, code: "unsupported_grant_type"},
		{name: "refresh grant on token.json", path: "/oauth/token.json", body: "grant_type=refresh_token&refresh_token=abc", status: 400, code: "unsupported_grant_type"},
		{name: "code grant on token.json", path: "/oauth/token.json", body: "grant_type=authorization_code&code=abc&redirect_uri=x", status: 400, code: "unsupported_grant_type"},
		{name: "JSON body", contentType: "application/json",
			body: `{"grant_type":"password","username":"editor@demo.test","password":"` + password + `"}`, status: 400, code: "invalid_request"},
		{name: "JSON body on token.json", path: "/oauth/token.json", contentType: "application/json",
			body: `{"grant_type":"password","username":"editor@demo.test","password":"` + password + `"}`, status: 400, code: "invalid_request"},
		{name: "no body", body: "", status: 400, code: "invalid_request"},
		{name: "repeated username", body: pw("editor@demo.test", password) + "&username=editor%40other.test", status: 400, code: "invalid_request"},
		{name: "repeated grant_type", body: pw("editor@demo.test", password) + "&grant_type=password", status: 400, code: "invalid_request"},
		{name: "missing password", body: "grant_type=password&username=editor%40demo.test", status: 400, code: "invalid_request"},
		{name: "wrong secret in Basic", body: pw("editor@demo.test", password), basic: secBasic(s.ConfID, "wrong-secret"), status: 401, code: "invalid_client"},
		{name: "unknown client in Basic", body: pw("editor@demo.test", password), basic: secBasic("no-such-client", "x"), status: 401, code: "invalid_client"},
		{name: "malformed Basic", body: pw("editor@demo.test", password), basic: "Basic !!!not-base64", status: 401, code: "invalid_client"},
		{name: "Basic plus client_secret in the body", body: pw("editor@demo.test", password) + "&client_secret=" + url.QueryEscape(s.ConfSecret),
			basic: secBasic(s.ConfID, s.ConfSecret), status: 400, code: "invalid_request"},
		{name: "Basic plus another client_id in the body", body: pw("editor@demo.test", password) + "&client_id=" + url.QueryEscape(s.PublicID),
			basic: secBasic(s.ConfID, s.ConfSecret), status: 400, code: "invalid_request"},
		{name: "Bearer scheme on the token endpoint", body: pw("editor@demo.test", password), basic: "Bearer abc", status: 400, code: "invalid_request"},
		{name: "public client with a secret", body: pw("editor@demo.test", password) + "&client_id=" + url.QueryEscape(s.PublicID) + "&client_secret=x",
			status: 401, code: "invalid_client"},
	} {
		_, r := secTokenRequest(t, s, c)
		if c.status == 401 && c.basic != "" {
			if www := r.Header.Get("WWW-Authenticate"); !strings.HasPrefix(www, "Basic") {
				t.Errorf("%s: WWW-Authenticate = %q, want a Basic challenge (RFC 6749 §5.2)", c.name, www)
			}
		}
	}

	// A wrong secret in the body is invalid_client too (no Basic challenge needed).
	secTokenRequest(t, s, secTokenCase{name: "wrong secret in the body",
		body: pw("editor@demo.test", password) + "&client_id=" + url.QueryEscape(s.ConfID) + "&client_secret=wrong", status: 401, code: "invalid_client"})
}

func TestTokenEndpointBasicAuthIsFormURLEncoded(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	ctx := context.Background()
	grant := url.Values{"grant_type": {"password"}, "username": {"editor@demo.test"}, "password": {password}}.Encode()

	// The harness's client id and secret are URL-safe base64: escaping them changes nothing.
	if url.QueryEscape(s.ConfID) != s.ConfID || url.QueryEscape(s.ConfSecret) != s.ConfSecret {
		t.Fatalf("the harness's credentials need escaping: %q %q", s.ConfID, s.ConfSecret)
	}
	plain := "Basic " + base64.StdEncoding.EncodeToString([]byte(s.ConfID+":"+s.ConfSecret))
	secTokenRequest(t, s, secTokenCase{name: "plain credentials in Basic", body: grant, basic: plain, status: 200})

	// A client whose id and secret need escaping (RFC 6749 §2.3.1).
	const id, secret = "svc:client+1%", "s3:cr+et%20 with/odd=chars&%"
	hash, err := auth.HashPassword(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := models.CreateOAuthClient(ctx, s.DB, &models.OAuthClient{ID: id, Name: "Odd", Confidential: true, SecretHash: &hash}); err != nil {
		t.Fatal(err)
	}
	secTokenRequest(t, s, secTokenCase{name: "escaped credentials in Basic", body: grant, basic: secBasic(id, secret), status: 200})
	secTokenRequest(t, s, secTokenCase{name: "unescaped credentials in Basic",
		body: grant, basic: "Basic " + base64.StdEncoding.EncodeToString([]byte(id+":"+secret)), status: 401, code: "invalid_client"})
	secTokenRequest(t, s, secTokenCase{name: "escaped credentials in the body",
		body: grant + "&" + url.Values{"client_id": {id}, "client_secret": {secret}}.Encode(), status: 200})

	// And through golang.org/x/oauth2, which escapes as the RFC asks.
	conf := &oauth2.Config{ClientID: id, ClientSecret: secret,
		Endpoint: oauth2.Endpoint{TokenURL: s.URL + "/oauth/token", AuthStyle: oauth2.AuthStyleInHeader}}
	tok, err := conf.PasswordCredentialsToken(ctx, "editor@demo.test", password)
	if err != nil {
		t.Fatalf("oauth2 client with Basic: %v", err)
	}
	if c := oauth.JWTPart(t, tok.AccessToken, 1); c["client_id"] != id {
		t.Errorf("token issued to %v, want %q", c["client_id"], id)
	}
}

// --- introspection ----------------------------------------------------------------

type secIntrospection struct {
	Active   bool   `json:"active"`
	Subject  string `json:"sub"`
	ClientID string `json:"client_id"`
	SiteID   string `json:"site_id"`
}

func secIntrospect(t *testing.T, s *server, authorization, token string) (int, secIntrospection, []byte) {
	t.Helper()
	r := s.form(t, "/oauth/introspect", url.Values{"token": {token}}, "Authorization", authorization)
	b := body(t, r)
	var out secIntrospection
	if r.StatusCode == 200 {
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("introspection body %s: %v", b, err)
		}
	}
	return r.StatusCode, out, b
}

func TestIntrospection(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	basic := secBasic(s.ConfID, s.ConfSecret)
	tok := secConfToken(t, s)

	status, got, b := secIntrospect(t, s, basic, tok.AccessToken)
	if status != 200 || !got.Active || got.Subject != s.Editor.ID.String() || got.ClientID != s.ConfID {
		t.Fatalf("introspection of a live token = %d %s", status, b)
	}
	// Client authentication is required.
	if status, _, b := secIntrospect(t, s, secBasic(s.ConfID, "wrong"), tok.AccessToken); status != 401 {
		t.Errorf("introspection with a wrong secret = %d %s, want 401", status, b)
	}
	r := s.form(t, "/oauth/introspect", url.Values{"token": {tok.AccessToken}})
	if b := body(t, r); r.StatusCode != 401 {
		t.Errorf("introspection without client authentication = %d %s, want 401", r.StatusCode, b)
	}
	// Garbage is inactive, not an error.
	if status, got, b := secIntrospect(t, s, basic, "garbage"); status != 200 || got.Active {
		t.Errorf("introspection of garbage = %d %s, want active false", status, b)
	}

	rv := s.form(t, "/oauth/revoke", url.Values{"token": {tok.AccessToken}, "token_type_hint": {"access_token"}}, "Authorization", basic)
	if b := body(t, rv); rv.StatusCode != 200 {
		t.Fatalf("revoke = %d %s", rv.StatusCode, b)
	}
	secAssertInvalidToken(t, "revoked token", s.get(t, "/users/me", tok.AccessToken))
	status, got, b = secIntrospect(t, s, basic, tok.AccessToken)
	if status != 200 || got.Active {
		t.Errorf("BUG: introspection of a REVOKED access token = %d %s, want {\"active\":false} (RFC 7662 §2.2). "+
			"Store.SetIntrospectionFromToken (store.go) returns nil for an inactive token, and op.Introspect sets "+
			"Active = true whenever that method returns no error; it must return an error for inactive tokens.", status, b)
	}
}

func TestIntrospectionOfDeletedUsersToken(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	basic := secBasic(s.ConfID, s.ConfSecret)
	tok := secConfToken(t, s)
	if _, err := s.DB.ExecContext(context.Background(), "DELETE FROM users WHERE id = ?", s.Editor.ID); err != nil {
		t.Fatal(err)
	}
	if status, got, b := secIntrospect(t, s, basic, tok.AccessToken); status != 200 || got.Active {
		t.Errorf("BUG: introspection of a deleted user's token = %d %s, want {\"active\":false} "+
			"(same cause as TestIntrospection: SetIntrospectionFromToken returns nil for inactive tokens)", status, b)
	}
}
