package oauth_test

// Security properties of the provider seen from outside: bearer
// verification through the API, the token endpoint's error answers, the
// sign-in throttle, site isolation, discovery, the JWKS across a key
// rotation, and introspection. Every test runs its own server and database.
//
// Helpers here are prefixed with sec so they cannot collide with the helpers
// of the other test files of this package.

import (
	"bytes"
	"context"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"golang.org/x/oauth2"

	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/auth"
	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/testsupport"
)

// --- helpers -------------------------------------------------------------------

// secIssue runs the password grant for username with the extra form
// values (client credentials) and returns the token response.
func secIssue(t *testing.T, s *server, username string, extra url.Values) oauth.TokenResponse {
	t.Helper()
	v := url.Values{"grant_type": {"password"}, "username": {username}, "password": {password}}
	for k, vs := range extra {
		v[k] = vs
	}
	r := s.form(t, "/oauth/token", v)
	b := body(t, r)
	if r.StatusCode != 200 {
		t.Fatalf("password grant for %s = %d %s", username, r.StatusCode, b)
	}
	var tok oauth.TokenResponse
	if err := json.Unmarshal(b, &tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token response %s: %v", b, err)
	}
	return tok
}

// secConfToken issues a token for editor@demo.test to the confidential client.
func secConfToken(t *testing.T, s *server) oauth.TokenResponse {
	t.Helper()
	return secIssue(t, s, "editor@demo.test", url.Values{"client_id": {s.ConfID}, "client_secret": {s.ConfSecret}})
}

func secKid(t testing.TB, tok string) string {
	t.Helper()
	kid, _ := oauth.JWTPart(t, tok, 0)["kid"].(string)
	if kid == "" {
		t.Fatalf("token has no kid: %v", oauth.JWTPart(t, tok, 0))
	}
	return kid
}

// secRequest sends method path with an Authorization header as given (none when empty).
func secRequest(t *testing.T, s *server, method, path, authorization string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/vnd.api+json")
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	r, err := s.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Body.Close() })
	return r
}

// secAssertInvalidToken checks a 401 of a bearer-protected route: a JSON:API
// error document and a Bearer challenge with error="invalid_token".
func secAssertInvalidToken(t *testing.T, name string, r *http.Response) {
	t.Helper()
	b := body(t, r)
	if r.StatusCode != http.StatusUnauthorized {
		t.Errorf("%s: status %d, want 401: %s", name, r.StatusCode, b)
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/vnd.api+json") {
		t.Errorf("%s: Content-Type %q", name, ct)
	}
	www := r.Header.Get("WWW-Authenticate")
	if !strings.Contains(www, "Bearer") || !strings.Contains(www, `error="invalid_token"`) {
		t.Errorf("%s: WWW-Authenticate = %q", name, www)
	}
	testsupport.ValidateJSONAPI(t, b)
	var doc struct {
		Errors []struct{ Status, Code string }
	}
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Errors) != 1 || doc.Errors[0].Status != "401" {
		t.Errorf("%s: error document %s", name, b)
	}
}

// secClaims are access-token claims in op's shape.
type secClaims struct {
	jwt.Claims
	SiteID   string `json:"site_id,omitempty"`
	ClientID string `json:"client_id,omitempty"`
}

// secClaimsOf returns the claims of a real token, to be altered and re-signed.
func secClaimsOf(t *testing.T, s *server, tok string) secClaims {
	t.Helper()
	c := oauth.JWTPart(t, tok, 1)
	jti, _ := c["jti"].(string)
	client, _ := c["client_id"].(string)
	if jti == "" {
		t.Fatalf("token has no jti: %v", c)
	}
	now := time.Now()
	return secClaims{
		Claims: jwt.Claims{Issuer: s.URL, Subject: s.Editor.ID.String(), Audience: jwt.Audience{s.URL, client},
			ID: jti, IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(time.Hour))},
		SiteID: s.Site.ID.String(), ClientID: client,
	}
}

// --- 1. bearer verification through the API -----------------------------------

