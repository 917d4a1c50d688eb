package dev

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/storage"
)

// Well-known local ports used by `make dev`; tests take free ones instead.
const (
	TemporalPort     = 7233
	TemporalUIPort   = 8233
	MinIOPort        = 9000
	MinIOConsolePort = 9001
)

// StackOptions configures Up.
type StackOptions struct {
	RepoRoot string
	// StateDir holds data and logs: .dev for `make dev`, a temporary
	// directory for tests.
	StateDir string
	// Persistent keeps Temporal's history in a file and serves its Web UI.
	Persistent bool
	// FixedPorts uses the well-known ports above instead of free ones.
	FixedPorts bool
	// DatabaseURL is DATABASE_URL, if set.
	DatabaseURL string
	// Database is the database name to create on a found or started server.
	Database string
	// Storage credentials MinIO is started with.
	AccessKey, SecretKey string
	// Log receives progress lines; service output goes to StateDir/logs.
	Log io.Writer
}

// Stack is a running set of Pressroom's dependencies.
type Stack struct {
	Postgres        *Postgres
	TemporalAddress string
	TemporalUI      string
	S3Endpoint      string
	MinIOConsole    string
	Storage         config.Storage
	procMu          sync.Mutex // track is called from Up's parallel starters
	procs           []*Process
	logMu           sync.Mutex // logFile is called from Up's parallel starters
	logFiles        []*os.File
}

// Up starts Postgres (or finds one), the Temporal dev server and MinIO in
// parallel, and creates the storage buckets. On error it stops whatever it
// started.
func Up(ctx context.Context, o StackOptions) (_ *Stack, err error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.AccessKey == "" {
		o.AccessKey, o.SecretKey = "pressroom", "pressroom-dev-secret"
	}
	if err := os.MkdirAll(filepath.Join(o.StateDir, "logs"), 0o755); err != nil {
		return nil, fmt.Errorf("create state directory: %w", err)
	}
	// Build both tools first (in parallel, cached) so the servers start together.
	var temporalBin, minioBin string
	if err := parallel(
		func() (e error) { temporalBin, e = TemporalTool.Ensure(ctx, o.RepoRoot, o.Log); return },
		func() (e error) { minioBin, e = MinIOTool.Ensure(ctx, o.RepoRoot, o.Log); return },
	); err != nil {
		return nil, err
	}
	ports, err := o.ports()
	if err != nil {
		return nil, err
	}

	s := &Stack{}
	defer func() {
		if err != nil {
			_ = s.Down()
		}
	}()
	err = parallel(
		func() error {
			pg, err := SelectPostgres(ctx, PostgresOptions{
				DatabaseURL: o.DatabaseURL, DataDir: filepath.Join(o.StateDir, "postgres"), Database: o.Database, Log: o.Log,
			})
			if err != nil {
				return err
			}
			s.Postgres = pg
			return nil
		},
		func() error { return s.startTemporal(ctx, o, temporalBin, ports) },
		func() error { return s.startMinIO(ctx, o, minioBin, ports) },
	)
	if err != nil {
		return nil, err
	}
	if err := s.createBuckets(ctx, o); err != nil {
		return nil, err
	}
	return s, nil
}

// track adds p to the processes Down stops.
func (s *Stack) track(p *Process) {
	s.procMu.Lock()
	defer s.procMu.Unlock()
	s.procs = append(s.procs, p)
}

// startTemporal starts the Temporal dev server from bin on ports[0] (and
// its Web UI on ports[1] if o.Persistent).
func (s *Stack) startTemporal(ctx context.Context, o StackOptions, bin string, ports []int) error {
	to := TemporalOptions{Bin: bin, Port: ports[0]}
	if o.Persistent {
		to.DBFile = filepath.Join(o.StateDir, "temporal.db")
		to.UIPort = ports[1]
	}
	out, err := s.logFile(o.StateDir, "temporal")
	if err != nil {
		return err
	}
	p, addr, err := StartTemporal(ctx, to, out)
	if err != nil {
		return fmt.Errorf("temporal dev server (log: %s): %w", out.Name(), err)
	}
	s.track(p)
	s.TemporalAddress = addr
	if to.UIPort != 0 {
		s.TemporalUI = fmt.Sprintf("http://127.0.0.1:%d", to.UIPort)
	}
	return nil
}

