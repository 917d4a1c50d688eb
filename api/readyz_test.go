package api_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"go.temporal.io/sdk/client"

	"github.com/pressroom/pressroom/api"
	"github.com/pressroom/pressroom/dev"
	"github.com/pressroom/pressroom/storage"
	"github.com/pressroom/pressroom/testsupport"
)

// liveDeps returns dependencies backed by the real test services.
func liveDeps(t *testing.T) api.Deps {
	t.Helper()
	db := testsupport.NewDatabase(t)
	s, mc := testsupport.NewBuckets(t)
	cfg := testsupport.Config(t, db, s)
	cfg.ReadinessTimeout = 2 * time.Second
	return api.Deps{Config: cfg, DB: db.DB, Temporal: lazyTemporal(t, cfg.TemporalAddress), Storage: mc,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

func lazyTemporal(t *testing.T, addr string) client.Client {
	t.Helper()
	tc, err := client.NewLazyClient(client.Options{HostPort: addr, Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tc.Close)
	return tc
}

func readiness(t *testing.T, d api.Deps) (int, api.Readiness) {
	t.Helper()
	r := do(t, mustApp(t, d), http.MethodGet, "/readyz", "", nil)
	var body api.Readiness
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatalf("readyz body %s: %v", r.body, err)
	}
	for _, name := range []string{"postgres", "temporal", "storage"} {
		if _, ok := body.Checks[name]; !ok {
			t.Errorf("readyz does not report %s: %s", name, r.body)
		}
	}
	return r.status, body
}

// wantOnlyDown asserts that exactly the named check failed.
func wantOnlyDown(t *testing.T, status int, body api.Readiness, down string) {
	t.Helper()
	if status != http.StatusServiceUnavailable || body.Status != "unavailable" {
		t.Fatalf("status %d %q, want 503 unavailable", status, body.Status)
	}
	for name, c := range body.Checks {
		want := "ok"
		if name == down {
			want = "error"
		}
		if c.Status != want {
			t.Errorf("check %s = %s (%s), want %s", name, c.Status, c.Error, want)
		}
	}
	if body.Checks[down].Error == "" {
		t.Errorf("check %s failed without saying why", down)
	}
}

func TestReadyWhenEverythingIsUp(t *testing.T) {
	t.Parallel()
	status, body := readiness(t, liveDeps(t))
	if status != 200 || body.Status != "ok" {
		t.Fatalf("readyz = %d %+v", status, body)
	}
}

func TestNotReadyWhenTemporalIsElsewhere(t *testing.T) {
	t.Parallel()
	d := liveDeps(t)
	port, _ := dev.FreePort()
	d.Temporal = lazyTemporal(t, fmt.Sprintf("127.0.0.1:%d", port))
	status, body := readiness(t, d)
	wantOnlyDown(t, status, body, "temporal")
}

func TestNotReadyWhenPostgresIsDown(t *testing.T) {
	t.Parallel()
	d := liveDeps(t)
	port, _ := dev.FreePort()
	cfg, _ := pgx.ParseConfig(fmt.Sprintf("postgres://postgres@127.0.0.1:%d/x?sslmode=disable&connect_timeout=1", port))
	d.DB = bun.NewDB(sql.OpenDB(stdlib.GetConnector(*cfg)), pgdialect.New())
	t.Cleanup(func() { d.DB.Close() })
	status, body := readiness(t, d)
	wantOnlyDown(t, status, body, "postgres")
}

func TestNotReadyWhenMinIOStops(t *testing.T) {
	t.Parallel()
	d := liveDeps(t)
	// A MinIO of this test's own, so stopping it disturbs no other test.
	root := testsupport.RepoRoot(t)
	bin, err := dev.MinIOTool.Ensure(context.Background(), root, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := dev.FreePort()
	console, _ := dev.FreePort()
	dir, _ := os.MkdirTemp("", "readyz-minio-")
	t.Cleanup(func() { os.RemoveAll(dir) })
	proc, endpoint, err := dev.StartMinIO(context.Background(), dev.MinIOOptions{
		Bin: bin, DataDir: dir, Port: port, ConsolePort: console, AccessKey: "readyz", SecretKey: "readyz-secret",
	}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proc.Stop(5 * time.Second) })
	s := d.Config.Storage
	s.Endpoint, s.AccessKey, s.SecretKey = endpoint, "readyz", "readyz-secret"
	mc, err := storage.NewClient(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := storage.EnsureBuckets(context.Background(), mc, s); err != nil {
		t.Fatal(err)
	}
	d.Config.Storage, d.Storage = s, mc

	if status, body := readiness(t, d); status != 200 {
		t.Fatalf("before stopping MinIO: %d %+v", status, body)
	}
	if err := proc.Stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	status, body := readiness(t, d)
	wantOnlyDown(t, status, body, "storage")
}

func TestNotReadyWhenABucketIsMissing(t *testing.T) {
	t.Parallel()
	d := liveDeps(t)
	d.Config.Storage.AssetsBucket = "no-such-bucket-" + fmt.Sprint(time.Now().UnixNano())
	status, body := readiness(t, d)
	wantOnlyDown(t, status, body, "storage")
}

// /readyz answers anyone: a failed check says which, never the driver's
// message (database user, host, port, bucket names); that goes to the log.
// Every dependency here is a closed port, so no service is needed.
func TestReadyzTellsOnlyWhichCheckFailed(t *testing.T) {
	t.Parallel()
	ports := make([]string, 3)
	for i := range ports {
		p, err := dev.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = strconv.Itoa(p)
	}
	cfg := testsupport.Defaults()
	cfg.ReadinessTimeout = 2 * time.Second
	cfg.Storage.Endpoint = "http://127.0.0.1:" + ports[2]
	cfg.Storage.UploadsBucket, cfg.Storage.AssetsBucket = "leaky-uploads", "leaky-assets"
	pg := must(pgx.ParseConfig("postgres://leakyuser@127.0.0.1:" + ports[0] + "/leakydb?sslmode=disable&connect_timeout=1"))
	db := bun.NewDB(sql.OpenDB(stdlib.GetConnector(*pg)), pgdialect.New())
	t.Cleanup(func() { db.Close() })
	var logs syncBuffer
	d := api.Deps{Config: cfg, DB: db, Temporal: lazyTemporal(t, "127.0.0.1:"+ports[1]),
		Storage: must(storage.NewClient(cfg.Storage)), Log: slog.New(slog.NewTextHandler(&logs, nil))}

	r := do(t, mustApp(t, d), http.MethodGet, "/readyz", "", nil)
	var body api.Readiness
	if err := json.Unmarshal(r.body, &body); err != nil || r.status != http.StatusServiceUnavailable {
		t.Fatalf("readyz = %d %s", r.status, r.body)
	}
	for _, name := range []string{"postgres", "temporal", "storage"} {
		if c := body.Checks[name]; c.Status != "error" || c.Error == "" {
			t.Errorf("check %s = %+v, want a failure", name, c)
		}
	}
	for _, leak := range append([]string{"leaky", "127.0.0.1", "user=", "dial", "connect"}, ports...) {
		if strings.Contains(string(r.body), leak) {
			t.Errorf("the body tells anonymous callers %q: %s", leak, r.body)
		}
	}
	log := logs.String()
	for _, name := range []string{"postgres", "temporal", "storage"} {
		if !strings.Contains(log, "check="+name) {
			t.Errorf("the log does not say why %s failed:\n%s", name, log)
		}
	}
	if !strings.Contains(log, "leakyuser") || !strings.Contains(log, ports[0]) {
		t.Errorf("the log lacks the database error's detail:\n%s", log)
	}
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a logger.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestHealthzNeedsNoDependency(t *testing.T) {
	t.Parallel()
	r := do(t, offlineApp(t), http.MethodGet, "/healthz", "", nil)
	if r.status != 200 {
		t.Fatalf("healthz = %d", r.status)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}