func TestBearerVerificationRejectsBadTokens(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	tok := secIssue(t, s, "editor@demo.test", nil)
	kid := secKid(t, tok.AccessToken)
	real := oauth.StolenKey(t, s.DB, kid)
	base := secClaimsOf(t, s, tok.AccessToken)

	// The crafting itself is right: the same claims signed with the real key pass.
	if r := s.get(t, "/users/me", oauth.SignJWS(t, jose.RS256, real, kid, base)); r.StatusCode != 200 {
		t.Fatalf("a token crafted with the real key and right claims = %d %s; the negative cases below prove nothing", r.StatusCode, body(t, r))
	}

	other := oauth.OtherKey(t)
	wrongAud := base
	wrongAud.Audience = jwt.Audience{"https://elsewhere.example", "pressroom"}
	clientOnlyAud := base
	clientOnlyAud.Audience = jwt.Audience{base.ClientID}
	expired := base
	expired.IssuedAt = jwt.NewNumericDate(time.Now().Add(-3 * time.Hour))
	expired.NotBefore = expired.IssuedAt
	expired.Expiry = jwt.NewNumericDate(time.Now().Add(-time.Minute)) // well past the 5 s leeway
	wrongIss := base
	wrongIss.Issuer = "https://evil.example"
	noJTIRow := base
	noJTIRow.ID = "6f1c2a47-0000-4000-8000-000000000000"
	otherSite := base
	otherSite.SiteID = s.Other.ID.String()
	pubPEM, pubPKCS1 := oauth.PublicPEMs(&real.PublicKey)

	cases := []struct{ name, authorization string }{
		{"no Authorization header", ""},
		{"Basic scheme", "Basic " + base64.StdEncoding.EncodeToString([]byte("editor@demo.test:"+password))},
		{"Bearer with no token", "Bearer "},
		{"garbage token", "Bearer not.a.jwt"},
		{"random bytes", "Bearer " + base64.RawURLEncoding.EncodeToString([]byte("garbage garbage garbage"))},
		{"token with its signature cut off", "Bearer " + tok.AccessToken[:strings.LastIndex(tok.AccessToken, ".")+1]},
		{"refresh token as bearer", "Bearer " + tok.RefreshToken},
		{"forged signature under the real kid", "Bearer " + oauth.SignJWS(t, jose.RS256, other, kid, base)},
		{"unknown kid", "Bearer " + oauth.SignJWS(t, jose.RS256, other, "no-such-key", base)},
		{"real key, wrong audience", "Bearer " + oauth.SignJWS(t, jose.RS256, real, kid, wrongAud)},
		{"real key, audience only the client", "Bearer " + oauth.SignJWS(t, jose.RS256, real, kid, clientOnlyAud)},
		{"real key, expired", "Bearer " + oauth.SignJWS(t, jose.RS256, real, kid, expired)},
		{"real key, wrong issuer", "Bearer " + oauth.SignJWS(t, jose.RS256, real, kid, wrongIss)},
		{"real key, jti with no token record", "Bearer " + oauth.SignJWS(t, jose.RS256, real, kid, noJTIRow)},
		{"real key, site_id of another site", "Bearer " + oauth.SignJWS(t, jose.RS256, real, kid, otherSite)},
		{"alg none", "Bearer " + oauth.Unsigned(t, kid, base)},
		{"HS256 keyed with the public key (PKIX PEM)", "Bearer " + oauth.SignJWS(t, jose.HS256, pubPEM, kid, base)},
		{"HS256 keyed with the public key (PKCS1 PEM)", "Bearer " + oauth.SignJWS(t, jose.HS256, pubPKCS1, kid, base)},
		{"oversized token", "Bearer " + strings.Repeat("a", 9000)},
	}
	for _, c := range cases {
		secAssertInvalidToken(t, c.name, secRequest(t, s, http.MethodGet, "/users/me", c.authorization))
	}
	// The real token was untouched by all of that.
	if r := s.get(t, "/users/me", tok.AccessToken); r.StatusCode != 200 {
		t.Fatalf("the real token after the bad ones = %d", r.StatusCode)
	}
}

