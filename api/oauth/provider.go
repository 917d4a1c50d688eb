// Package oauth is Pressroom's OAuth 2.0 / OpenID provider, built on
// zitadel/oidc's op package with every piece of state in Postgres.
//
// op serves discovery, the JWKS, /oauth/authorize (with the login form
// here), introspection and revocation. The token endpoint is Pressroom's own,
// beside the provider (token.go): it adds the password grant op lacks,
// rotates refresh tokens with reuse detection, and answers in exactly the
// shape the API specification gives. It signs access tokens with op's
// CreateJWT and the same keys the JWKS publishes.
package oauth

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/uptrace/bun"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/pressroom/pressroom/auth"
)

// Settings configures the provider.
type Settings struct {
	// Issuer is the public base URL; it is also the API's audience.
	Issuer   string
	Audience string
	// AccessTokenTTL and RefreshTokenTTL are token lifetimes.
	AccessTokenTTL, RefreshTokenTTL time.Duration
	// RefreshGrace is how long a spent refresh token may be presented again
	// to get the same response (a client that lost it), before reuse
	// revokes the chain.
	RefreshGrace time.Duration
	// KeyRotation is how long a signing key signs before the next one.
	KeyRotation time.Duration
	Throttle    ThrottleSettings
	// HashMemory bounds the bytes of argon2id checks in progress at once;
	// a check waits at most HashWait for its share (then 503).
	HashMemory int64
	HashWait   time.Duration
	// ClientSecretKey is the HMAC key client secrets are stored under.
	ClientSecretKey []byte
}

// DefaultHashMemory (4 argon2id checks of 64 MiB) and DefaultHashWait
// apply when Settings leave them zero.
const (
	DefaultHashMemory = 256 << 20
	DefaultHashWait   = 5 * time.Second
)

// Provider is the OAuth provider mounted into the API.
type Provider struct {
	settings Settings
	store    *Store
	op       *op.Provider
	throttle *throttle
	log      *slog.Logger
	verifier *verifier
}

const (
	loginPath    = "/oauth/login"
	authorizeEnd = "oauth/authorize"
)

// New builds the provider.
func New(db *bun.DB, s Settings, log *slog.Logger) (*Provider, error) {
	if s.Audience == "" {
		s.Audience = s.Issuer
	}
	if s.Throttle == (ThrottleSettings{}) {
		s.Throttle = DefaultThrottle
	}
	if s.Throttle.ClientMaxPerAddress == 0 {
		s.Throttle.ClientMaxPerAddress = DefaultThrottle.ClientMaxPerAddress
	}
	if s.HashMemory == 0 {
		s.HashMemory = DefaultHashMemory
	}
	if s.HashWait == 0 {
		s.HashWait = DefaultHashWait
	}
	keys := NewKeys(db, s.KeyRotation, s.AccessTokenTTL+time.Hour)
	thr := &throttle{db: db, s: s.Throttle}
	store := &Store{db: db, keys: keys, settings: s,
		loginURL: func(id string) string { return loginPath + "?id=" + id },
		hashes:   auth.NewHashLimiter(s.HashMemory, s.HashWait), throttle: thr}

	// op encrypts authorization codes with this key before they are hashed
	// into the database; nothing needs to decrypt them later, so a per-process
	// random key is enough and nothing secret sits in configuration.
	var cfg op.Config
	if _, err := rand.Read(cfg.CryptoKey[:]); err != nil {
		return nil, err
	}
	cfg.CodeMethodS256 = true
	cfg.AuthMethodPost = true
	cfg.GrantTypeRefreshToken = true
	opts := []op.Option{
		op.WithCustomAuthEndpoint(op.NewEndpoint(authorizeEnd)),
		op.WithCustomTokenEndpoint(op.NewEndpoint("oauth/token")),
		op.WithCustomIntrospectionEndpoint(op.NewEndpoint("oauth/introspect")),
		op.WithCustomRevocationEndpoint(op.NewEndpoint("oauth/revoke")),
		op.WithCustomUserinfoEndpoint(op.NewEndpoint("oauth/userinfo")),
		op.WithCustomEndSessionEndpoint(op.NewEndpoint("oauth/logout")),
		op.WithCustomKeysEndpoint(op.NewEndpoint("oauth/keys")),
		op.WithLogger(log.With("component", "oidc")),
	}
	if strings.HasPrefix(s.Issuer, "http://") {
		opts = append(opts, op.WithAllowInsecure()) // local development only
	}
	provider, err := op.NewOpenIDProvider(s.Issuer, &cfg, store, opts...)
	if err != nil {
		return nil, fmt.Errorf("openid provider: %w", err)
	}
	p := &Provider{settings: s, store: store, op: provider, log: log, throttle: thr}
	p.verifier = &verifier{keys: keys, db: db, issuer: s.Issuer, audience: s.Audience}
	return p, nil
}

// Mount adds the provider's routes to app. The token endpoints and the
// login form are Pressroom's; everything else under /oauth and
// /.well-known is op's handler.
func (p *Provider) Mount(app *fiber.App) {
	app.Post("/oauth/token", p.tokenEndpoint(false))
	app.Post("/oauth/token.json", p.tokenEndpoint(true))
	app.Get(loginPath, p.loginForm)
	app.Post(loginPath, p.login)
	// op gets a context of its own: the adaptor would otherwise hand it the
	// fasthttp request context, which fasthttp recycles after the handler
	// returns, racing with database/sql goroutines still watching it.
	opHTTP := adaptor.HTTPHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		ctx, st := withClientAuth(ctx, r.Context().Value(clientAddrValue))
		p.op.ServeHTTP(&clientAuthWriter{ResponseWriter: w, st: st}, r.WithContext(ctx))
	}))
	opHandler := func(c *fiber.Ctx) error {
		c.Context().SetUserValue(clientAddrValue, c.IP()) // the proxy-aware address, for the client-auth throttle
		return opHTTP(c)
	}
	app.All("/.well-known/openid-configuration", opHandler)
	app.All("/oauth/*", opHandler)
}

// Keys exposes the signing keys (rotation is an operator action).
func (p *Provider) Keys() *Keys { return p.store.keys }

// callbackURL is op's authorize callback, which turns a completed request
// into a code and redirects to the client.
func (p *Provider) callbackURL(ctx context.Context, id string) string {
	return op.AuthCallbackURL(p.op)(op.ContextWithIssuer(ctx, p.settings.Issuer), id)
}

var _ http.Handler = (*op.Provider)(nil)
