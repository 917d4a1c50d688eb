// Package config reads Pressroom's settings from environment variables.
//
// Every setting has a default that works with the local stack that `make dev`
// starts, so a developer never has to export anything to get going. The table
// in the README lists the same variables; keep the two in step.
package config

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is the whole of Pressroom's configuration. It is built once in main
// and passed down; nothing reads the environment after start-up.
type Config struct {
	// HTTPAddr is where `pressroom serve` listens.
	HTTPAddr string
	// PublicURL is the absolute base URL clients reach the API at; links.self
	// and Location headers are built from it.
	PublicURL string
	// DatabaseURL is a PostgreSQL connection URL.
	DatabaseURL string
	// AutoMigrate makes `serve` apply pending migrations before listening.
	AutoMigrate bool
	// DBMaxConns bounds the connections one process holds to PostgreSQL.
	DBMaxConns int
	// RequestTimeout is every request's deadline: at it the handler's
	// context is cancelled (waiting for a database connection included)
	// and the client gets 503 with Retry-After.
	RequestTimeout time.Duration

	TemporalAddress   string
	TemporalNamespace string
	TaskQueue         string
	// PublishTaskQueue is the task queue of publish workflows, polled by
	// worker slots of their own so image work never delays publishing.
	PublishTaskQueue string
	// SiteUploadLimit is how many of one site's uploads are processed at
	// once; the site's other uploads wait their turn (docs/assets.md).
	SiteUploadLimit int
	// SiteUploadBacklog bounds the uploads one site may have waiting for
	// their turn; a notice beyond it gets 429.
	SiteUploadBacklog int

	Storage Storage

	// BodyLimit bounds every request body; larger ones get 413.
	BodyLimit int
	// MaxConns bounds the client connections `serve` holds open at once;
	// MaxConnsPerIP those from one client address (an IPv6 client: its
	// /64), except trusted proxies'. More are refused at once (api/intake).
	MaxConns      int
	MaxConnsPerIP int
	// HeaderTimeout is how long a request's headers may take to arrive;
	// BodyTimeout how long its body may take, from the end of its headers.
	HeaderTimeout time.Duration
	BodyTimeout   time.Duration
	// MaxUploadBytes bounds an uploaded asset file.
	MaxUploadBytes int64
	// MaxImagePixels refuses larger images before decoding (decompression bombs).
	MaxImagePixels int64
	// ImageMemory bounds the memory one worker's image work holds at once.
	ImageMemory int64
	// UploadWait bounds how long ingestion waits for a notified file to appear.
	UploadWait time.Duration
	// SignatureTTL is how long an upload signature lets a browser upload.
	SignatureTTL time.Duration
	// PublishWait is how long POST /revisions waits for publishing before
	// answering 202 with a Location to poll.
	PublishWait time.Duration
	// ReviewReminder is how long a requested review waits for a verdict
	// before its workflow sends release.review-reminder (and again after
	// each reminder, 3 at most); the API and the commit sweep start review
	// workflows with it.
	ReviewReminder time.Duration

	// ShutdownTimeout bounds how long in-flight requests may finish on SIGTERM.
	ShutdownTimeout time.Duration
	// ReadinessTimeout bounds each dependency check of GET /readyz.
	ReadinessTimeout time.Duration

	LogLevel  string
	LogFormat string
	// DebugAddr, when set, serves net/http/pprof there (goroutine counts and
	// profiles of a live process); empty serves nothing.
	DebugAddr string

	// TrustedProxies are the addresses (or CIDRs) of reverse proxies whose
	// X-Forwarded-For names the client; empty means the peer address is the client.
	TrustedProxies []string

	// CORSOrigins are the browser origins (scheme://host[:port]) of front
	// ends on other origins that may call the API; "*" admits any origin.
	// Empty: no cross-origin access.
	CORSOrigins []string

	// Dev marks a development or test stack: `serve` and `worker` then
	// accept the secret keys' built-in defaults (CheckSecretKeys).
	Dev bool

	OAuth OAuth
	// Webhooks holds the settings of webhook delivery (docs/webhooks.md).
	Webhooks Webhooks
	// AuditRetention is how long audit events are kept (docs/audit.md);
	// an hourly schedule deletes older ones.
	AuditRetention time.Duration
	// History is the retention of the trash and of old versions
	// (docs/history.md); an hourly schedule purges past it.
	History HistoryRetention
	// SearchLanguage is the stemmer of full-text search (docs/search.md):
	// one of SearchLanguages.
	SearchLanguage string
}