func TestBearerTokenOfDeletedUserIsRejected(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	tok := secIssue(t, s, "editor@demo.test", nil)
	if r := s.get(t, "/users/me", tok.AccessToken); r.StatusCode != 200 {
		t.Fatalf("/users/me before the delete = %d", r.StatusCode)
	}
	if _, err := s.DB.ExecContext(context.Background(), "DELETE FROM users WHERE id = ?", s.Editor.ID); err != nil {
		t.Fatal(err)
	}
	secAssertInvalidToken(t, "token of a deleted user", s.get(t, "/users/me", tok.AccessToken))
	secAssertInvalidToken(t, "token of a deleted user on /site", s.get(t, "/site", tok.AccessToken))
}

func TestBearerTokenRevokedThroughRevocationEndpoint(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(s.ConfID)+":"+url.QueryEscape(s.ConfSecret)))

	t.Run("confidential client, access token", func(t *testing.T) {
		tok := secConfToken(t, s)
		if r := s.get(t, "/users/me", tok.AccessToken); r.StatusCode != 200 {
			t.Fatalf("/users/me before revocation = %d", r.StatusCode)
		}
		r := s.form(t, "/oauth/revoke", url.Values{"token": {tok.AccessToken}, "token_type_hint": {"access_token"}}, "Authorization", basic)
		if b := body(t, r); r.StatusCode != 200 {
			t.Fatalf("revoke = %d %s", r.StatusCode, b)
		}
		secAssertInvalidToken(t, "revoked access token", s.get(t, "/users/me", tok.AccessToken))
		secAssertInvalidToken(t, "revoked access token on /site", s.get(t, "/site", tok.AccessToken))
	})

	t.Run("confidential client, wrong secret cannot revoke", func(t *testing.T) {
		tok := secConfToken(t, s)
		bad := "Basic " + base64.StdEncoding.EncodeToString([]byte(s.ConfID+":wrong"))
		r := s.form(t, "/oauth/revoke", url.Values{"token": {tok.AccessToken}}, "Authorization", bad)
		if b := body(t, r); r.StatusCode != 401 {
			t.Errorf("revoke with a wrong secret = %d %s, want 401", r.StatusCode, b)
		}
		if r := s.get(t, "/users/me", tok.AccessToken); r.StatusCode != 200 {
			t.Errorf("token after a refused revocation = %d, want 200", r.StatusCode)
		}
	})

	t.Run("another client cannot revoke", func(t *testing.T) {
		tok := secIssue(t, s, "editor@demo.test", nil) // issued to the first-party client
		r := s.form(t, "/oauth/revoke", url.Values{"token": {tok.AccessToken}, "token_type_hint": {"access_token"}}, "Authorization", basic)
		body(t, r)
		if r := s.get(t, "/users/me", tok.AccessToken); r.StatusCode != 200 {
			t.Errorf("a token of the first-party client after the confidential client revoked it = %d, want 200", r.StatusCode)
		}
	})

	t.Run("first-party client, access token", func(t *testing.T) {
		tok := secIssue(t, s, "editor@demo.test", nil)
		r := s.form(t, "/oauth/revoke", url.Values{"token": {tok.AccessToken}, "client_id": {oauth.FirstPartyClientID}})
		if b := body(t, r); r.StatusCode != 200 {
			t.Fatalf("revoke = %d %s", r.StatusCode, b)
		}
		secAssertInvalidToken(t, "revoked first-party token", s.get(t, "/users/me", tok.AccessToken))
	})

}

