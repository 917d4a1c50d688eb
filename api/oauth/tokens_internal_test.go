package oauth

// Tokens crafted with the provider's real signing key (reached through the
// unexported key type) against Provider.Verify: what only someone holding
// the key, or a buggy signer, could produce. The test binary's TestMain
// (harness_test.go, package oauth_test) starts the services.

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/testsupport"
)

const craftIssuer = "https://pressroom.test"

// craftFixture is a provider on a fresh database with two sites and a user in each.
type craftFixture struct {
	p           *Provider
	db          *testsupport.Database
	site, other *models.Site
	user, peer  *models.User
}

func newCraftFixture(tb testing.TB) *craftFixture {
	tb.Helper()
	ctx := context.Background()
	db := testsupport.NewDatabase(tb)
	p, err := New(db.DB, Settings{Issuer: craftIssuer, AccessTokenTTL: 2 * time.Hour, RefreshTokenTTL: 720 * time.Hour,
		RefreshGrace: 10 * time.Second, KeyRotation: 720 * time.Hour}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		tb.Fatal(err)
	}
	f := &craftFixture{p: p, db: db}
	if f.site, err = models.CreateSite(ctx, db, "Demo", "demo"); err != nil {
		tb.Fatal(err)
	}
	if f.other, err = models.CreateSite(ctx, db, "Other", "other"); err != nil {
		tb.Fatal(err)
	}
	// Nobody signs in here, so any hash does.
	if f.user, err = models.CreateUser(ctx, db, f.site.ID, "editor@demo.test", "Ed", dummyHash); err != nil {
		tb.Fatal(err)
	}
	if f.peer, err = models.CreateUser(ctx, db, f.other.ID, "editor@other.test", "Olga", dummyHash); err != nil {
		tb.Fatal(err)
	}
	return f
}

