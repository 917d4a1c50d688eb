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
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

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
	db := testsupport.NewDatabase(tb)
	p, err := New(db.DB, Settings{Issuer: craftIssuer, AccessTokenTTL: 2 * time.Hour, RefreshTokenTTL: 720 * time.Hour,
		RefreshGrace: 10 * time.Second, KeyRotation: 720 * time.Hour}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		tb.Fatal(err)
	}
	f := &craftFixture{p: p, db: db}
	// Nobody signs in here, so any hash does.
	f.site, f.other, f.user, f.peer = craftSites(tb, db, dummyHash)
	return f
}

// craftSites makes the sites Demo and Other with an editor in each (Ed and
// Olga), whose password hash is hash.
func craftSites(tb testing.TB, db bun.IDB, hash string) (site, other *models.Site, user, peer *models.User) {
	tb.Helper()
	ctx := context.Background()
	var err error
	if site, err = models.CreateSite(ctx, db, "Demo", "demo"); err != nil {
		tb.Fatal(err)
	}
	if other, err = models.CreateSite(ctx, db, "Other", "other"); err != nil {
		tb.Fatal(err)
	}
	if user, err = models.CreateUser(ctx, db, site.ID, "editor@demo.test", "Ed", hash); err != nil {
		tb.Fatal(err)
	}
	if peer, err = models.CreateUser(ctx, db, other.ID, "editor@other.test", "Olga", hash); err != nil {
		tb.Fatal(err)
	}
	return site, other, user, peer
}

// replica is a second provider on f's database that has just made a
// signing key of its own, as another replica of the API would.
func (f *craftFixture) replica(tb testing.TB) *craftFixture {
	tb.Helper()
	p, err := New(f.db.DB, f.p.settings, f.p.log)
	if err != nil {
		tb.Fatal(err)
	}
	if err := p.Keys().RotateNow(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return &craftFixture{p: p, db: f.db}
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

// craftPart decodes one part (0 header, 1 claims) of a compact JWT.
func craftPart(tb testing.TB, tok string, i int) map[string]any {
	tb.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		tb.Fatalf("not a compact JWS: %q", tok)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[i])
	if err != nil {
		tb.Fatalf("JWT part %d: %v", i, err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(raw, &m); err != nil {
		tb.Fatalf("JWT part %d: %v", i, err)
	}
	return m
}

// craftUnsigned builds an alg "none" token, which go-jose refuses to make.
func craftUnsigned(tb testing.TB, kid string, claims any) string {
	tb.Helper()
	h, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT", "kid": kid})
	c, err := json.Marshal(claims)
	if err != nil {
		tb.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c) + "."
}

// craftOtherKey is an RSA key of the forger's own.
func craftOtherKey(tb testing.TB) *rsa.PrivateKey {
	tb.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

// craftPublicPEMs is the public key as PEM, PKIX and PKCS #1: what a forger
// uses as an HS256 secret to confuse a verifier that trusts the header's alg.
func craftPublicPEMs(pub *rsa.PublicKey) (pkix, pkcs1 []byte) {
	der, _ := x509.MarshalPKIXPublicKey(pub)
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(pub)})
}

// craftStolenKey is the private key named kid, read from the database as
// only someone who had stolen it could.
func craftStolenKey(tb testing.TB, db bun.IDB, kid string) *rsa.PrivateKey {
	tb.Helper()
	k, err := NewKeys(db, time.Hour, time.Hour).lookup(context.Background(), kid)
	if err != nil || k == nil {
		tb.Fatalf("signing key %s: %v", kid, err)
	}
	return k.private
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
	other := craftOtherKey(t)
	pubPEM, pubPKCS1 := craftPublicPEMs(&k.private.PublicKey)
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
		{"alg none", craftUnsigned(t, k.id, base), "malformed"},
		{"HS256 keyed with the public key (PKIX PEM)", craftSign(t, jose.HS256, pubPEM, k.id, base), "malformed"},
		{"HS256 keyed with the public key (PKCS1 PEM)", craftSign(t, jose.HS256, pubPKCS1, k.id, base), "malformed"},
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
// after this one cached its keys still verifies, whether this one may reload
// its keys (the unknown kid forces a reload) or reloaded within the last 5 s
// (here: the slot is taken by hand, as a token with a made-up key id would
// take it), when the key is looked up by id (e2e/replicas
// TestAcrossReplicas/rotation… shows it over two processes).
func TestVerifyFindsAnotherReplicasNewKey(t *testing.T) {
	for _, limited := range []bool{false, true} {
		t.Run(fmt.Sprintf("reloads rate-limited %v", limited), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newCraftFixture(t)
			a := f.p
			first := f.issue(t, f.user)
			if _, err := a.Verify(ctx, first.AccessToken); err != nil { // a's cache now holds the first key
				t.Fatal(err)
			}
			if limited && !a.Keys().mayReload() {
				t.Fatal("the reload slot was taken before the test took it")
			}
			second := f.replica(t).issue(t, f.user)
			if craftPart(t, second.AccessToken, 0)["kid"] == craftPart(t, first.AccessToken, 0)["kid"] {
				t.Fatal("replica b did not rotate")
			}
			if _, err := a.Verify(ctx, second.AccessToken); err != nil {
				t.Errorf("replica a (reloads rate-limited: %v) rejects replica b's new key: %v", limited, err)
			}
			// A made-up key id finds nothing and is refused, not an error.
			for _, kid := range []string{"0b7c9a52-0d4f-4a43-9a43-0a3f5f1d2b11", "not-a-uuid"} {
				if k, err := a.Keys().lookup(ctx, kid); k != nil || err != nil {
					t.Errorf("lookup of the made-up key id %q = %v, %v; want nil, nil", kid, k, err)
				}
			}
		})
	}
}
