package config

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// envOf is a Getenv over a map.
func envOf(m map[string]string) Getenv {
	return func(name string) string { return m[name] }
}

// defaults is what FromEnv must build with nothing set.
var defaults = Config{
	HTTPAddr:          "127.0.0.1:8080",
	PublicURL:         "http://127.0.0.1:8080",
	DatabaseURL:       "postgres://postgres@127.0.0.1:5432/pressroom?sslmode=disable",
	AutoMigrate:       true,
	DBMaxConns:        20,
	RequestTimeout:    30 * time.Second,
	TemporalAddress:   "127.0.0.1:7233",
	TemporalNamespace: "default",
	TaskQueue:         "pressroom",
	PublishTaskQueue:  "pressroom-publish",
	SiteUploadLimit:   1,
	SiteUploadBacklog: 1000,
	Storage: Storage{
		Endpoint:       "http://127.0.0.1:9000",
		PublicEndpoint: "http://127.0.0.1:9000",
		AccessKey:      "pressroom",
		SecretKey:      "pressroom-dev-secret",
		Region:         "us-east-1",
		UploadsBucket:  "uploads",
		AssetsBucket:   "assets",
	},
	BodyLimit:        1 << 20,
	MaxConns:         4096,
	MaxConnsPerIP:    128,
	HeaderTimeout:    10 * time.Second,
	BodyTimeout:      30 * time.Second,
	MaxUploadBytes:   25 << 20,
	MaxImagePixels:   50_000_000,
	ImageMemory:      400 << 20,
	UploadWait:       time.Minute,
	SignatureTTL:     time.Hour,
	PublishWait:      10 * time.Second,
	ReviewReminder:   24 * time.Hour,
	ShutdownTimeout:  15 * time.Second,
	ReadinessTimeout: 2 * time.Second,
	LogLevel:         "info",
	LogFormat:        "text",
	OAuth: OAuth{
		AccessTokenTTL:              2 * time.Hour,
		RefreshTokenTTL:             30 * 24 * time.Hour,
		RefreshGrace:                10 * time.Second,
		KeyRotation:                 30 * 24 * time.Hour,
		LoginMaxFailures:            5,
		LoginMaxFailuresPerAddress:  20,
		LoginWindow:                 15 * time.Minute,
		LoginLockout:                15 * time.Minute,
		ClientMaxFailuresPerAddress: 20,
		AuthorizeMaxPerAddress:      60,
		HashMemory:                  256 << 20,
		HashWait:                    5 * time.Second,
		ClientSecretKey:             "pressroom-dev-client-secret-key",
	},
	Webhooks: Webhooks{
		SecretKey: "pressroom-dev-webhook-secret-key", TaskQueue: "pressroom-webhooks",
		RetryBase: 5 * time.Second, GiveUpAfter: 72 * time.Hour, SweepEvery: time.Minute,
		Retention: 30 * 24 * time.Hour, PendingLimit: 1000,
	},
	AuditRetention: 365 * 24 * time.Hour,
	History:        HistoryRetention{Trash: 30 * 24 * time.Hour, Versions: 365 * 24 * time.Hour, Keep: 50},
	SearchLanguage: "english",
}

func TestDefaultsParseWithNoEnvironment(t *testing.T) {
	t.Parallel()
	got, err := FromEnv(envOf(nil))
	if err != nil {
		t.Fatalf("FromEnv with no variables set: %v", err)
	}
	if !reflect.DeepEqual(got, defaults) {
		t.Errorf("FromEnv with no variables set:\n got  %+v\n want %+v", got, defaults)
	}
}

// documentedDefault is the value a variable is documented to default to.
// An empty default means "unset"; one written as "(OTHER_VARIABLE)" means
// the value of OTHER_VARIABLE and turns into OTHER_VARIABLE's default.
func documentedDefault(t *testing.T, v Variable) string {
	t.Helper()
	if strings.HasPrefix(v.Default, "(") && strings.HasSuffix(v.Default, ")") {
		other := strings.Trim(v.Default, "()")
		for _, o := range Variables {
			if o.Name == other {
				return o.Default
			}
		}
		t.Fatalf("%s defaults to %s, which is not a variable in Variables", v.Name, v.Default)
	}
	return v.Default
}

