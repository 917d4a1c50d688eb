package oauth_test

// Security properties of the provider (security_test.go): discovery and
// the JWKS across a signing key rotation.

import (
	"context"
	"crypto/rsa"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/pressroom/pressroom/api/oauth"
)

// --- discovery, JWKS and key rotation -------------------------------------------

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