// SearchLanguages are the languages PostgreSQL stems (its snowball
// dictionaries, <language>_stem).
var SearchLanguages = []string{"arabic", "armenian", "basque", "catalan", "danish", "dutch", "english", "finnish", "french", "german", "greek", "hindi", "hungarian", "indonesian", "irish", "italian", "lithuanian", "nepali", "norwegian", "portuguese", "romanian", "russian", "serbian", "spanish", "swedish", "tamil", "turkish", "yiddish"}

// Webhooks holds the webhook settings.
type Webhooks struct {
	// AllowPrivate lets webhook URLs reach loopback, private and link-local
	// addresses (development and tests only: it lifts the SSRF guard).
	AllowPrivate bool
	// SecretKey is the key webhook secrets are sealed under at rest.
	SecretKey string
	// TaskQueue is the task queue of delivery workflows.
	TaskQueue string
	// RetryBase is the wait before the first retry; each retry doubles it,
	// up to an hour. GiveUpAfter ends retrying: the delivery fails.
	RetryBase   time.Duration
	GiveUpAfter time.Duration
	// SweepEvery is how often the schedule starts deliveries a crash left
	// unstarted.
	SweepEvery time.Duration
	// Retention is how long finished deliveries and their events are kept,
	// counted from the event; the hourly prune deletes older ones.
	Retention time.Duration
	// PendingLimit is the most deliveries a webhook may have pending behind
	// one that keeps failing: at the next event it is deactivated instead
	// (models.RecordEvent, through the connection setting
	// models.WithWebhookPendingLimit).
	PendingLimit int
}

// OAuth holds token lifetimes and sign-in throttling.
type OAuth struct {
	AccessTokenTTL  time.Duration
	RefreshTokenTTL time.Duration
	// RefreshGrace is how long a spent refresh token may be retried for the same response.
	RefreshGrace time.Duration
	KeyRotation  time.Duration
	// Failed password attempts allowed per username and per client address
	// within LoginWindow before sign-in is locked for LoginLockout.
	LoginMaxFailures           int
	LoginMaxFailuresPerAddress int
	LoginWindow                time.Duration
	LoginLockout               time.Duration
	// ClientMaxFailuresPerAddress failed client authentications from one
	// address within LoginWindow lock client authentication for LoginLockout.
	ClientMaxFailuresPerAddress int
	// AuthorizeMaxPerAddress requests to GET /oauth/authorize from one
	// address within LoginWindow (each stores a row) lock it for LoginLockout.
	AuthorizeMaxPerAddress int
	// HashMemory bounds the bytes that concurrent argon2id checks may hold
	// at once; a check waits at most HashWait for its share, then 503.
	HashMemory int64
	HashWait   time.Duration
	// ClientSecretKey is the HMAC key client secrets are stored under.
	ClientSecretKey string
}

// Storage holds the S3-compatible object storage settings.
type Storage struct {
	// Endpoint is the storage URL as the service reaches it, e.g. http://127.0.0.1:9000.
	Endpoint string
	// PublicEndpoint is the storage URL as browsers reach it (upload
	// signatures point there); it defaults to Endpoint.
	PublicEndpoint string
	AccessKey      string
	SecretKey      string
	Region         string
	UploadsBucket  string
	AssetsBucket   string
}

// The bounds of PRESSROOM_WEBHOOK_RETENTION. Less than a day would delete
// deliveries before anyone had a chance to look at a failure (and retry
// it); ten years is far more than anyone keeps and keeps the cut-off time
// (now minus the retention) well inside time.Time's range.
const (
	MinWebhookRetention = 24 * time.Hour
	MaxWebhookRetention = 10 * 365 * 24 * time.Hour
)

// HistoryRetention bounds the records' history (docs/history.md).
type HistoryRetention struct {
	// Trash is how long a record whose deletion was published stays in
	// the trash (PRESSROOM_TRASH_RETENTION) before it is purged.
	Trash time.Duration
	// Versions is how long versions are kept (PRESSROOM_VERSION_RETENTION),
	// except the newest Keep of each record (PRESSROOM_VERSION_KEEP).
	Versions time.Duration
	Keep     int
}

