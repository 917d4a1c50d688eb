// Package oauth is Pressroom's OAuth 2.0 / OpenID provider, built on
// zitadel/oidc's op package with every piece of state in Postgres.
//
// op serves the JWKS, introspection and revocation, and builds discovery.
// The token endpoint is Pressroom's own, beside the provider (token.go): it
// adds the password grant op lacks, rotates refresh tokens with reuse
// detection, and answers in exactly the shape the API specification gives.
// It signs access tokens with op's CreateJWT and the same keys the JWKS
// publishes. /oauth/authorize and the login form are Pressroom's too
// (authorize.go, login.go), with op's validators: they bind each request to
// the browser that started it and issue its code once. Only the routes Mount
// lists are served; the rest of op (its token endpoint, callback, userinfo,
// end-session and device endpoints) is not reachable.
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
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/pressroom/pressroom/api/intake"

	"github.com/pressroom/pressroom/auth"
	"github.com/pressroom/pressroom/readcache"
)

// Settings configures the provider.
type Settings struct {
	// Reads, when set, keeps each live token's lookup (its row and the
	// membership it acts under) until a change to tokens or memberships
	// is notified (readcache.AuthSite, docs/caching.md); nil looks up on
	// every request.
	Reads *readcache.Cache
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
	if s.Throttle.AuthorizeMaxPerAddress == 0 {
		s.Throttle.AuthorizeMaxPerAddress = DefaultThrottle.AuthorizeMaxPerAddress
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

	// op needs a crypto key; nothing Pressroom serves uses it (codes are
	// random, see login.go), so a per-process random key is enough and
	// nothing secret sits in configuration.
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
	p.verifier = &verifier{keys: keys, db: db, issuer: s.Issuer, audience: s.Audience, reads: s.Reads}
	store.signatures = p.verifier
	return p, nil
}

// Mount adds the provider's routes to app: exactly the endpoints and
// methods Pressroom uses. Any other method on these paths is 405 with Allow;
// any other path under /oauth is the app's 404.
func (p *Provider) Mount(app *fiber.App) {
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
	get := func(h fiber.Handler) route { return route{fiber.MethodGet, []fiber.Handler{h}} }
	head := func(h fiber.Handler) route { return route{fiber.MethodHead, []fiber.Handler{h}} }
	post := func(h fiber.Handler) route { return route{fiber.MethodPost, []fiber.Handler{h}} }
	// A form is read, bounded, before the handler parses it (the token
	// endpoint reads its own, to answer in OAuth's error format).
	postForm := func(h fiber.Handler) route {
		return route{fiber.MethodPost, []fiber.Handler{intake.ReadBody(maxTokenRequest), h}}
	}
	serve(app, "/.well-known/openid-configuration", get(p.discovery), head(p.discovery))
	serve(app, "/oauth/keys", get(opHandler), head(opHandler))
	serve(app, "/oauth/token", post(p.tokenEndpoint(false)))
	serve(app, "/oauth/token.json", post(p.tokenEndpoint(true)))
	serve(app, "/oauth/introspect", postForm(opHandler))
	serve(app, "/oauth/revoke", postForm(opHandler))
	serve(app, "/"+authorizeEnd, get(p.authorize))
	serve(app, loginPath, get(p.loginForm), postForm(p.login))
}

// route is one method of a path and its handlers.
type route struct {
	method string
	h      []fiber.Handler
}

// serve registers routes on path, and for every other method a 405 whose
// Allow header names them (RFC 9110 §15.5.6).
func serve(app *fiber.App, path string, routes ...route) {
	allow := make([]string, len(routes))
	for i, r := range routes {
		app.Add(r.method, path, r.h...)
		allow[i] = r.method
	}
	allowed := strings.Join(allow, ", ")
	app.All(path, func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderAllow, allowed)
		return fiber.ErrMethodNotAllowed
	})
}

// discovery is op's discovery document, less what Pressroom does not
// serve: it names only routed endpoints and the grants and response types
// Pressroom's endpoints implement.
func (p *Provider) discovery(c *fiber.Ctx) error {
	ctx := op.ContextWithIssuer(c.UserContext(), p.settings.Issuer)
	d := op.CreateDiscoveryConfig(ctx, p.op, p.store)
	d.UserinfoEndpoint, d.EndSessionEndpoint, d.DeviceAuthorizationEndpoint, d.CheckSessionIframe = "", "", "", ""
	d.ResponseTypesSupported = []string{string(oidc.ResponseTypeCode)}
	d.ResponseModesSupported = []string{string(oidc.ResponseModeQuery)}
	d.GrantTypesSupported = []oidc.GrantType{oidc.GrantTypeCode, oidc.GrantTypeRefreshToken, grantPassword, oidc.GrantTypeClientCredentials}
	d.RequestParameterSupported = false
	c.Set(fiber.HeaderAccessControlAllowOrigin, "*") // public, as op serves it
	return c.JSON(d)
}

// Keys exposes the signing keys (rotation is an operator action).
func (p *Provider) Keys() *Keys { return p.store.keys }

var _ http.Handler = (*op.Provider)(nil)
