package oauth_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pressroom/pressroom/api"
	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/auth"
	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/testsupport"
)

func TestMain(m *testing.M) { os.Exit(testsupport.Main(m)) }

const password = "correct horse battery"

// server is a running API with two sites, an editor in each, and clients.
type server struct {
	URL         string
	DB          *testsupport.Database
	Config      config.Config
	Site, Other *models.Site
	Editor      *models.User
	OtherEditor *models.User
	ConfID      string // confidential client
	ConfSecret  string
	PublicID    string // public client (PKCE required)
	RedirectURI string
	http        *http.Client
}

type option func(*config.Config)

// startAPI runs the API on a socket of its own, on a database of its own,
// until the test ends, and returns where it listens (the config's
// PublicURL unless an option changes it).
func startAPI(tb testing.TB, opts ...option) (db *testsupport.Database, cfg config.Config, base string) {
	tb.Helper()
	db = testsupport.NewDatabase(tb)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	base = "http://" + ln.Addr().String()
	cfg = testsupport.Config(tb, db, testsupport.Defaults().Storage)
	cfg.PublicURL = base
	for _, o := range opts {
		o(&cfg)
	}
	app, err := api.New(api.Deps{Config: cfg, DB: db.DB, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		tb.Fatal(err)
	}
	go app.Listener(ln) //nolint:errcheck // ends with Shutdown
	tb.Cleanup(func() { _ = app.Shutdown() })
	return db, cfg, base
}

func newServer(t *testing.T, opts ...option) *server {
	t.Helper()
	ctx := context.Background()
	db, cfg, base := startAPI(t, opts...)
	s := &server{URL: base, DB: db, Config: cfg, RedirectURI: base + "/test-callback", http: newBrowser()}
	hash, _ := auth.HashPassword(password)
	s.Site, s.Other, s.Editor, s.OtherEditor = oauth.TwoSites(t, db, hash)
	var err error
	if s.ConfID, s.ConfSecret, err = models.NewOAuthClient(ctx, db, []byte(cfg.OAuth.ClientSecretKey), "Desktop app", true, []string{s.RedirectURI}); err != nil {
		t.Fatal(err)
	}
	if s.PublicID, _, err = models.NewOAuthClient(ctx, db, []byte(cfg.OAuth.ClientSecretKey), "Browser app", false, []string{s.RedirectURI}); err != nil {
		t.Fatal(err)
	}
	return s
}

// newBrowser is an HTTP client with a cookie jar of its own that does not
// follow redirects: one browser. The server's own client is one; a test
// that needs a second party makes another.
func newBrowser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Timeout: 30 * time.Second, Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// formRequest is a POST of the form v to target, with optional headers
// (name, value, name, value...).
func formRequest(target string, v url.Values, headers ...string) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, target, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return req
}

// form posts a form to path with optional headers.
func (s *server) form(t *testing.T, path string, v url.Values, headers ...string) *http.Response {
	t.Helper()
	resp, err := s.http.Do(formRequest(s.URL+path, v, headers...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// get sends a GET with an optional bearer token.
func (s *server) get(t *testing.T, path, token string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.URL+path, nil)
	req.Header.Set("Accept", "application/vnd.api+json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := s.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func body(t *testing.T, r *http.Response) []byte {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
