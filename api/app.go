// Package api is Pressroom's HTTP API: a Fiber app speaking JSON:API 1.1,
// with plain-JSON exceptions for OAuth, health and asset types.
package api

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/google/uuid"
	"github.com/minio/minio-go/v7"
	"github.com/uptrace/bun"
	"github.com/valyala/fasthttp"
	"go.temporal.io/sdk/client"

	"github.com/pressroom/pressroom/api/intake"
	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
	"github.com/pressroom/pressroom/readcache"
)

// Deps is what the API needs from the outside world. main builds it.
type Deps struct {
	Config     config.Config
	DB         *bun.DB
	Temporal   client.Client
	Storage    *minio.Client
	Log        *slog.Logger
	AssetTypes models.AssetTypes
	// Reads is the process's cache of live documents (docs/caching.md);
	// nil caches nothing.
	Reads *readcache.Cache
}

// Option changes what New builds; serve passes none. Tests use them
// (WithFaults).
type Option func(*routes)

// Faults are points where a test makes POST /asset-uploads and POST
// /revisions fail as a crash there would (docs/architecture.md, "From a
// commit to a workflow"). Each gets the resource type ("asset-uploads",
// "revisions") and the new record's id.
type Faults struct {
	// BeforeCommit runs last in the transaction that records the work: an
	// error rolls it back (nothing recorded, no workflow), as a crash
	// before the commit would.
	BeforeCommit func(typ, id string) error
	// AfterCommit runs after that commit, before the workflow is started:
	// an error ends the request with it and the workflow unstarted, as a
	// crash between the commit and the start would. The worker's commit
	// sweep then starts it.
	AfterCommit func(typ, id string) error
}

// WithFaults makes New's handlers call f's functions.
func WithFaults(f Faults) Option { return func(r *routes) { r.faults = f } }

// beforeCommit and afterCommit call the faults' functions, if any.
func (f Faults) beforeCommit(typ string, id uuid.UUID) error {
	if f.BeforeCommit == nil {
		return nil
	}
	return f.BeforeCommit(typ, id.String())
}

func (f Faults) afterCommit(typ string, id uuid.UUID) error {
	if f.AfterCommit == nil {
		return nil
	}
	return f.AfterCommit(typ, id.String())
}

// New builds the Fiber app with every route and middleware.
func New(d Deps, opts ...Option) (*fiber.App, error) {
	if d.AssetTypes == nil {
		d.AssetTypes = models.DefaultAssetTypes()
	}
	errs := errorHandler(d.Log)
	app := newServer(d.Config, errs)
	app.Use(intake.CloseUnread)
	app.Use(withRequestID)
	app.Use(accessLog(d.Log, errs))
	app.Use(recover.New(recover.Config{
		EnableStackTrace: true,
		StackTraceHandler: func(c *fiber.Ctx, e any) {
			d.Log.Error("panic in handler", "request_id", requestID(c), "path", logPath(c), "panic", fmt.Sprint(e))
		},
	}))
	app.Use(withDeadline(d.Config.RequestTimeout))
	app.Use(withCORS(d.Config.CORSOrigins))
	app.Use(rejectNUL)
	app.Use(negotiate)

	app.Get("/healthz", healthz)
	app.Get("/readyz", readyz(dependencyChecks(d), d.Config.ReadinessTimeout, d.Log))

	settings := oauthSettings(d.Config)
	settings.Reads = d.Reads
	provider, err := oauth.New(d.DB, settings, d.Log)
	if err != nil {
		return nil, err
	}
	provider.Mount(app)

	// Every JSON:API resource route needs a bearer token; the principal it
	// yields scopes every query by site. Attached per route, not as a group:
	// a group with middleware in Fiber catches every later path, and unknown
	// routes must stay 404.
	// The body is read (bounded) only once the token is known good.
	readBody := intake.ReadBody(d.Config.BodyLimit)
	authed := func(p models.Permission, h fiber.Handler) []fiber.Handler {
		return []fiber.Handler{provider.RequireToken, require(p), readBody, h}
	}
	l := links{base: d.Config.PublicURL}
	r := routes{app: app, authed: authed, deps: d, links: l, cat: newCatalog(l), drafts: newDraftRenderer(d.DB, l), perms: permissionTable{}, reads: &[]linkRead{}}
	for _, o := range opts {
		o(&r)
	}
	// Plain JSON, but behind the token like every endpoint of the spec but
	// /oauth/token (DESIGN.md §2).
	r.get("/asset-types", models.PermRead, assetTypes(d.AssetTypes))

	r.previews = newPreviews(d.DB, drafts.NewEngine(d.Config.Storage), d.Config.PublicURL)
	if err := registerResources(r); err != nil {
		return nil, err
	}
	registerPreviewRoutes(app, d, errs, *r.reads, r.previews)

	// Last: the description covers every route registered above (and fails
	// New when one cannot be described; api/openapi.go).
	var spec []byte
	registerDocRoutes(app, &spec)
	if spec, err = buildOpenAPI(app.GetRoutes(true), d.Config.PublicURL, probeQuerySpecs(app), r.perms); err != nil {
		return nil, err
	}
	return app, nil
}