func TestEveryDocumentedDefaultIsAccepted(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, v := range Variables {
		if seen[v.Name] {
			t.Errorf("%s is listed twice in Variables", v.Name)
		}
		seen[v.Name] = true
		if v.Meaning == "" {
			t.Errorf("%s: Variables needs a meaning for the README", v.Name)
		}
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			value := documentedDefault(t, v)
			got, err := FromEnv(envOf(map[string]string{v.Name: value}))
			if err != nil {
				t.Fatalf("FromEnv rejects the documented default %s=%q: %v", v.Name, value, err)
			}
			if !reflect.DeepEqual(got, defaults) {
				t.Errorf("%s=%q (its documented default) gives a config other than the defaults:\n got  %+v\n want %+v", v.Name, value, got, defaults)
			}
		})
	}
}

// nonDefault is a valid value other than the default for every variable;
// TestEveryVariableIsRead fails when a variable is added without one.
var nonDefault = map[string]string{
	"PRESSROOM_HTTP_ADDR":                            ":9999",
	"PRESSROOM_PUBLIC_URL":                           "https://api.example.test",
	"DATABASE_URL":                                   "postgres://app@db.example.test:5432/app",
	"PRESSROOM_AUTO_MIGRATE":                         "false",
	"TEMPORAL_ADDRESS":                               "temporal.example.test:7233",
	"TEMPORAL_NAMESPACE":                             "production",
	"PRESSROOM_TASK_QUEUE":                           "other-queue",
	"PRESSROOM_S3_ENDPOINT":                          "https://s3.example.test",
	"PRESSROOM_S3_PUBLIC_ENDPOINT":                   "https://cdn.example.test",
	"PRESSROOM_S3_ACCESS_KEY":                        "other-access",
	"PRESSROOM_S3_SECRET_KEY":                        "other-secret",
	"PRESSROOM_S3_REGION":                            "eu-west-1",
	"PRESSROOM_UPLOADS_BUCKET":                       "other-uploads",
	"PRESSROOM_ASSETS_BUCKET":                        "other-assets",
	"PRESSROOM_BODY_LIMIT":                           "2048",
	"PRESSROOM_MAX_CONNS":                            "100",
	"PRESSROOM_MAX_CONNS_PER_IP":                     "10",
	"PRESSROOM_HEADER_TIMEOUT":                       "2s",
	"PRESSROOM_BODY_TIMEOUT":                         "5s",
	"PRESSROOM_MAX_UPLOAD_BYTES":                     "1000",
	"PRESSROOM_SHUTDOWN_TIMEOUT":                     "1m",
	"PRESSROOM_READINESS_TIMEOUT":                    "500ms",
	"PRESSROOM_LOG_LEVEL":                            "debug",
	"PRESSROOM_LOG_FORMAT":                           "json",
	"PRESSROOM_DEBUG_ADDR":                           "127.0.0.1:6060",
	"PRESSROOM_ACCESS_TOKEN_TTL":                     "1h",
	"PRESSROOM_REFRESH_TOKEN_TTL":                    "24h",
	"PRESSROOM_REFRESH_GRACE":                        "3s",
	"PRESSROOM_SIGNING_KEY_ROTATION":                 "168h",
	"PRESSROOM_LOGIN_MAX_FAILURES":                   "3",
	"PRESSROOM_LOGIN_MAX_FAILURES_PER_ADDRESS":       "50",
	"PRESSROOM_LOGIN_WINDOW":                         "5m",
	"PRESSROOM_MAX_IMAGE_PIXELS":                     "1000000",
	"PRESSROOM_UPLOAD_WAIT":                          "5s",
	"PRESSROOM_IMAGE_MEMORY":                         "104857600",
	"PRESSROOM_SIGNATURE_TTL":                        "10m",
	"PRESSROOM_PUBLISH_WAIT":                         "1s",
	"PRESSROOM_REVIEW_REMINDER":                      "5s",
	"PRESSROOM_TRUSTED_PROXIES":                      "10.0.0.0/8, 192.168.1.1",
	"PRESSROOM_LOGIN_LOCKOUT":                        "1h",
	"PRESSROOM_CLIENT_AUTH_MAX_FAILURES_PER_ADDRESS": "7",
	"PRESSROOM_AUTHORIZE_MAX_PER_ADDRESS":            "9",
	"PRESSROOM_HASH_MEMORY":                          "134217728",
	"PRESSROOM_HASH_WAIT":                            "1s",
	"PRESSROOM_CLIENT_SECRET_KEY":                    "another-key",
	"PRESSROOM_WEBHOOK_ALLOW_PRIVATE":                "true",
	"PRESSROOM_WEBHOOK_SECRET_KEY":                   "another-webhook-key",
	"PRESSROOM_DEV":                                  "true",
	"PRESSROOM_WEBHOOK_TASK_QUEUE":                   "hooks",
	"PRESSROOM_WEBHOOK_RETRY_BASE":                   "1s",
	"PRESSROOM_WEBHOOK_GIVE_UP":                      "24h",
	"PRESSROOM_WEBHOOK_SWEEP_EVERY":                  "5m",
	"PRESSROOM_WEBHOOK_RETENTION":                    "168h",
	"PRESSROOM_SEARCH_LANGUAGE":                      "french",
	"PRESSROOM_AUDIT_RETENTION":                      "720h",
	"PRESSROOM_TRASH_RETENTION":                      "2h",
	"PRESSROOM_VERSION_RETENTION":                    "48h",
	"PRESSROOM_VERSION_KEEP":                         "3",
	"PRESSROOM_WEBHOOK_PENDING_LIMIT":                "50",
	"PRESSROOM_PUBLISH_TASK_QUEUE":                   "other-publish-queue",
	"PRESSROOM_SITE_UPLOAD_LIMIT":                    "7",
	"PRESSROOM_SITE_UPLOAD_BACKLOG":                  "50",
	"PRESSROOM_DB_MAX_CONNS":                         "5",
	"PRESSROOM_REQUEST_TIMEOUT":                      "5s",
	"PRESSROOM_CORS_ORIGINS":                         "http://localhost:3000",
}

