package testsupport

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/dev"
	"github.com/pressroom/pressroom/storage"
)

// PrivateMinIO is a MinIO server only one test uses, so the test may stop
// and start it again (the fault tests). It listens on free ports, keeps
// its data in the test's temporary directory, has the storage buckets, and
// stops when the test ends.
type PrivateMinIO struct {
	Storage config.Storage // endpoint, credentials and buckets
	Client  *minio.Client
	*privateServer
}

// StartPrivateMinIO starts one; name prefixes its access key and buckets.
func StartPrivateMinIO(t testing.TB, name string) *PrivateMinIO {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := dev.MinIOTool.Ensure(ctx, RepoRoot(t), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	port, console := freePort(t), freePort(t)
	dir := t.TempDir()
	opts := dev.MinIOOptions{
		Bin: bin, DataDir: filepath.Join(dir, "data"), Port: port, ConsolePort: console,
		AccessKey: name, SecretKey: name + "-secret-" + strconv.Itoa(port),
	}
	m := &PrivateMinIO{privateServer: startPrivate(t, "MinIO", dir, func(ctx context.Context, log io.Writer) (*dev.Process, error) {
		p, _, err := dev.StartMinIO(ctx, opts, log)
		return p, err
	})}
	m.Storage = Defaults().Storage
	m.Storage.Endpoint = "http://127.0.0.1:" + strconv.Itoa(port)
	m.Storage.PublicEndpoint = m.Storage.Endpoint
	m.Storage.AccessKey, m.Storage.SecretKey = opts.AccessKey, opts.SecretKey
	m.Storage.UploadsBucket, m.Storage.AssetsBucket = name+"-uploads", name+"-assets"
	if m.Client, err = storage.NewClient(m.Storage); err != nil {
		t.Fatal(err)
	}
	if err := storage.EnsureBuckets(ctx, m.Client, m.Storage); err != nil {
		t.Fatal(err)
	}
	return m
}

// PrivateTemporal is a Temporal dev server only one test uses, with a
// file-backed store, so a restart keeps its workflows and timers.
type PrivateTemporal struct {
	Address string // host:port of its frontend
	*privateServer
}

// StartPrivateTemporal starts one.
func StartPrivateTemporal(t testing.TB) *PrivateTemporal {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := dev.TemporalTool.Ensure(ctx, RepoRoot(t), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	dir := t.TempDir()
	opts := dev.TemporalOptions{Bin: bin, Port: port, DBFile: filepath.Join(dir, "temporal.db")}
	return &PrivateTemporal{Address: "127.0.0.1:" + strconv.Itoa(port),
		privateServer: startPrivate(t, "Temporal", dir, func(ctx context.Context, log io.Writer) (*dev.Process, error) {
			p, _, err := dev.StartTemporal(ctx, opts, log)
			return p, err
		})}
}

// privateServer runs one service process for one test: started at once,
// stopped and started again by the test at will (on the same ports and
// data), stopped when the test ends. Its output goes to a log file in dir.
type privateServer struct {
	what  string
	start func(context.Context, io.Writer) (*dev.Process, error)
	log   *os.File
	mu    sync.Mutex
	proc  *dev.Process // nil while stopped
}

func startPrivate(t testing.TB, what, dir string, start func(context.Context, io.Writer) (*dev.Process, error)) *privateServer {
	t.Helper()
	logf, err := os.Create(filepath.Join(dir, what+".log"))
	if err != nil {
		t.Fatal(err)
	}
	s := &privateServer{what: what, start: start, log: logf}
	s.Start(t)
	t.Cleanup(func() { s.Stop(t); logf.Close() })
	return s
}

// Start starts the server (again).
func (s *privateServer) Start(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.start(ctx, s.log)
	if err != nil {
		t.Fatalf("start private %s (log %s): %v", s.what, s.log.Name(), err)
	}
	s.proc = p
}

// Stop stops the server (SIGTERM, then SIGKILL after 10 s), if running.
func (s *privateServer) Stop(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		if err := s.proc.Stop(10 * time.Second); err != nil {
			t.Log(err)
		}
		s.proc = nil
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	port, err := dev.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}