// The bounds of PRESSROOM_TRASH_RETENTION and PRESSROOM_VERSION_RETENTION:
// an hour at least (a purge within the hour of a delete is what a mistake
// would do), ten years at most.
const (
	MinHistoryRetention = time.Hour
	MaxHistoryRetention = 10 * 365 * 24 * time.Hour
)

// The bounds of PRESSROOM_AUDIT_RETENTION, for the same reasons.
const (
	MinAuditRetention = 24 * time.Hour
	MaxAuditRetention = 10 * 365 * 24 * time.Hour
)

// Getenv is the signature of os.Getenv; tests pass a map lookup instead.
type Getenv func(string) string

// Variable documents one environment variable.
type Variable struct {
	Name, Default, Meaning string
}

// Variables lists every setting with its default, in the order the README shows them.
var Variables = []Variable{
	{"PRESSROOM_HTTP_ADDR", "127.0.0.1:8080", "address the API listens on"},
	{"PRESSROOM_PUBLIC_URL", "http://127.0.0.1:8080", "absolute base URL of the API, used in links and Location headers"},
	{"DATABASE_URL", "postgres://postgres@127.0.0.1:5432/pressroom?sslmode=disable", "PostgreSQL connection URL"},
	{"PRESSROOM_AUTO_MIGRATE", "true", "apply pending migrations when `serve` starts"},
	{"PRESSROOM_DB_MAX_CONNS", "20", "most PostgreSQL connections one process (API or worker) holds at once"},
	{"PRESSROOM_REQUEST_TIMEOUT", "30s", "deadline of every API request, waiting for a database connection included; past it the answer is 503 with Retry-After"},
	{"TEMPORAL_ADDRESS", "127.0.0.1:7233", "Temporal frontend host:port"},
	{"TEMPORAL_NAMESPACE", "default", "Temporal namespace"},
	{"PRESSROOM_TASK_QUEUE", "pressroom", "Temporal task queue of asset ingestion and the upload sweep (publish workflows started before the publish queue existed also finish here)"},
	{"PRESSROOM_PUBLISH_TASK_QUEUE", "pressroom-publish", "Temporal task queue of publish workflows, with worker slots of their own"},
	{"PRESSROOM_S3_ENDPOINT", "http://127.0.0.1:9000", "S3-compatible storage URL as the service reaches it"},
	{"PRESSROOM_S3_PUBLIC_ENDPOINT", "", "storage URL as browsers reach it, used in upload signatures; empty means PRESSROOM_S3_ENDPOINT"},
	{"PRESSROOM_S3_ACCESS_KEY", "pressroom", "storage access key"},
	{"PRESSROOM_S3_SECRET_KEY", "pressroom-dev-secret", "storage secret key"},
	{"PRESSROOM_S3_REGION", "us-east-1", "storage region used for signing"},
	{"PRESSROOM_UPLOADS_BUCKET", "uploads", "temporary bucket that browsers upload into"},
	{"PRESSROOM_ASSETS_BUCKET", "assets", "permanent bucket for processed assets"},
	{"PRESSROOM_BODY_LIMIT", "1048576", "largest request body in bytes (413 above it)"},
	{"PRESSROOM_MAX_CONNS", "4096", "most client connections the API holds open at once (more are answered 503 and closed); lowered at start to fit the process's open-file limit"},
	{"PRESSROOM_MAX_CONNS_PER_IP", "128", "most client connections from one address (IPv6: one /64) at once (more are answered 429 and closed); addresses in PRESSROOM_TRUSTED_PROXIES are exempt"},
	{"PRESSROOM_HEADER_TIMEOUT", "10s", "how long a request's headers may take to arrive, from the connection's opening (or the request's first byte on a kept-alive one)"},
	{"PRESSROOM_BODY_TIMEOUT", "30s", "how long a request's body may take to arrive, from the end of its headers (408 past it)"},
	{"PRESSROOM_MAX_UPLOAD_BYTES", "26214400", "largest asset file in bytes (25 MiB)"},
	{"PRESSROOM_MAX_IMAGE_PIXELS", "50000000", "images with more pixels are refused before decoding (50 megapixels)"},
	{"PRESSROOM_SIGNATURE_TTL", "1h", "how long an upload signature is valid"},
	{"PRESSROOM_PUBLISH_WAIT", "10s", "how long POST /revisions waits for publishing before answering 202"},
	{"PRESSROOM_REVIEW_REMINDER", "24h", "how long a release's review request waits for a verdict before the webhook event release.review-reminder is sent, and again after each reminder (3 at most per request); a review workflow keeps the value it started with. Set it the same for API and worker. From 1s to 8760h"},
	{"PRESSROOM_IMAGE_MEMORY", "419430400", "bytes of image work one worker holds at once (400 MiB; about 8 bytes per pixel each)"},
	{"PRESSROOM_UPLOAD_WAIT", "60s", "how long ingestion retries a notified file that storage does not show yet"},
	{"PRESSROOM_SITE_UPLOAD_LIMIT", "1", "uploads of one site processed at once (its other uploads wait their turn, in the order they were noticed); the same on API and workers. Keep it below the cores of a worker, so that another site's upload finds one (docs/operations.md)"},
	{"PRESSROOM_SITE_UPLOAD_BACKLOG", "1000", "uploads one site may have waiting for their turn; a notice beyond it gets 429 with Retry-After"},
	{"PRESSROOM_SHUTDOWN_TIMEOUT", "15s", "how long in-flight requests may finish on shutdown"},
	{"PRESSROOM_READINESS_TIMEOUT", "2s", "time limit of each dependency check in GET /readyz"},
	{"PRESSROOM_ACCESS_TOKEN_TTL", "2h", "lifetime of access tokens (expires_in)"},
	{"PRESSROOM_REFRESH_TOKEN_TTL", "720h", "lifetime of refresh tokens (30 days)"},
	{"PRESSROOM_REFRESH_GRACE", "10s", "a spent refresh token retried within this time, while its successor is unused, gets the same response instead of revoking the chain"},
	{"PRESSROOM_SIGNING_KEY_ROTATION", "720h", "how long a token signing key signs before a new one takes over"},
	{"PRESSROOM_LOGIN_MAX_FAILURES", "5", "failed password attempts per username within the window before sign-in locks"},
	{"PRESSROOM_LOGIN_MAX_FAILURES_PER_ADDRESS", "20", "failed password attempts per client address within the window before sign-in locks"},
	{"PRESSROOM_LOGIN_WINDOW", "15m", "window in which failed attempts are counted"},
	{"PRESSROOM_LOGIN_LOCKOUT", "15m", "how long sign-in stays locked (429 with Retry-After)"},
	{"PRESSROOM_CLIENT_AUTH_MAX_FAILURES_PER_ADDRESS", "20", "failed OAuth client authentications (token, introspection, revocation) per client address within the login window before they lock for the lockout time"},
	{"PRESSROOM_AUTHORIZE_MAX_PER_ADDRESS", "60", "requests to GET /oauth/authorize (each stores a sign-in request) per client address within the login window before it answers 429 for the lockout time"},
	{"PRESSROOM_HASH_MEMORY", "268435456", "bytes of argon2id password hashing the API does at once (256 MiB: 4 checks of 64 MiB); more wait in arrival order"},
	{"PRESSROOM_HASH_WAIT", "5s", "how long a password check waits for hashing memory before the request gets 503 with Retry-After"},
	{"PRESSROOM_CLIENT_SECRET_KEY", "pressroom-dev-client-secret-key", "HMAC-SHA-256 key client secrets are stored under; set a long random value in production (changing it invalidates every client secret). `serve` and `worker` refuse the default unless `PRESSROOM_DEV=true`"},
	{"PRESSROOM_WEBHOOK_ALLOW_PRIVATE", "false", "let webhook URLs reach loopback, private, link-local and metadata addresses; for development and tests only (`make dev` and the tests set it)"},
	{"PRESSROOM_WEBHOOK_SECRET_KEY", "pressroom-dev-webhook-secret-key", "key webhook signing secrets are sealed under (AES-GCM) in the database; set a long random value in production, the same for API and worker (changing it makes existing secrets unusable: rotate them). `serve` and `worker` refuse the default unless `PRESSROOM_DEV=true`"},
	{"PRESSROOM_DEV", "false", "marks a development or test stack, where `serve` and `worker` accept the default `PRESSROOM_CLIENT_SECRET_KEY` and `PRESSROOM_WEBHOOK_SECRET_KEY` (which anyone can read in the source); `make dev`, docker-compose.yml and the tests set it. Never in production"},
	{"PRESSROOM_WEBHOOK_TASK_QUEUE", "pressroom-webhooks", "Temporal task queue of webhook deliveries and their sweep, with worker slots of their own"},
	{"PRESSROOM_WEBHOOK_RETRY_BASE", "5s", "wait before a failed webhook delivery's first retry; each retry doubles it, at most 1h apart"},
	{"PRESSROOM_WEBHOOK_GIVE_UP", "72h", "how long a webhook delivery is retried before it ends failed"},
	{"PRESSROOM_WEBHOOK_SWEEP_EVERY", "1m", "how often a Temporal schedule starts webhook deliveries a crash left unstarted"},
	{"PRESSROOM_SEARCH_LANGUAGE", "english", "the language full-text search stems words in (docs/search.md): a PostgreSQL snowball language such as english, french, german or spanish. `migrate up` and `serve` switch to it, rewriting the search index once when it changes"},
	{"PRESSROOM_AUDIT_RETENTION", "8760h", "how long audit events (GET /audit-events: writes, publishes, sign-ins) are kept (365 days); an hourly Temporal schedule deletes older ones. From 24h to 87600h"},
	{"PRESSROOM_TRASH_RETENTION", "720h", "how long a record whose deletion was published stays in the trash (GET /pages?filter[trashed]=true; 30 days) before an hourly Temporal schedule purges it and its versions, never while a draft refers to it. From 1h to 87600h"},
	{"PRESSROOM_VERSION_RETENTION", "8760h", "how long versions (a record's history) are kept (365 days); the hourly schedule prunes older ones, except the newest PRESSROOM_VERSION_KEEP of each record and those of a record a draft refers to. From 1h to 87600h"},
	{"PRESSROOM_VERSION_KEEP", "50", "the newest versions of each record kept whatever their age. From 1 to 100000"},
	{"PRESSROOM_WEBHOOK_RETENTION", "720h", "how long succeeded and failed webhook deliveries and their events are kept (30 days, from the event); an hourly Temporal schedule deletes older ones, never a pending delivery or its event. From 24h to 87600h"},
	{"PRESSROOM_WEBHOOK_PENDING_LIMIT", "1000", "most deliveries a webhook may have pending behind one whose last attempt failed; the next event deactivates it instead (active false, with deactivated-reason) and its pending deliveries fail. Set it the same for API and worker. From 1 to 1000000"},
	{"PRESSROOM_TRUSTED_PROXIES", "", "comma-separated proxy addresses or CIDRs whose X-Forwarded-For is believed (sign-in throttling, logs) and whose connections the per-address connection limit skips"},
	{"PRESSROOM_CORS_ORIGINS", "", "comma-separated browser origins (scheme://host[:port], or * for any) whose pages may call the API (CORS); empty means none"},
	{"PRESSROOM_LOG_LEVEL", "info", "debug, info, warn or error"},
	{"PRESSROOM_LOG_FORMAT", "text", "text or json"},
	{"PRESSROOM_DEBUG_ADDR", "", "address of a net/http/pprof listener (goroutines, heap, CPU profiles) for `serve` and `worker`; empty serves none. Bind it to a private address"},
}