// newServer is the Fiber app (and its fasthttp server) with the limits on
// what a request may hold: time, header bytes, and a body read only by its
// route.
func newServer(cfg config.Config, errs fiber.ErrorHandler) *fiber.App {
	// A Config not built by config.FromEnv (zero timeouts) gets the defaults.
	headerTimeout, bodyTimeout := cmp.Or(cfg.HeaderTimeout, 10*time.Second), cmp.Or(cfg.BodyTimeout, 30*time.Second)
	app := fiber.New(fiber.Config{
		AppName:               "pressroom",
		BodyLimit:             cfg.BodyLimit,
		ErrorHandler:          errs,
		DisableStartupMessage: true,
		StrictRouting:         true,
		CaseSensitive:         true,
		// Headers must arrive within the header timeout; the body has its
		// own deadline, from the end of the headers (HeaderReceived below).
		ReadTimeout:  headerTimeout,
		WriteTimeout: 60 * time.Second,
		IdleTimeout:  120 * time.Second,
		// Bounded so a flood of huge headers cannot exhaust memory.
		ReadBufferSize: 16 << 10,
		// Bodies are read by the route, after its checks, bounded
		// (intake.Read): fasthttp reads at most 8 KiB of one before the
		// handler instead of allocating its whole Content-Length. Multipart
		// forms are parsed from that bounded body, never before it.
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		// c.IP() is the client behind trusted proxies only; anyone else's
		// X-Forwarded-For is ignored, so throttling cannot be dodged by a header.
		EnableTrustedProxyCheck: len(cfg.TrustedProxies) > 0,
		TrustedProxies:          cfg.TrustedProxies,
		ProxyHeader:             proxyHeader(cfg.TrustedProxies),
	})
	app.Server().HeaderReceived = func(*fasthttp.RequestHeader) fasthttp.RequestConfig {
		return fasthttp.RequestConfig{ReadTimeout: bodyTimeout}
	}
	return app
}

// registerResources registers every resource's routes (each function sits
// beside its handlers), then the relationship endpoints of every type they
// put in the catalog (relations.go): every link a document advertises
// answers.
func registerResources(r routes) error {
	engine := r.previews.engine
	registerUserRoutes(r)
	registerSiteRoutes(r)
	registerUploadRoutes(r)
	registerAssetRoutes(r)
	registerThemeRoutes(r)
	registerLayoutRoutes(r)
	registerThemeAssetRoutes(r)
	registerContentRoutes(r, engine)
	registerDraftRoutes(r, engine)
	registerRevisionRoutes(r, engine)
	registerComparisonRoutes(r)
	registerPublishPlanRoutes(r, engine)
	registerAuditRoutes(r)
	registerSearchRoutes(r)
	if err := registerWebhookRoutes(r); err != nil {
		return err
	}
	registerOAuthClientRoutes(r)
	registerMembershipRoutes(r)
	registerReleaseRoutes(r, engine)
	registerReleaseReviewRoutes(r, engine)
	registerCommentRoutes(r)
	registerPreviewLinkRoutes(r)
	return r.cat.routes(r)
}

// routes is what a resource needs to register its endpoints.
type routes struct {
	app    *fiber.App
	authed func(models.Permission, fiber.Handler) []fiber.Handler
	deps   Deps
	links  links
	// cat is every resource type: each register function adds its own,
	// New registers their relationships' endpoints last (relations.go).
	cat *catalog
	// drafts renders drafts, wherever they appear, with their linkage.
	drafts *draftRenderer
	// faults are a test's (WithFaults); none in production.
	faults Faults
	// perms is each route's permission, as add declares it.
	perms permissionTable
	// previews serves every read's preview-release (preview.go).
	previews *previews
	// reads are the GET routes add registered, which preview links serve
	// too (preview_gate.go); nil records none.
	reads *[]linkRead
}

// get, post, patch and delete register an endpoint behind the token that
// needs permission p (the one place a route's permission is declared:
// api/permissions.go).
func (r routes) get(path string, p models.Permission, h fiber.Handler) {
	r.add(fiber.MethodGet, path, p, h)
}

// getLoaded is get for a read whose handler reads its record through a
// drafts.Loader, which checks a kept preview in its own statement
// (previews.wrapLoaded).
func (r routes) getLoaded(path string, p models.Permission, h fiber.Handler) {
	r.addRead(path, p, localeWrap(h), true) // locale-tag, as add
}
func (r routes) post(path string, p models.Permission, h fiber.Handler) {
	r.add(fiber.MethodPost, path, p, h)
}
func (r routes) patch(path string, p models.Permission, h fiber.Handler) {
	r.add(fiber.MethodPatch, path, p, h)
}
func (r routes) delete(path string, p models.Permission, h fiber.Handler) {
	r.add(fiber.MethodDelete, path, p, h)
}