// startMinIO starts MinIO from bin on ports[2], its console on ports[3].
func (s *Stack) startMinIO(ctx context.Context, o StackOptions, bin string, ports []int) error {
	out, err := s.logFile(o.StateDir, "minio")
	if err != nil {
		return err
	}
	p, endpoint, err := StartMinIO(ctx, MinIOOptions{
		Bin: bin, DataDir: filepath.Join(o.StateDir, "minio"), Port: ports[2], ConsolePort: ports[3],
		AccessKey: o.AccessKey, SecretKey: o.SecretKey,
	}, out)
	if err != nil {
		return fmt.Errorf("minio (log: %s): %w", out.Name(), err)
	}
	s.track(p)
	s.S3Endpoint = endpoint
	s.MinIOConsole = fmt.Sprintf("http://127.0.0.1:%d", ports[3])
	return nil
}

// createBuckets sets s.Storage, the default storage configuration pointed
// at the started MinIO, and creates its buckets.
func (s *Stack) createBuckets(ctx context.Context, o StackOptions) error {
	cfg, err := config.FromEnv(func(string) string { return "" })
	if err != nil {
		return err
	}
	s.Storage = cfg.Storage
	s.Storage.Endpoint, s.Storage.PublicEndpoint = s.S3Endpoint, s.S3Endpoint
	s.Storage.AccessKey, s.Storage.SecretKey = o.AccessKey, o.SecretKey
	mc, err := storage.NewClient(s.Storage)
	if err != nil {
		return err
	}
	return storage.EnsureBuckets(ctx, mc, s.Storage)
}

func (o StackOptions) ports() ([]int, error) {
	if o.FixedPorts {
		want := []int{TemporalPort, TemporalUIPort, MinIOPort, MinIOConsolePort}
		for _, p := range want {
			if !PortFree(p) {
				return nil, fmt.Errorf("port %d on 127.0.0.1 is taken: is another `make dev` running? Stop it or free the port", p)
			}
		}
		return want, nil
	}
	ports := make([]int, 4)
	for i := range ports {
		p, err := FreePort()
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	return ports, nil
}

func (s *Stack) logFile(stateDir, name string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(stateDir, "logs", name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s log: %w", name, err)
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	s.logFiles = append(s.logFiles, f)
	return f, nil
}

// Env is the environment that points Pressroom's binaries at this stack.
func (s *Stack) Env() []string {
	return []string{
		"DATABASE_URL=" + s.Postgres.URL,
		"TEMPORAL_ADDRESS=" + s.TemporalAddress,
		"PRESSROOM_S3_ENDPOINT=" + s.S3Endpoint,
		"PRESSROOM_S3_ACCESS_KEY=" + s.Storage.AccessKey,
		"PRESSROOM_S3_SECRET_KEY=" + s.Storage.SecretKey,
	}
}

// Processes are the servers the stack started (Postgres clusters excluded).
func (s *Stack) Processes() []*Process { return s.procs }

// Down stops every server the stack started, the newest first.
func (s *Stack) Down() error {
	var errs []error
	for i := len(s.procs) - 1; i >= 0; i-- {
		errs = append(errs, s.procs[i].Stop(15*time.Second))
	}
	if s.Postgres != nil {
		errs = append(errs, s.Postgres.Stop())
	}
	for _, f := range s.logFiles {
		f.Close()
	}
	return errors.Join(errs...)
}

// parallel runs fns at once and returns their errors joined.
func parallel(fns ...func() error) error {
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Go(func() { errs[i] = fn() })
	}
	wg.Wait()
	return errors.Join(errs...)
}