// MaxReviewReminder bounds PRESSROOM_REVIEW_REMINDER (a year).
const MaxReviewReminder = 8760 * time.Hour

// FromEnv builds a Config from getenv, falling back to the defaults in
// Variables. It reports every bad value at once.
func FromEnv(getenv Getenv) (Config, error) {
	r := reader{getenv: getenv}
	c := Config{
		HTTPAddr:          r.str("PRESSROOM_HTTP_ADDR"),
		PublicURL:         strings.TrimRight(r.url("PRESSROOM_PUBLIC_URL"), "/"),
		DatabaseURL:       r.url("DATABASE_URL"),
		AutoMigrate:       r.bool("PRESSROOM_AUTO_MIGRATE"),
		DBMaxConns:        int(r.int("PRESSROOM_DB_MAX_CONNS", 1, 10000)),
		RequestTimeout:    r.duration("PRESSROOM_REQUEST_TIMEOUT"),
		TemporalAddress:   r.str("TEMPORAL_ADDRESS"),
		TemporalNamespace: r.str("TEMPORAL_NAMESPACE"),
		TaskQueue:         r.str("PRESSROOM_TASK_QUEUE"),
		PublishTaskQueue:  r.str("PRESSROOM_PUBLISH_TASK_QUEUE"),
		SiteUploadLimit:   int(r.int("PRESSROOM_SITE_UPLOAD_LIMIT", 1, 1000)),
		SiteUploadBacklog: int(r.int("PRESSROOM_SITE_UPLOAD_BACKLOG", 1, 1_000_000)),
		Storage: Storage{
			Endpoint:      strings.TrimRight(r.url("PRESSROOM_S3_ENDPOINT"), "/"),
			AccessKey:     r.str("PRESSROOM_S3_ACCESS_KEY"),
			SecretKey:     r.str("PRESSROOM_S3_SECRET_KEY"),
			Region:        r.str("PRESSROOM_S3_REGION"),
			UploadsBucket: r.str("PRESSROOM_UPLOADS_BUCKET"),
			AssetsBucket:  r.str("PRESSROOM_ASSETS_BUCKET"),
		},
		BodyLimit:        int(r.int("PRESSROOM_BODY_LIMIT", 1, 1<<30)),
		MaxConns:         int(r.int("PRESSROOM_MAX_CONNS", 1, 1_000_000)),
		MaxConnsPerIP:    int(r.int("PRESSROOM_MAX_CONNS_PER_IP", 1, 1_000_000)),
		HeaderTimeout:    r.duration("PRESSROOM_HEADER_TIMEOUT"),
		BodyTimeout:      r.duration("PRESSROOM_BODY_TIMEOUT"),
		MaxUploadBytes:   r.int("PRESSROOM_MAX_UPLOAD_BYTES", 1, 5<<30),
		MaxImagePixels:   r.int("PRESSROOM_MAX_IMAGE_PIXELS", 1, 1<<34),
		ImageMemory:      r.int("PRESSROOM_IMAGE_MEMORY", 16<<20, 1<<40),
		UploadWait:       r.duration("PRESSROOM_UPLOAD_WAIT"),
		SignatureTTL:     r.duration("PRESSROOM_SIGNATURE_TTL"),
		PublishWait:      r.duration("PRESSROOM_PUBLISH_WAIT"),
		ReviewReminder:   r.durationIn("PRESSROOM_REVIEW_REMINDER", time.Second, MaxReviewReminder, "a duration from 1s to 8760h, such as 24h"),
		ShutdownTimeout:  r.duration("PRESSROOM_SHUTDOWN_TIMEOUT"),
		ReadinessTimeout: r.duration("PRESSROOM_READINESS_TIMEOUT"),
		LogLevel:         r.oneOf("PRESSROOM_LOG_LEVEL", "debug", "info", "warn", "error"),
		LogFormat:        r.oneOf("PRESSROOM_LOG_FORMAT", "text", "json"),
		DebugAddr:        r.str("PRESSROOM_DEBUG_ADDR"),
		Dev:              r.bool("PRESSROOM_DEV"),
		OAuth: OAuth{
			AccessTokenTTL:              r.duration("PRESSROOM_ACCESS_TOKEN_TTL"),
			RefreshTokenTTL:             r.duration("PRESSROOM_REFRESH_TOKEN_TTL"),
			RefreshGrace:                r.duration("PRESSROOM_REFRESH_GRACE"),
			KeyRotation:                 r.duration("PRESSROOM_SIGNING_KEY_ROTATION"),
			LoginMaxFailures:            int(r.int("PRESSROOM_LOGIN_MAX_FAILURES", 1, 1000)),
			LoginMaxFailuresPerAddress:  int(r.int("PRESSROOM_LOGIN_MAX_FAILURES_PER_ADDRESS", 1, 100000)),
			LoginWindow:                 r.duration("PRESSROOM_LOGIN_WINDOW"),
			LoginLockout:                r.duration("PRESSROOM_LOGIN_LOCKOUT"),
			ClientMaxFailuresPerAddress: int(r.int("PRESSROOM_CLIENT_AUTH_MAX_FAILURES_PER_ADDRESS", 1, 100000)),
			AuthorizeMaxPerAddress:      int(r.int("PRESSROOM_AUTHORIZE_MAX_PER_ADDRESS", 1, 1000000)),
			HashMemory:                  r.int("PRESSROOM_HASH_MEMORY", 64<<20, 1<<40),
			HashWait:                    r.duration("PRESSROOM_HASH_WAIT"),
			ClientSecretKey:             r.str("PRESSROOM_CLIENT_SECRET_KEY"),
		},
		Webhooks: Webhooks{
			AllowPrivate: r.bool("PRESSROOM_WEBHOOK_ALLOW_PRIVATE"),
			SecretKey:    r.str("PRESSROOM_WEBHOOK_SECRET_KEY"),
			TaskQueue:    r.str("PRESSROOM_WEBHOOK_TASK_QUEUE"),
			RetryBase:    r.duration("PRESSROOM_WEBHOOK_RETRY_BASE"),
			GiveUpAfter:  r.duration("PRESSROOM_WEBHOOK_GIVE_UP"),
			SweepEvery:   r.duration("PRESSROOM_WEBHOOK_SWEEP_EVERY"),
			Retention:    r.durationBetween("PRESSROOM_WEBHOOK_RETENTION", MinWebhookRetention, MaxWebhookRetention, "720h"),
			PendingLimit: int(r.int("PRESSROOM_WEBHOOK_PENDING_LIMIT", 1, 1000000)),
		},
	}
	c.AuditRetention = r.durationBetween("PRESSROOM_AUDIT_RETENTION", MinAuditRetention, MaxAuditRetention, "8760h")
	c.History = r.history()
	c.SearchLanguage = r.oneOf("PRESSROOM_SEARCH_LANGUAGE", SearchLanguages...)
	c.TrustedProxies = r.proxies("PRESSROOM_TRUSTED_PROXIES")
	c.CORSOrigins = r.origins("PRESSROOM_CORS_ORIGINS")
	c.Storage.PublicEndpoint = c.Storage.Endpoint
	if strings.TrimSpace(getenv("PRESSROOM_S3_PUBLIC_ENDPOINT")) != "" {
		c.Storage.PublicEndpoint = strings.TrimRight(r.url("PRESSROOM_S3_PUBLIC_ENDPOINT"), "/")
	}
	return c, errors.Join(r.errs...)
}