// RFC 7009 §2.1: revoking a refresh token revokes it, and here its whole
// chain with the access tokens of the sign-in.
func TestRevokingRefreshTokenRevokesItsChain(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	basic := secBasic(s.ConfID, s.ConfSecret)
	for _, hint := range []string{"refresh_token", ""} {
		tok := secConfToken(t, s)
		v := url.Values{"token": {tok.RefreshToken}}
		if hint != "" {
			v.Set("token_type_hint", hint)
		}
		r := s.form(t, "/oauth/revoke", v, "Authorization", basic)
		if b := body(t, r); r.StatusCode != 200 {
			t.Fatalf("revoke refresh token (hint %q) = %d %s", hint, r.StatusCode, b)
		}
		var problems []string
		if r := s.get(t, "/users/me", tok.AccessToken); r.StatusCode != 401 {
			problems = append(problems, fmt.Sprintf("the access token of the revoked chain still works on /users/me (%d, want 401)", r.StatusCode))
		}
		rr := s.form(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}}, "Authorization", basic)
		if b := body(t, rr); rr.StatusCode != 400 || !strings.Contains(string(b), `"invalid_grant"`) {
			problems = append(problems, fmt.Sprintf("the revoked refresh token still refreshes (%d, want 400 invalid_grant)", rr.StatusCode))
		}
		if len(problems) > 0 {
			t.Errorf("BUG (hint %q): revoking a refresh token through POST /oauth/revoke answers 200 but revokes nothing: %s.\n"+
				"op.Revoke calls Store.GetRefreshTokenInfo, which returns the refresh row's id, then Store.RevokeToken(rowID, userID, clientID); "+
				"RevokeToken (store.go) takes every call with a userID for an access token id and updates oauth_access_tokens WHERE id = rowID, "+
				"which matches nothing. It must also find rowID in oauth_refresh_tokens (checking its client) and revoke that chain.",
				hint, strings.Join(problems, "; "))
		}
	}
}

// --- 2. token endpoint errors ----------------------------------------------------

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
		{name: "client_credentials grant", body: "grant_type=client_credentials", basic: secBasic(s.ConfID, s.ConfSecret), status: 400, code: "unsupported_grant_type"},
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

// --- 3. brute force --------------------------------------------------------------

// secAttempt is one password-grant attempt; it returns the status and body.
func secAttempt(t *testing.T, s *server, user, pass string) (*http.Response, map[string]any) {
	t.Helper()
	r := s.form(t, "/oauth/token", url.Values{"grant_type": {"password"}, "username": {user}, "password": {pass}})
	b := body(t, r)
	m := map[string]any{}
	_ = json.Unmarshal(b, &m)
	return r, m
}

func secAssertLocked(t *testing.T, what string, r *http.Response, m map[string]any, maxWait time.Duration) {
	t.Helper()
	if r.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("%s: status %d %v, want 429", what, r.StatusCode, m)
	}
	ra, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || ra <= 0 || time.Duration(ra)*time.Second > maxWait+time.Second {
		t.Errorf("%s: Retry-After = %q, want whole seconds in (0, %v]", what, r.Header.Get("Retry-After"), maxWait)
	}
	if e, _ := m["error"].(string); e == "" {
		t.Errorf("%s: error body %v", what, m)
	}
	if d, _ := m["error_description"].(string); d == "" {
		t.Errorf("%s: no error_description: %v", what, m)
	}
	for h, want := range map[string]string{"Content-Type": "application/json;charset=UTF-8", "Cache-Control": "no-store"} {
		if got := r.Header.Get(h); got != want {
			t.Errorf("%s: %s = %q, want %q", what, h, got, want)
		}
	}
}

func TestPasswordThrottlePerUser(t *testing.T) {
	t.Parallel()
	s := newServer(t) // defaults: 5 per user, 20 per address, 15 minutes
	lock := s.Config.OAuth.LoginLockout
	for i := 1; i <= s.Config.OAuth.LoginMaxFailures; i++ {
		if r, m := secAttempt(t, s, "editor@demo.test", "guess "+strconv.Itoa(i)); r.StatusCode != 400 || m["error"] != "invalid_grant" {
			t.Fatalf("failure %d = %d %v, want 400 invalid_grant", i, r.StatusCode, m)
		}
	}
	r, m := secAttempt(t, s, "editor@demo.test", password)
	secAssertLocked(t, "right password after 5 failures", r, m, lock)
	// The lock is on the username, whatever its case or spacing.
	r, m = secAttempt(t, s, "  EDITOR@demo.TEST ", password)
	secAssertLocked(t, "same username in another case", r, m, lock)

	// Another username from the same address is not locked: it still gets
	// wrong-password answers, and signs in with its password.
	if r, m := secAttempt(t, s, "editor@other.test", "guess"); r.StatusCode != 400 || m["error"] != "invalid_grant" {
		t.Fatalf("another username after the first is locked = %d %v, want 400", r.StatusCode, m)
	}
	if r, m := secAttempt(t, s, "editor@other.test", password); r.StatusCode != 200 {
		t.Fatalf("another username with its password = %d %v, want 200", r.StatusCode, m)
	}

	// The login form shares the throttle.
	page := secLoginPage(t, s, "editor@demo.test", password)
	retry := page.Header.Get("Retry-After")
	if pb := body(t, page); page.StatusCode != http.StatusTooManyRequests || retry == "" || !strings.Contains(string(pb), "Too many") {
		t.Errorf("login form for a locked username = %d Retry-After %q: %s", page.StatusCode, retry, pb)
	}
}