// TestEveryVariableIsRead checks that each documented variable changes the
// configuration, so Variables lists nothing FromEnv ignores.
func TestEveryVariableIsRead(t *testing.T) {
	t.Parallel()
	for _, v := range Variables {
		value, ok := nonDefault[v.Name]
		if !ok {
			t.Errorf("%s is in Variables but has no entry in nonDefault; add a valid non-default value", v.Name)
			continue
		}
		got, err := FromEnv(envOf(map[string]string{v.Name: value}))
		if err != nil {
			t.Errorf("%s=%q: %v", v.Name, value, err)
			continue
		}
		if reflect.DeepEqual(got, defaults) {
			t.Errorf("%s=%q left the configuration at its defaults: FromEnv does not read %s", v.Name, value, v.Name)
		}
	}
	if len(nonDefault) != len(Variables) {
		t.Errorf("nonDefault has %d entries, Variables %d: remove the ones no longer in Variables", len(nonDefault), len(Variables))
	}
}

func TestAcceptedValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		env   map[string]string
		check func(Config) bool
		want  string
	}{
		{"surrounding blanks are trimmed", map[string]string{"PRESSROOM_TASK_QUEUE": "  q1 \t"},
			func(c Config) bool { return c.TaskQueue == "q1" }, "TaskQueue q1"},
		{"blank means default", map[string]string{"PRESSROOM_BODY_LIMIT": "   "},
			func(c Config) bool { return c.BodyLimit == defaults.BodyLimit }, "the default BodyLimit"},
		{"log level is case-insensitive", map[string]string{"PRESSROOM_LOG_LEVEL": "WARN"},
			func(c Config) bool { return c.LogLevel == "warn" }, "LogLevel warn"},
		{"booleans as strconv reads them", map[string]string{"PRESSROOM_AUTO_MIGRATE": "0"},
			func(c Config) bool { return !c.AutoMigrate }, "AutoMigrate false"},
		{"largest body limit", map[string]string{"PRESSROOM_BODY_LIMIT": "1073741824"},
			func(c Config) bool { return c.BodyLimit == 1<<30 }, "BodyLimit 1 GiB"},
		{"shortest webhook retention", map[string]string{"PRESSROOM_WEBHOOK_RETENTION": "24h"},
			func(c Config) bool { return c.Webhooks.Retention == 24*time.Hour }, "Retention 24h"},
		{"longest webhook retention", map[string]string{"PRESSROOM_WEBHOOK_RETENTION": "87600h"},
			func(c Config) bool { return c.Webhooks.Retention == 87600*time.Hour }, "Retention 87600h"},
		{"CORS origins are trimmed and lower-cased", map[string]string{"PRESSROOM_CORS_ORIGINS": " https://App.example.com , http://localhost:3000,"},
			func(c Config) bool {
				return reflect.DeepEqual(c.CORSOrigins, []string{"https://app.example.com", "http://localhost:3000"})
			}, "two origins"},
		{"trusted proxies are addresses and CIDRs, trimmed", map[string]string{"PRESSROOM_TRUSTED_PROXIES": " 10.0.0.0/8, 192.168.1.1 ,fd00::/8,::1,"},
			func(c Config) bool {
				return reflect.DeepEqual(c.TrustedProxies, []string{"10.0.0.0/8", "192.168.1.1", "fd00::/8", "::1"})
			}, "four proxies"},
		{"any origin", map[string]string{"PRESSROOM_CORS_ORIGINS": "*"},
			func(c Config) bool { return reflect.DeepEqual(c.CORSOrigins, []string{"*"}) }, "[*]"},
		{"blank public endpoint means the endpoint", map[string]string{"PRESSROOM_S3_ENDPOINT": "http://minio:9000", "PRESSROOM_S3_PUBLIC_ENDPOINT": "  "},
			func(c Config) bool { return c.Storage.PublicEndpoint == "http://minio:9000" }, "PublicEndpoint http://minio:9000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := FromEnv(envOf(tt.env))
			if err != nil {
				t.Fatalf("FromEnv(%v): %v", tt.env, err)
			}
			if !tt.check(got) {
				t.Errorf("FromEnv(%v) = %+v, want %s", tt.env, got, tt.want)
			}
		})
	}
}

func TestBadValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, value, want string
	}{
		{"PRESSROOM_PUBLIC_URL", "not a url", "absolute URL"},
		{"PRESSROOM_PUBLIC_URL", "/relative/path", "absolute URL"},
		{"PRESSROOM_S3_ENDPOINT", "127.0.0.1:9000", "absolute URL"},
		{"PRESSROOM_S3_PUBLIC_ENDPOINT", "cdn.example.test", "absolute URL"},
		{"PRESSROOM_BODY_LIMIT", "0", "integer from 1 to"},
		{"PRESSROOM_BODY_LIMIT", "abc", "integer from 1 to"},
		{"PRESSROOM_BODY_LIMIT", "-5", "integer from 1 to"},
		{"PRESSROOM_BODY_LIMIT", "1073741825", "integer from 1 to"},
		{"PRESSROOM_MAX_UPLOAD_BYTES", "1.5", "integer from 1 to"},
		{"PRESSROOM_SHUTDOWN_TIMEOUT", "soon", "positive duration"},
		{"PRESSROOM_SHUTDOWN_TIMEOUT", "10", "positive duration"},
		{"PRESSROOM_READINESS_TIMEOUT", "0s", "positive duration"},
		{"PRESSROOM_REQUEST_TIMEOUT", "0s", "positive duration"},
		{"PRESSROOM_DB_MAX_CONNS", "0", "integer from 1"},
		{"PRESSROOM_READINESS_TIMEOUT", "-1s", "positive duration"},
		{"PRESSROOM_ACCESS_TOKEN_TTL", "forever", "positive duration"},
		{"PRESSROOM_LOGIN_MAX_FAILURES", "0", "integer from 1 to"},
		{"PRESSROOM_AUTO_MIGRATE", "maybe", "true or false"},
		{"PRESSROOM_LOG_LEVEL", "loud", "one of debug, info, warn, error"},
		{"PRESSROOM_LOG_FORMAT", "xml", "one of text, json"},
		{"PRESSROOM_CORS_ORIGINS", "https://app.example.com/", "scheme://host[:port], no path"},
		{"PRESSROOM_CORS_ORIGINS", "app.example.com", "scheme://host[:port], no path"},
		{"PRESSROOM_CORS_ORIGINS", "ftp://app.example.com", "scheme://host[:port], no path"},
		{"PRESSROOM_CORS_ORIGINS", "http://localhost:3000,*", "either * alone"},
		{"PRESSROOM_WEBHOOK_RETENTION", "30d", "a duration from 24h to 87600h"},
		{"PRESSROOM_WEBHOOK_RETENTION", "0", "a duration from 24h to 87600h"},
		{"PRESSROOM_WEBHOOK_RETENTION", "-720h", "a duration from 24h to 87600h"},
		{"PRESSROOM_WEBHOOK_RETENTION", "23h59m", "a duration from 24h to 87600h"},
		{"PRESSROOM_WEBHOOK_RETENTION", "87601h", "a duration from 24h to 87600h"},
		{"PRESSROOM_MAX_CONNS", "0", "integer from 1 to"},
		{"PRESSROOM_MAX_CONNS_PER_IP", "0", "integer from 1 to"},
		{"PRESSROOM_HEADER_TIMEOUT", "0s", "positive duration"},
		{"PRESSROOM_BODY_TIMEOUT", "never", "positive duration"},
		{"PRESSROOM_TRUSTED_PROXIES", "proxy.internal", "IP addresses or CIDRs"},
		{"PRESSROOM_TRUSTED_PROXIES", "10.0.0.0/33", "IP addresses or CIDRs"},
		{"PRESSROOM_WEBHOOK_PENDING_LIMIT", "0", "integer from 1 to"},
		{"PRESSROOM_WEBHOOK_PENDING_LIMIT", "1000001", "integer from 1 to"},
	}
	for _, tt := range tests {
		t.Run(tt.name+"="+tt.value, func(t *testing.T) {
			t.Parallel()
			_, err := FromEnv(envOf(map[string]string{tt.name: tt.value}))
			if err == nil {
				t.Fatalf("FromEnv accepted %s=%q", tt.name, tt.value)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.name) || !strings.Contains(msg, tt.want) {
				t.Errorf("error for %s=%q is %q; want it to name the variable and say %q", tt.name, tt.value, msg, tt.want)
			}
			if !strings.Contains(msg, tt.value) {
				t.Errorf("error for %s=%q is %q; want it to quote the bad value (it is not a secret)", tt.name, tt.value, msg)
			}
		})
	}
}

