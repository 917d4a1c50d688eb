// Package e2e tests Pressroom as a whole: the API on a real socket and the
// Temporal worker, against the real Postgres, Temporal dev server and MinIO
// that testsupport provides. Nothing of our own infrastructure is mocked.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/pressroom/pressroom/api"
	"github.com/pressroom/pressroom/auth"
	apiclient "github.com/pressroom/pressroom/client"
	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/readcache"
	"github.com/pressroom/pressroom/testsupport"
	"github.com/pressroom/pressroom/worker"
)

func TestMain(m *testing.M) {
	// Run as `pressroom login`'s browser (PRESSROOM_BROWSER, e2e/cli_test.go):
	// sign in at the address given, then exit.
	if email := os.Getenv(fakeBrowserEmail); email != "" {
		os.Exit(fakeBrowser(email, os.Args[1:]))
	}
	os.Exit(testsupport.Main(m))
}

const password = "pressroom-dev"

// system is one test's Pressroom: API, worker, database, buckets.
type system struct {
	URL      string
	Config   config.Config
	DB       *testsupport.Database
	Storage  *minio.Client
	Temporal client.Client
	Site     *models.Site
	Other    *models.Site
	http     *http.Client
	stopWkr  func()
	// openapi is the system's own GET /openapi.json, which call checks
	// every response against.
	openapi *testsupport.OpenAPI
	// reads is the API's read cache (docs/caching.md).
	reads *readcache.Cache
}

// option changes the configuration a system starts with.
type option func(*config.Config)

// start starts a system on a fresh database and fresh buckets of the
// shared MinIO.
func start(t *testing.T, opts ...option) *system {
	t.Helper()
	buckets, mc := testsupport.NewBuckets(t)
	return startOn(t, buckets, mc, opts...)
}

// startOn starts a system on a fresh database and the buckets st, which mc
// reaches.
func startOn(t *testing.T, st config.Storage, mc *minio.Client, opts ...option) *system {
	t.Helper()
	return startAPI(t, st, mc, nil, opts...)
}

// startWithFaults is start with an API that calls f's functions where a
// crash could strike (api.WithFaults).
func startWithFaults(t *testing.T, f api.Faults, opts ...option) *system {
	t.Helper()
	buckets, mc := testsupport.NewBuckets(t)
	return startAPI(t, buckets, mc, []api.Option{api.WithFaults(f)}, opts...)
}