// secLoginPage starts a code flow for the confidential client and posts the
// login form with user and pass; it returns the login POST's response.
func secLoginPage(t *testing.T, s *server, user, pass string) *http.Response {
	t.Helper()
	authURL := s.URL + "/oauth/authorize?" + url.Values{"client_id": {s.ConfID}, "redirect_uri": {s.RedirectURI},
		"response_type": {"code"}, "scope": {"openid"}, "state": {"x"}}.Encode()
	return s.authorize(t, authURL, user, pass)
}

func TestPasswordThrottlePerAddress(t *testing.T) {
	t.Parallel()
	const perAddress = 8
	s := newServer(t, func(c *config.Config) { c.OAuth.LoginMaxFailuresPerAddress = perAddress })
	lock := s.Config.OAuth.LoginLockout
	failures := 0
	fail := func(user string) {
		t.Helper()
		failures++
		if r, m := secAttempt(t, s, user, "guess "+strconv.Itoa(failures)); r.StatusCode != 400 || m["error"] != "invalid_grant" {
			t.Fatalf("failure %d (%s) = %d %v, want 400 invalid_grant", failures, user, r.StatusCode, m)
		}
	}
	for range s.Config.OAuth.LoginMaxFailures { // locks editor@demo.test
		fail("editor@demo.test")
	}
	r, m := secAttempt(t, s, "editor@demo.test", password)
	secAssertLocked(t, "locked username", r, m, lock)

	// Below the per-address limit, other usernames still get 400, and a
	// right password still signs in (without resetting the address's count).
	fail("editor@other.test")
	fail("nobody@demo.test")
	if r, m := secAttempt(t, s, "editor@other.test", password); r.StatusCode != 200 {
		t.Fatalf("other username below the address limit = %d %v, want 200", r.StatusCode, m)
	}
	for failures < perAddress {
		fail("someone" + strconv.Itoa(failures) + "@demo.test")
	}
	// The address is now locked for every username, even with the right password.
	for _, u := range []string{"editor@other.test", "fresh@demo.test"} {
		r, m := secAttempt(t, s, u, password)
		secAssertLocked(t, "address lock, "+u, r, m, lock)
	}
}

// The limit must hold against guesses sent in parallel, not only one after
// another: otherwise an attacker gets as many guesses per lockout as it has
// connections.
func TestPasswordThrottleHoldsUnderConcurrency(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	const n = 16
	limit := s.Config.OAuth.LoginMaxFailures
	checked := statuses(t, parallel(n, func(i int) answer {
		return s.post("/oauth/token", login("editor@demo.test", "guess "+strconv.Itoa(i)))
	}))
	if checked[400]+checked[429] != n {
		t.Fatalf("statuses %v, want only 400 and 429", checked)
	}
	if checked[400] > limit {
		t.Errorf("BUG: %d of %d concurrent wrong passwords for one username were checked (400) before the lock, want at most %d "+
			"(statuses %v). checkLogin (token.go) reads the lock (throttle.Wait), runs argon2id, and only then counts the failure "+
			"(throttle.Fail): check-then-act, so every request in flight before the %dth failure is recorded gets a guess. "+
			"The attempt should be counted (or a slot reserved) atomically before the password is checked, e.g. one "+
			"INSERT ... ON CONFLICT DO UPDATE ... RETURNING failures, locked_until, refusing when the count is already at the limit.",
			checked[400], n, limit, checked, limit)
	}
	// Afterwards the username is locked, whatever the race let through.
	r, m := secAttempt(t, s, "editor@demo.test", password)
	secAssertLocked(t, "after the concurrent guesses", r, m, s.Config.OAuth.LoginLockout)
}

// --- 4. site isolation -----------------------------------------------------------