func TestAllBadValuesReportedInOneError(t *testing.T) {
	t.Parallel()
	for _, bodyLimit := range []string{"0", "abc"} {
		t.Run("PRESSROOM_BODY_LIMIT="+bodyLimit, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{
				"PRESSROOM_PUBLIC_URL":       "not a url",
				"PRESSROOM_BODY_LIMIT":       bodyLimit,
				"PRESSROOM_SHUTDOWN_TIMEOUT": "a while",
				"PRESSROOM_LOG_LEVEL":        "loud",
			}
			_, err := FromEnv(envOf(env))
			if err == nil {
				t.Fatalf("FromEnv accepted %v", env)
			}
			for name := range env {
				if !strings.Contains(err.Error(), name) {
					t.Errorf("the error does not report %s:\n%v", name, err)
				}
			}
			var joined interface{ Unwrap() []error }
			if !errors.As(err, &joined) || len(joined.Unwrap()) != len(env) {
				t.Errorf("want one error joining %d problems, got %q", len(env), err)
			}
		})
	}
}

func TestSecretsAreNotEchoed(t *testing.T) {
	t.Parallel()
	const password = "hunter2-Sup3rSecret"
	tests := []struct {
		name string
		env  map[string]string
	}{
		{"DATABASE_URL without a host", map[string]string{"DATABASE_URL": "postgres://app:" + password + "@/pressroom"}},
		{"DATABASE_URL in keyword form", map[string]string{"DATABASE_URL": "host=db user=app password=" + password}},
		{"DATABASE_URL that does not parse", map[string]string{"DATABASE_URL": "postgres://app:" + password + "@db:port/x"}},
		{"secret key next to other bad values", map[string]string{
			"PRESSROOM_S3_SECRET_KEY": password,
			"PRESSROOM_S3_ENDPOINT":   "minio-without-scheme",
			"PRESSROOM_LOG_LEVEL":     "loud",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := FromEnv(envOf(tt.env))
			if err == nil {
				t.Fatalf("FromEnv accepted %v", tt.env)
			}
			if strings.Contains(err.Error(), password) {
				t.Errorf("the error echoes a secret: %q", err)
			}
			if v, ok := tt.env["DATABASE_URL"]; ok {
				if !strings.Contains(err.Error(), "DATABASE_URL") || !strings.Contains(err.Error(), "(hidden)") {
					t.Errorf("error %q should name DATABASE_URL and show its value as (hidden)", err)
				}
				if strings.Contains(err.Error(), v) {
					t.Errorf("the error echoes DATABASE_URL: %q", err)
				}
			}
		})
	}
}

