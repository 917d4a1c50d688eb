package oauth_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/pressroom/pressroom/api"
)

// syncBuffer collects log output written from the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestSecretsAreNeverLogged: passwords (right and wrong), client secrets,
// access and refresh tokens sent in forms, headers and query strings never
// appear in the API's log, while the requests themselves are logged.
func TestSecretsAreNeverLogged(t *testing.T) {
	t.Parallel()
	base := newServer(t)

	// The same database and clients, served by an API that logs to logs
	// (at debug level, so nothing is hidden by the level).
	logs := &syncBuffer{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := base.Config
	cfg.PublicURL = "http://" + ln.Addr().String()
	app, err := api.New(api.Deps{Config: cfg, DB: base.DB.DB,
		Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(ln) //nolint:errcheck // ends with Shutdown
	t.Cleanup(func() { _ = app.Shutdown() })
	s := *base
	s.URL, s.Config, s.http = cfg.PublicURL, cfg, newBrowser()

	const wrong = "wrong-password-Zq81x"
	if r := s.form(t, "/oauth/token", url.Values{"grant_type": {"password"}, "username": {"editor@demo.test"}, "password": {wrong}}); r.StatusCode != 400 {
		t.Fatalf("wrong password = %d", r.StatusCode)
	}
	r := s.form(t, "/oauth/token", url.Values{"grant_type": {"password"}, "username": {"editor@demo.test"}, "password": {password}})
	var tok struct {
		Access  string `json:"access_token"`
		Refresh string `json:"refresh_token"`
	}
	if err := json.Unmarshal(body(t, r), &tok); err != nil || r.StatusCode != 200 || tok.Access == "" || tok.Refresh == "" {
		t.Fatalf("sign-in = %d, %v", r.StatusCode, err)
	}
	// A client secret in the body, then in Basic; tokens in a query string
	// and a header; a refresh token in a revocation.
	s.form(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.Refresh},
		"client_id": {s.ConfID}, "client_secret": {s.ConfSecret}})
	s.form(t, "/oauth/introspect", url.Values{"token": {tok.Access}},
		"Authorization", secBasic(s.ConfID, s.ConfSecret))
	if r := s.get(t, "/users/me?access_token="+url.QueryEscape(tok.Access), tok.Access); r.StatusCode != http.StatusOK {
		t.Fatalf("GET /users/me = %d", r.StatusCode)
	}
	s.form(t, "/oauth/revoke", url.Values{"token": {tok.Refresh}, "client_id": {"pressroom"}})

	out := logs.String()
	for _, path := range []string{"/oauth/token", "/oauth/introspect", "/users/me", "/oauth/revoke"} {
		if !strings.Contains(out, path) {
			t.Fatalf("no log line for %s; the check below would prove nothing:\n%s", path, out)
		}
	}
	for name, secret := range map[string]string{
		"password": password, "wrong password": wrong, "client secret": s.ConfSecret,
		"access token": tok.Access, "refresh token": tok.Refresh,
		// A JWT's signature alone, in case a token was logged cut up.
		"access token signature": tok.Access[strings.LastIndexByte(tok.Access, '.')+1:],
	} {
		if strings.Contains(out, secret) {
			t.Errorf("the log holds the %s:\n%s", name, out)
		}
	}
}