// issue issues a real token for u through the provider's own path.
func (f *craftFixture) issue(tb testing.TB, u *models.User) *TokenResponse {
	tb.Helper()
	ctx := context.Background()
	cl := new(models.OAuthClient)
	if err := f.db.NewSelect().Model(cl).Where("id = ?", FirstPartyClientID).Scan(ctx); err != nil {
		tb.Fatal(err)
	}
	g := &grant{userID: u.ID, siteID: u.SiteID, clientID: cl.ID, authTime: time.Now().UTC(),
		audience: f.p.store.audience(cl.ID), amr: []string{"pwd"}}
	sk, err := f.p.store.SigningKey(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	resp, err := f.p.issue(ctx, f.db.DB, sk, cl, g, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return resp
}

// craftClaims are access-token claims in op's shape.
type craftClaims struct {
	jwt.Claims
	SiteID   string `json:"site_id,omitempty"`
	ClientID string `json:"client_id,omitempty"`
}

// claimsFor builds the claims op would for u, naming the access-token row jti.
func (f *craftFixture) claimsFor(u *models.User, jti string) craftClaims {
	now := time.Now()
	return craftClaims{
		Claims: jwt.Claims{Issuer: craftIssuer, Subject: u.ID.String(), Audience: jwt.Audience{craftIssuer, FirstPartyClientID},
			ID: jti, IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(time.Hour))},
		SiteID: u.SiteID.String(), ClientID: FirstPartyClientID,
	}
}

// craftSign signs claims as a compact JWS with alg and kid (the external
// tests use it as SignJWS).
func craftSign(tb testing.TB, alg jose.SignatureAlgorithm, k any, kid string, claims any) string {
	tb.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: k}, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tok, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

func craftPart(tb testing.TB, tok string, i int) map[string]any {
	tb.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[i])
	if err != nil {
		tb.Fatal(err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(raw, &m); err != nil {
		tb.Fatal(err)
	}
	return m
}

func TestVerifyCraftedTokens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newCraftFixture(t)
	real := f.issue(t, f.user)
	jti, _ := craftPart(t, real.AccessToken, 1)["jti"].(string)
	peerTok := f.issue(t, f.peer)
	peerJTI, _ := craftPart(t, peerTok.AccessToken, 1)["jti"].(string)
	k, err := f.p.Keys().Active(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if kid := craftPart(t, real.AccessToken, 0)["kid"]; kid != k.id {
		t.Fatalf("the issued token's kid %v is not the active key %s", kid, k.id)
	}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pubDER, _ := x509.MarshalPKIXPublicKey(&k.private.PublicKey)
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	unsigned := func(c craftClaims) string {
		h, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT", "kid": k.id})
		b, _ := json.Marshal(c)
		return base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(b) + "."
	}
	with := func(mut func(*craftClaims)) craftClaims {
		c := f.claimsFor(f.user, jti)
		mut(&c)
		return c
	}
	now := time.Now()
	base := f.claimsFor(f.user, jti)

	valid := []struct {
		name string
		tok  string
	}{
		{"the issued token", real.AccessToken},
		{"crafted like op does", craftSign(t, jose.RS256, k.private, k.id, base)},
		{"expired 2 s ago, within the 5 s leeway", craftSign(t, jose.RS256, k.private, k.id, with(func(c *craftClaims) {
			c.Expiry = jwt.NewNumericDate(now.Add(-2 * time.Second))
		}))},
		{"audience with the API among others", craftSign(t, jose.RS256, k.private, k.id, with(func(c *craftClaims) {
			c.Audience = jwt.Audience{"someone-else", craftIssuer}
		}))},
	}
	for _, c := range valid {
		pr, err := f.p.Verify(ctx, c.tok)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if pr.UserID != f.user.ID || pr.SiteID != f.site.ID || pr.TokenID.String() != jti || pr.ClientID != FirstPartyClientID {
			t.Errorf("%s: principal %+v", c.name, pr)
		}
	}

	invalid := []struct {
		name, tok, reason string
	}{
		{"empty", "", "malformed"},
		{"garbage", "garbage", "malformed"},
		{"oversized", strings.Repeat("a", 8193), "malformed"},
		{"forged signature under the real kid", craftSign(t, jose.RS256, other, k.id, base), "signature"},
		{"unknown kid", craftSign(t, jose.RS256, other, "nope", base), "signature"},
		{"real key, no kid", craftSign(t, jose.RS256, k.private, "", base), "signature"},
		{"alg none", unsigned(base), "malformed"},
		{"HS256 keyed with the public key", craftSign(t, jose.HS256, pubPEM, k.id, base), "malformed"},
		{"PS256 with the real key", craftSign(t, jose.PS256, k.private, k.id, base), "malformed"},
		{"wrong audience", craftSign(t, jose.RS256, k.private, k.id, with(func(c *craftClaims) {
			c.Audience = jwt.Audience{"https://elsewhere.example", FirstPartyClientID}
		})), "not meant for this API"},
		{"no audience", craftSign(t, jose.RS256, k.private, k.id, with(func(c *craftClaims) { c.Audience = nil })), "not meant for this API"},
		{"expired 1 min ago", craftSign(t, jose.RS256, k.private, k.id, with(func(c *craftClaims) {
			c.IssuedAt = jwt.NewNumericDate(now.Add(-2 * time.Hour))
			c.NotBefore = c.IssuedAt
			c.Expiry = jwt.NewNumericDate(now.Add(-time.Minute))
		})), "expired"},
		{"not yet valid", craftSign(t, jose.RS256, k.private, k.id, with(func(c *craftClaims) {
			c.NotBefore = jwt.NewNumericDate(now.Add(time.Hour))
		})), "not valid"},
		{"issued in the future", craftSign(t, jose.RS256, k.private, k.id, with(func(c *craftClaims) {
			c.IssuedAt = jwt.NewNumericDate(now.Add(time.Hour))
		})), "not valid"},
		{"wrong issuer", craftSign(t, jose.RS256, k.private, k.id, with(func(c *craftClaims) { c.Issuer = "https://evil.example" })), "not valid"},
		{"jti not a uuid", craftSign(t, jose.RS256, k.private, k.id, with(func(c *craftClaims) { c.ID = "x" })), "malformed"},
		{"jti with no row", craftSign(t, jose.RS256, k.private, k.id, with(func(c *craftClaims) { c.ID = uuid.NewString() })), "revoked"},
		{"sub not a uuid", craftSign(t, jose.RS256, k.private, k.id, with(func(c *craftClaims) { c.Subject = "editor" })), "malformed"},
		{"no site_id", craftSign(t, jose.RS256, k.private, k.id, with(func(c *craftClaims) { c.SiteID = "" })), "no site"},
		// The row decides: a token cannot be re-pointed at another site or user.
		{"site_id of another site", craftSign(t, jose.RS256, k.private, k.id, with(func(c *craftClaims) { c.SiteID = f.other.ID.String() })), "revoked"},
		{"sub of another user", craftSign(t, jose.RS256, k.private, k.id, with(func(c *craftClaims) {
			c.Subject, c.SiteID = f.peer.ID.String(), f.other.ID.String()
		})), "revoked"},
		{"another user's jti", craftSign(t, jose.RS256, k.private, k.id, with(func(c *craftClaims) { c.ID = peerJTI })), "revoked"},
	}
	for _, c := range invalid {
		pr, err := f.p.Verify(ctx, c.tok)
		var it invalidToken
		switch {
		case err == nil:
			t.Errorf("%s: accepted as %+v", c.name, pr)
		case !errors.As(err, &it):
			t.Errorf("%s: %v, want an invalid-token error (a 401, not a 500)", c.name, err)
		case !strings.Contains(it.reason, c.reason):
			t.Errorf("%s: reason %q, want one mentioning %q", c.name, it.reason, c.reason)
		}
	}

	// Revocation and deletion act at once, through the row.
	if _, err := f.db.NewUpdate().Table("oauth_access_tokens").Set("revoked_at = now()").Where("id = ?", jti).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := f.p.Verify(ctx, real.AccessToken); err == nil {
		t.Error("a revoked token verified")
	}
	if _, err := f.db.NewDelete().Table("users").Where("id = ?", f.peer.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := f.p.Verify(ctx, peerTok.AccessToken); err == nil {
		t.Error("the token of a deleted user verified")
	}
}

func TestRotateNowKeepsOldTokensValid(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newCraftFixture(t)
	old := f.issue(t, f.user)
	oldKid := craftPart(t, old.AccessToken, 0)["kid"]
	if err := f.p.Keys().RotateNow(ctx); err != nil {
		t.Fatal(err)
	}
	fresh := f.issue(t, f.user)
	newKid := craftPart(t, fresh.AccessToken, 0)["kid"]
	if newKid == oldKid {
		t.Fatalf("after RotateNow the token is still signed by %v", oldKid)
	}
	for name, tok := range map[string]string{"old": old.AccessToken, "new": fresh.AccessToken} {
		if _, err := f.p.Verify(ctx, tok); err != nil {
			t.Errorf("%s token after rotation: %v", name, err)
		}
	}
	published, err := f.p.store.KeySet(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kids := map[string]bool{}
	for _, k := range published {
		kids[k.ID()] = true
	}
	if !kids[oldKid.(string)] || !kids[newKid.(string)] {
		t.Errorf("published kids %v, want %v and %v", kids, oldKid, newKid)
	}
}

// Two replicas share one database: a token signed by a key the other made
// after this one cached its keys still verifies (the unknown kid forces a reload).
func TestVerifyReloadsKeysForAnotherReplicasKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newCraftFixture(t)
	a := f.p
	first := f.issue(t, f.user)
	if _, err := a.Verify(ctx, first.AccessToken); err != nil { // a's cache now holds the first key
		t.Fatal(err)
	}
	b, err := New(f.db.DB, a.settings, a.log)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Keys().RotateNow(ctx); err != nil {
		t.Fatal(err)
	}
	fb := &craftFixture{p: b, db: f.db}
	second := fb.issue(t, f.user)
	if craftPart(t, second.AccessToken, 0)["kid"] == craftPart(t, first.AccessToken, 0)["kid"] {
		t.Fatal("replica b did not rotate")
	}
	if _, err := a.Verify(ctx, second.AccessToken); err != nil {
		t.Errorf("replica a rejects replica b's new key: %v", err)
	}
}