// history reads the retention of the trash and of versions.
func (r *reader) history() HistoryRetention {
	return HistoryRetention{
		Trash:    r.durationBetween("PRESSROOM_TRASH_RETENTION", MinHistoryRetention, MaxHistoryRetention, "720h"),
		Versions: r.durationBetween("PRESSROOM_VERSION_RETENTION", MinHistoryRetention, MaxHistoryRetention, "8760h"),
		Keep:     int(r.int("PRESSROOM_VERSION_KEEP", 1, 100000)),
	}
}

// The variables of the secret keys whose defaults are written in this
// file, so known to anyone: a client-secret HMAC key or a webhook-secret
// sealing key everyone has protects nothing.
const (
	ClientSecretKeyVar  = "PRESSROOM_CLIENT_SECRET_KEY"
	WebhookSecretKeyVar = "PRESSROOM_WEBHOOK_SECRET_KEY"
)

// CheckSecretKeys refuses, unless c.Dev, a configuration in which one of
// the named secret keys (the ones the calling process uses) is still its
// built-in default: `serve` and `worker` call it before anything else, so
// a production deployment that forgot to set them does not start. The
// error names the variables, never a value.
func (c Config) CheckSecretKeys(names ...string) error {
	if c.Dev {
		return nil
	}
	value := map[string]string{ClientSecretKeyVar: c.OAuth.ClientSecretKey, WebhookSecretKeyVar: c.Webhooks.SecretKey}
	var defaulted []string
	for _, name := range names {
		if value[name] == defaultOf(name) {
			defaulted = append(defaulted, name)
		}
	}
	if len(defaulted) == 0 {
		return nil
	}
	return fmt.Errorf("%s: still the built-in development default, which anyone can read in Pressroom's source; "+
		"set each to a long random value (e.g. `openssl rand -base64 32`), the same for every API replica and worker, "+
		"or set PRESSROOM_DEV=true on a development machine", strings.Join(defaulted, ", "))
}