// startAPI is startOn with the API built with apiOpts.
func startAPI(t *testing.T, st config.Storage, mc *minio.Client, apiOpts []api.Option, opts ...option) *system {
	t.Helper()
	ctx := context.Background()
	db := testsupport.NewDatabase(t)
	cfg := testsupport.Config(t, db, st)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.PublicURL = "http://" + ln.Addr().String()
	cfg.UploadWait = 3 * time.Second
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.Webhooks.PendingLimit != models.DefaultWebhookPendingLimit {
		// The limit reaches RecordEvent as a setting of the connections,
		// as `serve` and `worker` open theirs.
		db.Reopen(t, models.WithWebhookPendingLimit(cfg.Webhooks.PendingLimit))
	}
	log := testLogger()
	tc, err := client.Dial(client.Options{HostPort: cfg.TemporalAddress, Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tc.Close)
	reads, listener := readcache.Listening(cfg.DatabaseURL, readcache.DefaultLimits)
	listening, stopListening := context.WithCancel(context.Background())
	go listener.Run(listening)
	t.Cleanup(stopListening)
	app, err := api.New(api.Deps{Config: cfg, DB: db.DB, Temporal: tc, Storage: mc, Log: log, Reads: reads}, apiOpts...)
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(ln) //nolint:errcheck // ends with Shutdown
	t.Cleanup(func() { _ = app.Shutdown() })

	s := &system{URL: cfg.PublicURL, Config: cfg, DB: db, Storage: mc, Temporal: tc, http: &http.Client{Timeout: time.Minute}, reads: reads}
	s.loadOpenAPI(t)
	s.startWorker(t)
	if s.Site, err = models.CreateSite(ctx, db, "Demo", "demo"); err != nil {
		t.Fatal(err)
	}
	if s.Other, err = models.CreateSite(ctx, db, "Other", "other"); err != nil {
		t.Fatal(err)
	}
	hash, _ := auth.HashPassword(password)
	for _, u := range []struct {
		site  *models.Site
		email string
	}{{s.Site, "editor@demo.test"}, {s.Other, "editor@other.test"}} {
		if _, err := models.CreateUser(ctx, db, u.site.ID, u.email, "Editor", hash); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// loadOpenAPI reads the system's description, as any client would (no token).
func (s *system) loadOpenAPI(t *testing.T) {
	t.Helper()
	resp, err := s.http.Get(s.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /openapi.json = %d %v", resp.StatusCode, err)
	}
	if s.openapi, err = testsupport.LoadOpenAPI(raw); err != nil {
		t.Fatal(err)
	}
}

// checkResponse is call's checks for code with no *testing.T at hand
// (goroutines): the response against /openapi.json, and a body against the
// JSON:API schema. It returns why it fails, or nil.
func (s *system) checkResponse(req *http.Request, resp *http.Response, body []byte) error {
	if err := s.openapi.Check(req, resp.StatusCode, resp.Header, body); err != nil {
		return err
	}
	if len(body) > 0 {
		return testsupport.CheckJSONAPI(body)
	}
	return nil
}

// testLogger discards logs unless PRESSROOM_TEST_LOG is set (then stderr).
func testLogger() *slog.Logger {
	if os.Getenv("PRESSROOM_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// startWorker runs an in-process worker on this test's task queue.
func (s *system) startWorker(t *testing.T) {
	t.Helper()
	w := worker.New(s.Temporal, worker.Deps{Config: s.Config, DB: s.DB.DB, Storage: s.Storage, Log: testLogger()})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	s.stopWkr = w.Stop
	t.Cleanup(w.Stop)
}

var _ sdkworker.Worker // the in-process worker type

// token signs in as email with the password grant.
func (s *system) token(t *testing.T, email string) string {
	t.Helper()
	resp, err := s.http.PostForm(s.URL+"/oauth/token", url.Values{"grant_type": {"password"}, "username": {email}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("password grant for %s: %d %v", email, resp.StatusCode, err)
	}
	return tok.AccessToken
}

// doc is a decoded JSON:API response.
type doc struct {
	Status int
	Header http.Header
	Raw    []byte
	Data   json.RawMessage `json:"data"`
	Errors []struct {
		Status, Code, Detail string
		Source               struct{ Pointer, Parameter string }
	} `json:"errors"`
}

// call sends a JSON:API request and validates the response document.
func (s *system) call(t *testing.T, token, method, path string, body any) *doc {
	t.Helper()
	return s.callWith(t, token, method, path, body)
}

// resource is a generic resource object.
type resource struct {
	Type          string
	ID            string
	Attributes    map[string]any
	Relationships map[string]struct {
		Data  json.RawMessage
		Links struct{ Self, Related string }
	}
	Links struct{ Self string }
	Meta  map[string]any
}

func (d *doc) resource(t *testing.T) resource {
	t.Helper()
	var r resource
	if err := json.Unmarshal(d.Data, &r); err != nil {
		t.Fatalf("data is not a resource: %s", d.Raw)
	}
	return r
}

// signature asks for an upload signature.
func (s *system) signature(t *testing.T, token, filename, contentType string) resource {
	t.Helper()
	d := s.call(t, token, http.MethodPost, "/upload-signatures", map[string]any{
		"data": map[string]any{"type": "upload-signatures", "attributes": map[string]any{"filename": filename, "content-type": contentType}}})
	if d.Status != 200 {
		t.Fatalf("POST /upload-signatures = %d %s", d.Status, d.Raw)
	}
	return d.resource(t)
}

// browserUpload posts file to storage the way a browser form does, with the
// signature's fields under their S3 (x-amz-*) names. It returns storage's status.
func (s *system) browserUpload(t *testing.T, sig resource, file []byte) (int, string) {
	t.Helper()
	req, err := apiclient.NewStorageRequest(context.Background(), sig.Attributes, bytes.NewReader(file), int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// notify posts the upload notice.
func (s *system) notify(t *testing.T, token string, sig resource, fileName string, size int) *doc {
	t.Helper()
	return s.call(t, token, http.MethodPost, "/asset-uploads", map[string]any{"data": map[string]any{"type": "asset-uploads",
		"attributes": map[string]any{"file-name": fileName, "key": sig.Attributes["key"], "content-type": sig.Attributes["content-type"],
			"file-size": size, "user-agent": "pressroom-e2e"}}})
}

// await polls the upload until it leaves "processing".
func (s *system) await(t *testing.T, token, id string, within time.Duration) resource {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		d := s.call(t, token, http.MethodGet, "/asset-uploads/"+id, nil)
		if d.Status != 200 {
			t.Fatalf("GET /asset-uploads/%s = %d %s", id, d.Status, d.Raw)
		}
		r := d.resource(t)
		if r.Attributes["status"] != "processing" {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("upload %s still processing after %s", id, within)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// ingest runs the whole spec workflow for one file and returns the final upload.
func (s *system) ingest(t *testing.T, token, filename, contentType string, file []byte) resource {
	t.Helper()
	sig := s.signature(t, token, filename, contentType)
	if st, b := s.browserUpload(t, sig, file); st != 204 && st != 200 && st != 201 {
		t.Fatalf("storage upload = %d %s", st, b)
	}
	d := s.notify(t, token, sig, filename, len(file))
	if d.Status != 202 {
		t.Fatalf("POST /asset-uploads = %d %s", d.Status, d.Raw)
	}
	up := d.resource(t)
	if up.Attributes["status"] != "processing" || up.Attributes["error-message"] != nil || string(up.Relationships["asset"].Data) != "null" {
		t.Fatalf("accepted upload = %s", d.Raw)
	}
	return s.await(t, token, up.ID, 2*time.Minute)
}

func (s *system) objects(t *testing.T, bucket, prefix string) []string {
	t.Helper()
	var keys []string
	for o := range s.Storage.ListObjects(context.Background(), bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		keys = append(keys, o.Key)
	}
	return keys
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}

// callWith is call with extra request headers.
func (s *system) callWith(t *testing.T, token, method, path string, body any, headers ...string) *doc {
	t.Helper()
	var r io.Reader
	var sent []byte
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r, sent = bytes.NewReader(b), b
	}
	req, _ := http.NewRequest(method, s.URL+path, r)
	req.Header.Set("Accept", "application/vnd.api+json")
	if body != nil {
		req.Header.Set("Content-Type", "application/vnd.api+json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := s.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	d := &doc{Status: resp.StatusCode, Header: resp.Header}
	d.Raw, _ = io.ReadAll(resp.Body)
	if err := s.openapi.Check(req, resp.StatusCode, resp.Header, d.Raw); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode < 300 {
		// What the API accepted, the description must describe.
		if err := s.openapi.CheckRequest(req, sent); err != nil {
			t.Fatal(err)
		}
	}
	if len(d.Raw) > 0 {
		testsupport.ValidateJSONAPI(t, d.Raw)
		if err := json.Unmarshal(d.Raw, d); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
	return d
}