func (r routes) add(method, path string, p models.Permission, h fiber.Handler) {
	h = localeWrap(h) // locale-tag, on every route (locale.go)
	if method == fiber.MethodGet {
		r.addRead(path, p, h, false)
		return
	}
	r.perms.declare(method, path, p)
	r.app.Add(method, path, r.authed(p, audited(method, path, h, r.unrecordedWrite))...)
}

// addRead registers GET path (loaded: see getLoaded).
func (r routes) addRead(path string, p models.Permission, h fiber.Handler, loaded bool) {
	r.perms.declare(fiber.MethodGet, path, p)
	if r.previews != nil { // preview-release, on every read
		if loaded {
			h = r.previews.wrapLoaded(h)
		} else {
			h = r.previews.wrap(h)
		}
	}
	r.app.Get(path, r.authed(p, h)...) // and HEAD, as Fiber's Get does
	if r.reads != nil {
		*r.reads = append(*r.reads, linkRead{path: path, perm: p, h: h})
	}
}

// unrecordedWrite logs a write route that answered 2xx without recording
// its audit event: a write outside runTx (api/audit.go), a bug.
func (r routes) unrecordedWrite(c *fiber.Ctx, action string) {
	if r.deps.Log != nil {
		r.deps.Log.ErrorContext(c.UserContext(), "write recorded no audit event", "action", action, "path", logPath(c), "request_id", requestID(c))
	}
}

// editable registers the routes of a resource clients edit: GET path (one
// page of list, read with spec(true)), POST path, GET path/:id (the row
// load finds, read with spec(false)), needing read, and PATCH path/:id,
// needing write.
func editable[M any](r routes, path string, read, write models.Permission, rows rowRenderer[M], spec func(collection bool) QuerySpec,
	list siteList[M], load func(*fiber.Ctx) (*M, error), create, update fiber.Handler) {
	r.get(path, read, rows.list(spec(true), r.links, path, r.deps.DB, list))
	r.post(path, write, create)
	r.get(path+"/:id", read, rows.get(spec(false), load))
	r.patch(path+"/:id", write, update)
}

// themeResources is what the theme-family handlers share (theme_resources.go).
func (r routes) themeResources() *themeResources {
	d := r.deps
	return &themeResources{
		db:         d.DB,
		links:      r.links,
		assets:     assetsHandler{db: d.DB, storage: d.Config.Storage, links: r.links},
		users:      usersHandler{db: d.DB, links: r.links},
		pageCounts: models.LivePagesPerLayout(d.DB),
		cat:        r.cat,
	}
}

func proxyHeader(trusted []string) string {
	if len(trusted) == 0 {
		return ""
	}
	return fiber.HeaderXForwardedFor
}

func oauthSettings(c config.Config) oauth.Settings {
	return oauth.Settings{
		Issuer:          c.PublicURL,
		Audience:        c.PublicURL,
		AccessTokenTTL:  c.OAuth.AccessTokenTTL,
		RefreshTokenTTL: c.OAuth.RefreshTokenTTL,
		RefreshGrace:    c.OAuth.RefreshGrace,
		KeyRotation:     c.OAuth.KeyRotation,
		Throttle: oauth.ThrottleSettings{
			MaxPerUser:             c.OAuth.LoginMaxFailures,
			MaxPerAddress:          c.OAuth.LoginMaxFailuresPerAddress,
			Window:                 c.OAuth.LoginWindow,
			LockFor:                c.OAuth.LoginLockout,
			ClientMaxPerAddress:    c.OAuth.ClientMaxFailuresPerAddress,
			AuthorizeMaxPerAddress: c.OAuth.AuthorizeMaxPerAddress,
		},
		HashMemory:      c.OAuth.HashMemory,
		HashWait:        c.OAuth.HashWait,
		ClientSecretKey: []byte(c.OAuth.ClientSecretKey),
	}
}

// dependencyChecks are the probes of GET /readyz: Postgres, Temporal and
// both storage buckets.
func dependencyChecks(d Deps) []Check {
	return []Check{
		{Name: "postgres", Probe: func(ctx context.Context) error { return d.DB.PingContext(ctx) }},
		{Name: "temporal", Probe: func(ctx context.Context) error {
			_, err := d.Temporal.CheckHealth(ctx, &client.CheckHealthRequest{})
			return err
		}},
		{Name: "storage", Probe: func(ctx context.Context) error {
			for _, b := range []string{d.Config.Storage.UploadsBucket, d.Config.Storage.AssetsBucket} {
				ok, err := d.Storage.BucketExists(ctx, b)
				if err != nil {
					return err
				}
				if !ok {
					return fmt.Errorf("bucket %q does not exist", b)
				}
			}
			return nil
		}},
	}
}

// assetTypes serves GET /asset-types: plain JSON, the table as it is. The
// answer needs a token, so shared caches must not keep it (they would hand
// it to callers without one): private.
func assetTypes(t models.AssetTypes) fiber.Handler {
	return func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderCacheControl, "private, max-age=300")
		return c.JSON(t)
	}
}