// reader collects parse errors so one start-up reports them all.
type reader struct {
	getenv Getenv
	errs   []error
}

func (r *reader) str(name string) string {
	if v := strings.TrimSpace(r.getenv(name)); v != "" {
		return v
	}
	return defaultOf(name)
}

func (r *reader) fail(name, value, want string) {
	// The value is not echoed for names that may hold secrets.
	if strings.Contains(name, "SECRET") || name == "DATABASE_URL" {
		value = "(hidden)"
	}
	r.errs = append(r.errs, fmt.Errorf("%s=%q: want %s", name, value, want))
}

func (r *reader) url(name string) string {
	v := r.str(name)
	u, err := url.Parse(v)
	if err != nil || u.Scheme == "" || u.Host == "" {
		r.fail(name, v, "an absolute URL")
	}
	return v
}

// origins reads a comma-separated list of browser origins: each exactly
// scheme://host[:port] (an Origin header never has a path, query or
// trailing slash), or the lone "*".
func (r *reader) origins(name string) []string {
	var out []string
	for _, o := range strings.Split(r.getenv(name), ",") {
		if o = strings.TrimSpace(o); o == "" {
			continue
		}
		u, err := url.Parse(o)
		switch {
		case o == "*":
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			u.Path != "" || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(o, "?") || strings.HasSuffix(o, "#"):
			r.fail(name, o, "origins such as https://app.example.com or http://localhost:3000 (scheme://host[:port], no path), or *")
			continue
		default:
			o = strings.ToLower(o) // browsers send the origin lower-cased
		}
		out = append(out, o)
	}
	if len(out) > 1 && slices.Contains(out, "*") {
		r.fail(name, strings.Join(out, ","), "either * alone or a list of origins")
	}
	return out
}

