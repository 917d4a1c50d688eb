package api_test

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/pressroom/pressroom/api"
	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/dev"
	"github.com/pressroom/pressroom/testsupport"
)

// The browser tests (e2e/browser_test.go) prove CORS with a real browser;
// these pin the headers it depends on.
func TestCORS(t *testing.T) {
	t.Parallel()
	cfg := testsupport.Defaults()
	cfg.CORSOrigins = []string{"http://app.example.test"}
	app := mustApp(t, api.Deps{Config: cfg, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})

	t.Run("preflight from a configured origin", func(t *testing.T) {
		r := do(t, app, http.MethodOptions, "/pages/0b6f6c8e-3f7e-4a53-9a0d-7d1c1b3c2a10", "", map[string]string{
			"Origin": "http://app.example.test", "Access-Control-Request-Method": "PATCH",
			"Access-Control-Request-Headers": "authorization,content-type,if-match"})
		if r.status != http.StatusNoContent {
			t.Fatalf("preflight = %d, want 204", r.status)
		}
		h := r.header
		if got := h.Get("Access-Control-Allow-Origin"); got != "http://app.example.test" {
			t.Errorf("Access-Control-Allow-Origin = %q", got)
		}
		for _, want := range []string{"PATCH", "DELETE", "POST"} {
			if !strings.Contains(h.Get("Access-Control-Allow-Methods"), want) {
				t.Errorf("Access-Control-Allow-Methods = %q, want %s in it", h.Get("Access-Control-Allow-Methods"), want)
			}
		}
		for _, want := range []string{"Authorization", "Content-Type", "If-Match", "Idempotency-Key"} {
			if !strings.Contains(h.Get("Access-Control-Allow-Headers"), want) {
				t.Errorf("Access-Control-Allow-Headers = %q, want %s in it", h.Get("Access-Control-Allow-Headers"), want)
			}
		}
		if h.Get("Access-Control-Allow-Credentials") != "" {
			t.Errorf("credentials allowed; bearer tokens need none")
		}
	})
	t.Run("answer exposes Location and ETag", func(t *testing.T) {
		r := do(t, app, http.MethodGet, "/healthz", "", map[string]string{"Origin": "http://app.example.test"})
		if got := r.header.Get("Access-Control-Allow-Origin"); got != "http://app.example.test" {
			t.Errorf("Access-Control-Allow-Origin = %q", got)
		}
		for _, want := range []string{"Location", "ETag"} {
			if !strings.Contains(r.header.Get("Access-Control-Expose-Headers"), want) {
				t.Errorf("Access-Control-Expose-Headers = %q, want %s in it", r.header.Get("Access-Control-Expose-Headers"), want)
			}
		}
	})
	t.Run("an error answer carries the headers too", func(t *testing.T) {
		r := do(t, app, http.MethodGet, "/pages", "", map[string]string{"Origin": "http://app.example.test", "Accept": "application/vnd.api+json"})
		if r.status != http.StatusUnauthorized || r.header.Get("Access-Control-Allow-Origin") != "http://app.example.test" {
			t.Errorf("GET /pages without a token = %d with Access-Control-Allow-Origin %q; a script must be able to read the 401",
				r.status, r.header.Get("Access-Control-Allow-Origin"))
		}
	})
	t.Run("another origin gets no grant", func(t *testing.T) {
		r := do(t, app, http.MethodOptions, "/pages", "", map[string]string{
			"Origin": "http://evil.example.test", "Access-Control-Request-Method": "POST"})
		if got := r.header.Get("Access-Control-Allow-Origin"); got != "" {
			t.Errorf("Access-Control-Allow-Origin = %q for an origin not configured", got)
		}
	})
	t.Run("no origins configured: no headers", func(t *testing.T) {
		r := do(t, offlineApp(t), http.MethodGet, "/healthz", "", map[string]string{"Origin": "http://app.example.test"})
		if got := r.header.Get("Access-Control-Allow-Origin"); got != "" {
			t.Errorf("Access-Control-Allow-Origin = %q with PRESSROOM_CORS_ORIGINS empty", got)
		}
	})
}

// `make dev` lets the usual local front-end dev servers call the API
// (dev.DevServerEnv); a production configuration allows no origin.
func TestCORSDevDefaults(t *testing.T) {
	t.Parallel()
	env := map[string]string{}
	for _, kv := range dev.DevServerEnv(func(string) string { return "" }) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("make dev's environment does not parse: %v", err)
	}
	app := mustApp(t, api.Deps{Config: cfg, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	for _, origin := range []string{"http://localhost:5173", "http://127.0.0.1:5173", "http://localhost:3000",
		"http://127.0.0.1:3000", "http://localhost:8000", "http://127.0.0.1:8000", "http://localhost:4200", "http://127.0.0.1:4200"} {
		r := do(t, app, http.MethodOptions, "/pages", "", map[string]string{
			"Origin": origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization,content-type"})
		if got := r.header.Get("Access-Control-Allow-Origin"); r.status != http.StatusNoContent || got != origin {
			t.Errorf("preflight from %s = %d with Access-Control-Allow-Origin %q; want 204 allowing it", origin, r.status, got)
		}
	}
	// A developer's own setting wins over the defaults.
	if got := dev.DevServerEnv(func(k string) string {
		if k == "PRESSROOM_CORS_ORIGINS" {
			return "http://app.test"
		}
		return ""
	}); strings.Contains(strings.Join(got, " "), "PRESSROOM_CORS_ORIGINS") {
		t.Errorf("DevServerEnv overrides the developer's PRESSROOM_CORS_ORIGINS: %v", got)
	}
	prod, err := config.FromEnv(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if len(prod.CORSOrigins) != 0 {
		t.Errorf("production default allows origins %v; want none", prod.CORSOrigins)
	}
}
