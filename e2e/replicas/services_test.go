package replicas_test

import (
	"context"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/minio/minio-go/v7"

	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/dev"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/storage"
	"github.com/pressroom/pressroom/testsupport"
)

// Services of one test's own, which it may stop: the shared ones serve
// every other test of the run.

// privatePostgres starts a PostgreSQL cluster for the test and returns it
// with a migrated database on it. It is stopped when the test ends.
func privatePostgres(t *testing.T) (*dev.PrivateCluster, *testsupport.Database) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "pressroom-replicas-pg-")
	if err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "pg_ctl.log"))
	if err != nil {
		t.Fatal(err)
	}
	pg, err := dev.StartPrivateCluster(ctx, filepath.Join(dir, "data"), logf)
	if err != nil {
		os.RemoveAll(dir)
		t.Skipf("no private PostgreSQL cluster can be started on this machine (%v); the Postgres restart test needs one, because the shared server must not be restarted", err)
	}
	t.Cleanup(func() {
		_ = pg.Stop(context.Background(), "immediate")
		logf.Close()
		os.RemoveAll(dir)
	})
	conn, err := pgx.Connect(ctx, pg.ServerURL)
	if err != nil {
		t.Fatal(err)
	}
	err = dev.CreateDatabase(ctx, conn, "pressroom", "")
	conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(pg.ServerURL)
	u.Path = "/pressroom"
	db, err := models.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	m, err := models.NewMigrator(db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Up(ctx); err != nil {
		t.Fatal(err)
	}
	return pg, &testsupport.Database{DB: db, URL: u.String()}
}

// privateTemporal is a Temporal dev server with a file-backed store, so a
// restart keeps its workflows.
type privateTemporal struct {
	Address string
	opts    dev.TemporalOptions
	log     *os.File
	mu      sync.Mutex
	proc    *dev.Process
}

func startPrivateTemporal(t *testing.T) *privateTemporal {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := dev.TemporalTool.Ensure(ctx, testsupport.RepoRoot(t), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	port, err := dev.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	logf, err := os.Create(filepath.Join(dir, "temporal.log"))
	if err != nil {
		t.Fatal(err)
	}
	p := &privateTemporal{Address: "127.0.0.1:" + strconv.Itoa(port), log: logf,
		opts: dev.TemporalOptions{Bin: bin, Port: port, DBFile: filepath.Join(dir, "temporal.db")}}
	p.start(t)
	t.Cleanup(func() { p.stop(t); logf.Close() })
	return p
}

func (p *privateTemporal) start(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p.mu.Lock()
	defer p.mu.Unlock()
	proc, _, err := dev.StartTemporal(ctx, p.opts, p.log)
	if err != nil {
		t.Fatalf("start private Temporal (log %s): %v", p.log.Name(), err)
	}
	p.proc = proc
}

func (p *privateTemporal) stop(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.proc != nil {
		if err := p.proc.Stop(10 * time.Second); err != nil {
			t.Log(err)
		}
		p.proc = nil
	}
}

// privateMinIO is a MinIO server with the storage buckets on it.
type privateMinIO struct {
	Storage config.Storage
	Client  *minio.Client
	opts    dev.MinIOOptions
	log     *os.File
	mu      sync.Mutex
	proc    *dev.Process
}

func startPrivateMinIO(t *testing.T) *privateMinIO {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := dev.MinIOTool.Ensure(ctx, testsupport.RepoRoot(t), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	port, err := dev.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	console, err := dev.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "minio.log"))
	if err != nil {
		t.Fatal(err)
	}
	m := &privateMinIO{log: logf, opts: dev.MinIOOptions{Bin: bin, DataDir: filepath.Join(dir, "data"), Port: port, ConsolePort: console,
		AccessKey: "replicas-test", SecretKey: "replicas-test-secret-" + strconv.Itoa(port)}}
	m.start(t)
	t.Cleanup(func() { m.stop(t); logf.Close() })
	m.Storage = testsupport.Defaults().Storage
	m.Storage.Endpoint = "http://127.0.0.1:" + strconv.Itoa(port)
	m.Storage.PublicEndpoint = m.Storage.Endpoint
	m.Storage.AccessKey, m.Storage.SecretKey = m.opts.AccessKey, m.opts.SecretKey
	if m.Client, err = storage.NewClient(m.Storage); err != nil {
		t.Fatal(err)
	}
	if err := storage.EnsureBuckets(ctx, m.Client, m.Storage); err != nil {
		t.Fatal(err)
	}
	return m
}

func (m *privateMinIO) start(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	m.mu.Lock()
	defer m.mu.Unlock()
	p, _, err := dev.StartMinIO(ctx, m.opts, m.log)
	if err != nil {
		t.Fatalf("start private MinIO (log %s): %v", m.log.Name(), err)
	}
	m.proc = p
}

func (m *privateMinIO) stop(t *testing.T) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.proc != nil {
		if err := m.proc.Stop(10 * time.Second); err != nil {
			t.Log(err)
		}
		m.proc = nil
	}
}