// proxies reads a comma-separated list of IP addresses and CIDRs. Anything
// else (a host name) was once ignored without a word by Fiber, and now also
// decides which connections the per-address limit skips: refused.
func (r *reader) proxies(name string) []string {
	var out []string
	for _, p := range strings.Split(r.getenv(name), ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if _, err := netip.ParsePrefix(p); err != nil {
			if _, err := netip.ParseAddr(p); err != nil {
				r.fail(name, p, "IP addresses or CIDRs such as 10.0.0.5 or 10.0.0.0/8")
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

func (r *reader) bool(name string) bool {
	v := r.str(name)
	b, err := strconv.ParseBool(v)
	if err != nil {
		r.fail(name, v, "true or false")
	}
	return b
}

func (r *reader) int(name string, lo, hi int64) int64 {
	v := r.str(name)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		r.fail(name, v, fmt.Sprintf("an integer from %d to %d", lo, hi))
	}
	return n
}

func (r *reader) duration(name string) time.Duration {
	return r.durationIn(name, 1, math.MaxInt64, "a positive duration such as 10s")
}

// durationBetween reads a duration from lo to hi inclusive.
func (r *reader) durationBetween(name string, lo, hi time.Duration, example string) time.Duration {
	return r.durationIn(name, lo, hi, fmt.Sprintf("a duration from %s to %s, such as %s", hours(lo), hours(hi), example))
}

func (r *reader) durationIn(name string, lo, hi time.Duration, want string) time.Duration {
	v := r.str(name)
	d, err := time.ParseDuration(v)
	if err != nil || d < lo || d > hi {
		r.fail(name, v, want)
	}
	return d
}

// hours writes a whole number of hours as an operator would set it ("24h",
// not Duration.String's "24h0m0s").
func hours(d time.Duration) string { return strconv.FormatInt(int64(d/time.Hour), 10) + "h" }

func (r *reader) oneOf(name string, allowed ...string) string {
	v := strings.ToLower(r.str(name))
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	r.fail(name, v, "one of "+strings.Join(allowed, ", "))
	return allowed[0]
}

func defaultOf(name string) string {
	for _, v := range Variables {
		if v.Name == name {
			return v.Default
		}
	}
	panic("config: no default for " + name) // a programming error caught by the tests
}