func TestUsersAreIsolatedBySite(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	tok := secIssue(t, s, "editor@demo.test", nil)

	own := s.get(t, "/users/"+s.Editor.ID.String(), tok.AccessToken)
	ob := body(t, own)
	if own.StatusCode != 200 || !strings.Contains(string(ob), s.Editor.ID.String()) {
		t.Fatalf("own user = %d %s", own.StatusCode, ob)
	}
	testsupport.ValidateJSONAPI(t, ob)

	for name, path := range map[string]string{
		"other site's editor": "/users/" + s.OtherEditor.ID.String(),
		"not a uuid":          "/users/not-a-uuid",
		"unknown uuid":        "/users/00000000-0000-4000-8000-000000000000",
	} {
		r := s.get(t, path, tok.AccessToken)
		b := body(t, r)
		if r.StatusCode != 404 {
			t.Errorf("%s: %d %s, want 404", name, r.StatusCode, b)
			continue
		}
		testsupport.ValidateJSONAPI(t, b)
		if bytes.Contains(b, []byte("editor@other.test")) || bytes.Contains(b, []byte("Olga")) {
			t.Errorf("%s: the 404 leaks the other user: %s", name, b)
		}
	}
	// The other site's editor sees themself and not the demo editor.
	otherTok := secIssue(t, s, "editor@other.test", nil)
	if r := s.get(t, "/users/"+s.OtherEditor.ID.String(), otherTok.AccessToken); r.StatusCode != 200 {
		t.Errorf("other editor, own id = %d", r.StatusCode)
	}
	if r := s.get(t, "/users/"+s.Editor.ID.String(), otherTok.AccessToken); r.StatusCode != 404 {
		t.Errorf("other editor, demo editor's id = %d, want 404", r.StatusCode)
	}
	// /site is the token's site.
	r := s.get(t, "/site", otherTok.AccessToken)
	if b := body(t, r); r.StatusCode != 200 || !strings.Contains(string(b), s.Other.ID.String()) || strings.Contains(string(b), s.Site.ID.String()) {
		t.Errorf("/site for the other editor = %d %s", r.StatusCode, b)
	}
}

// --- 5. discovery, JWKS and key rotation -------------------------------------------

type secDiscovery struct {
	Issuer                string `json:"issuer"`
	TokenEndpoint         string `json:"token_endpoint"`
	JWKSURI               string `json:"jwks_uri"`
	RevocationEndpoint    string `json:"revocation_endpoint"`
	IntrospectionEndpoint string `json:"introspection_endpoint"`
	AuthorizationEndpoint string `json:"authorization_endpoint"`
}

func secDiscover(t *testing.T, s *server) secDiscovery {
	t.Helper()
	r := s.get(t, "/.well-known/openid-configuration", "")
	b := body(t, r)
	if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("discovery = %d %q %s", r.StatusCode, r.Header.Get("Content-Type"), b)
	}
	var d secDiscovery
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func secJWKS(t *testing.T, s *server, uri string) jose.JSONWebKeySet {
	t.Helper()
	r, err := s.http.Get(uri)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b := body(t, r)
	var set jose.JSONWebKeySet
	if r.StatusCode != 200 || json.Unmarshal(b, &set) != nil {
		t.Fatalf("JWKS %s = %d %s", uri, r.StatusCode, b)
	}
	for _, k := range set.Keys {
		if !k.IsPublic() {
			t.Fatalf("the JWKS publishes a private key: %s", b)
		}
	}
	return set
}