// TestFailHidesSecretLikeNames checks the rule itself, for variables whose
// values are not validated today (PRESSROOM_S3_SECRET_KEY) or not yet added.
func TestFailHidesSecretLikeNames(t *testing.T) {
	t.Parallel()
	const value = "value-that-must-not-leak"
	for _, tt := range []struct {
		name   string
		hidden bool
	}{
		{"PRESSROOM_S3_SECRET_KEY", true},
		{"PRESSROOM_OAUTH_SECRET", true},
		{"DATABASE_URL", true},
		{"PRESSROOM_LOG_LEVEL", false},
		{"PRESSROOM_PUBLIC_URL", false},
	} {
		r := reader{getenv: envOf(nil)}
		r.fail(tt.name, value, "something else")
		msg := errors.Join(r.errs...).Error()
		if !strings.Contains(msg, tt.name) {
			t.Errorf("fail(%s): error %q does not name the variable", tt.name, msg)
		}
		if leaked := strings.Contains(msg, value); leaked == tt.hidden {
			t.Errorf("fail(%s): error %q; want value hidden = %v", tt.name, msg, tt.hidden)
		}
	}
}

func TestStoragePublicEndpoint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name             string
		env              map[string]string
		endpoint, public string
	}{
		{"defaults to the endpoint", nil, "http://127.0.0.1:9000", "http://127.0.0.1:9000"},
		{"follows an overridden endpoint", map[string]string{"PRESSROOM_S3_ENDPOINT": "http://minio:9000"}, "http://minio:9000", "http://minio:9000"},
		{"can be overridden", map[string]string{"PRESSROOM_S3_ENDPOINT": "http://minio:9000", "PRESSROOM_S3_PUBLIC_ENDPOINT": "https://files.example.test"},
			"http://minio:9000", "https://files.example.test"},
		{"overridden alone", map[string]string{"PRESSROOM_S3_PUBLIC_ENDPOINT": "https://files.example.test"},
			"http://127.0.0.1:9000", "https://files.example.test"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := FromEnv(envOf(tt.env))
			if err != nil {
				t.Fatalf("FromEnv(%v): %v", tt.env, err)
			}
			if c.Storage.Endpoint != tt.endpoint || c.Storage.PublicEndpoint != tt.public {
				t.Errorf("FromEnv(%v): endpoint %q, public endpoint %q; want %q, %q",
					tt.env, c.Storage.Endpoint, c.Storage.PublicEndpoint, tt.endpoint, tt.public)
			}
		})
	}
}

