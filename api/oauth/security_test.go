package oauth_test

// Security properties of the provider seen from outside: bearer
// verification through the API (here), the token endpoint's error answers
// and introspection (security_tokens_test.go), the sign-in throttle and
// site isolation (security_throttle_test.go), discovery and the JWKS across
// a key rotation (security_keys_test.go). Every test runs its own server
// and database.
//
// Helpers here are prefixed with sec so they cannot collide with the helpers
// of the other test files of this package.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/pressroom/pressroom/api/oauth"
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

// --- bearer verification through the API -----------------------------------

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