func TestDiscoveryAndJWKS(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	d := secDiscover(t, s)
	if d.Issuer != s.URL || d.TokenEndpoint != s.URL+"/oauth/token" {
		t.Errorf("issuer %q token_endpoint %q, want %q and %q", d.Issuer, d.TokenEndpoint, s.URL, s.URL+"/oauth/token")
	}
	for name, v := range map[string]string{"jwks_uri": d.JWKSURI, "revocation_endpoint": d.RevocationEndpoint,
		"introspection_endpoint": d.IntrospectionEndpoint, "authorization_endpoint": d.AuthorizationEndpoint} {
		if !strings.HasPrefix(v, s.URL+"/") {
			t.Errorf("%s = %q, want a URL under %s", name, v, s.URL)
		}
	}

	tok := secIssue(t, s, "editor@demo.test", nil)
	kid := secKid(t, tok.AccessToken)
	set := secJWKS(t, s, d.JWKSURI)
	keys := set.Key(kid)
	if len(keys) != 1 {
		t.Fatalf("JWKS has %d keys with the token's kid %s: %+v", len(keys), kid, set)
	}
	pub, ok := keys[0].Key.(*rsa.PublicKey)
	if !ok || keys[0].Algorithm != "RS256" || keys[0].Use != "sig" {
		t.Fatalf("published key %s: %T alg %q use %q", kid, keys[0].Key, keys[0].Algorithm, keys[0].Use)
	}
	// A resource server holding only the JWKS can check the token.
	parsed, err := jwt.ParseSigned(tok.AccessToken, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		t.Fatal(err)
	}
	var c jwt.Claims
	if err := parsed.Claims(pub, &c); err != nil {
		t.Fatalf("the access token does not verify with the published key: %v", err)
	}
	if c.Issuer != s.URL || c.Subject != s.Editor.ID.String() || !c.Audience.Contains(s.URL) {
		t.Errorf("claims %+v", c)
	}
}

func TestSigningKeyRotation(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	ctx := context.Background()
	d := secDiscover(t, s)
	old := secIssue(t, s, "editor@demo.test", nil)
	oldKid := secKid(t, old.AccessToken)

	// What Keys.RotateNow does, from outside the process.
	if _, err := s.DB.ExecContext(ctx, "UPDATE oauth_signing_keys SET retire_at = now() WHERE retire_at > now()"); err != nil {
		t.Fatal(err)
	}
	// The server caches its keys for up to a minute. A token naming a key it
	// does not know makes it reload them (at most once per 5 s), which is
	// how it learns of the retirement at once instead of a minute later.
	nudge := oauth.SignJWS(t, jose.RS256, oauth.OtherKey(t), "unknown-kid-forces-a-reload", secClaimsOf(t, s, old.AccessToken))
	secAssertInvalidToken(t, "unknown kid", s.get(t, "/users/me", nudge))

	refresh := func(rt string) oauth.TokenResponse {
		t.Helper()
		r := s.form(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}})
		b := body(t, r)
		var tok oauth.TokenResponse
		if r.StatusCode != 200 || json.Unmarshal(b, &tok) != nil {
			t.Fatalf("refresh = %d %s", r.StatusCode, b)
		}
		return tok
	}
	fresh := refresh(old.RefreshToken)
	// Should the reload not have happened, the cache expires within a minute.
	for deadline := time.Now().Add(75 * time.Second); secKid(t, fresh.AccessToken) == oldKid && time.Now().Before(deadline); {
		t.Logf("new token still signed by the retired key %s; waiting for the key cache", oldKid)
		time.Sleep(5 * time.Second)
		fresh = refresh(fresh.RefreshToken)
	}
	newKid := secKid(t, fresh.AccessToken)
	if newKid == oldKid {
		t.Fatalf("tokens are still signed by the retired key %s", oldKid)
	}
	for name, tok := range map[string]string{"token of the retired key": old.AccessToken, "token of the new key": fresh.AccessToken} {
		if r := s.get(t, "/users/me", tok); r.StatusCode != 200 {
			t.Errorf("%s on /users/me = %d %s", name, r.StatusCode, body(t, r))
		}
	}
	// Rotation revokes nothing: the retired key stays published until every
	// token it signed has expired.
	set := secJWKS(t, s, d.JWKSURI)
	if len(set.Key(oldKid)) != 1 || len(set.Key(newKid)) != 1 {
		kids := []string{}
		for _, k := range set.Keys {
			kids = append(kids, k.KeyID)
		}
		t.Errorf("JWKS kids %v, want both %s and %s", kids, oldKid, newKid)
	}
	var active int
	if err := s.DB.NewSelect().Table("oauth_signing_keys").ColumnExpr("count(*)").Where("retire_at > now()").Scan(ctx, &active); err != nil || active != 1 {
		t.Errorf("active signing keys = %d (%v), want 1", active, err)
	}
}

// --- 6. introspection ----------------------------------------------------------------

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