func TestTrailingSlashesTrimmed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, value, want string
		get               func(Config) string
	}{
		{"PRESSROOM_PUBLIC_URL", "https://api.example.test/", "https://api.example.test", func(c Config) string { return c.PublicURL }},
		{"PRESSROOM_PUBLIC_URL", "https://example.test/api//", "https://example.test/api", func(c Config) string { return c.PublicURL }},
		{"PRESSROOM_S3_ENDPOINT", "http://minio:9000/", "http://minio:9000", func(c Config) string { return c.Storage.Endpoint }},
		{"PRESSROOM_S3_ENDPOINT", "http://minio:9000/", "http://minio:9000", func(c Config) string { return c.Storage.PublicEndpoint }},
		{"PRESSROOM_S3_PUBLIC_ENDPOINT", "https://files.example.test/", "https://files.example.test", func(c Config) string { return c.Storage.PublicEndpoint }},
	}
	for _, tt := range tests {
		c, err := FromEnv(envOf(map[string]string{tt.name: tt.value}))
		if err != nil {
			t.Errorf("%s=%q: %v", tt.name, tt.value, err)
			continue
		}
		if got := tt.get(c); got != tt.want {
			t.Errorf("%s=%q gave %q, want %q", tt.name, tt.value, got, tt.want)
		}
	}
}

// The secret keys' defaults are in this file for anyone to read: without
// PRESSROOM_DEV a configuration still using one is refused, by name, and
// without echoing a value.
func TestCheckSecretKeysRefusesTheDefaults(t *testing.T) {
	t.Parallel()
	const client, hook = ClientSecretKeyVar, WebhookSecretKeyVar
	for _, c := range []struct {
		name    string
		env     map[string]string
		refused []string
	}{
		{"both defaults", nil, []string{client, hook}},
		{"client key default", map[string]string{hook: "a-production-webhook-key"}, []string{client}},
		{"webhook key default", map[string]string{client: "a-production-client-key"}, []string{hook}},
		{"set to the default text", map[string]string{client: "pressroom-dev-client-secret-key", hook: "x"}, []string{client}},
		{"both set", map[string]string{client: "a-production-client-key", hook: "a-production-webhook-key"}, nil},
		{"development", map[string]string{"PRESSROOM_DEV": "true"}, nil},
		{"development off", map[string]string{"PRESSROOM_DEV": "false"}, []string{client, hook}},
	} {
		cfg, err := FromEnv(envOf(c.env))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		err = cfg.CheckSecretKeys(ClientSecretKeyVar, WebhookSecretKeyVar)
		if len(c.refused) == 0 {
			if err != nil {
				t.Errorf("%s: refused: %v", c.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted, want %v refused", c.name, c.refused)
			continue
		}
		for _, name := range []string{client, hook} {
			if named := strings.Contains(err.Error(), name); named != slices.Contains(c.refused, name) {
				t.Errorf("%s: %q names %s: %v, want %v", c.name, err, name, named, !named)
			}
		}
		if !strings.Contains(err.Error(), "PRESSROOM_DEV=true") || strings.Contains(err.Error(), "pressroom-dev-") {
			t.Errorf("%s: %q should say how to proceed and echo no key", c.name, err)
		}
	}
}

// A process is refused only for the keys it names (the worker never uses
// the client-secret key).
func TestCheckSecretKeysOnlyTheNamedKeys(t *testing.T) {
	t.Parallel()
	cfg, err := FromEnv(envOf(map[string]string{WebhookSecretKeyVar: "a-production-webhook-key"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.CheckSecretKeys(WebhookSecretKeyVar); err != nil {
		t.Errorf("webhook key set, client key not asked for: %v", err)
	}
	if err := cfg.CheckSecretKeys(ClientSecretKeyVar, WebhookSecretKeyVar); err == nil {
		t.Error("client key default accepted when asked for")
	}
}
