// Package benchenv sets up what the benchmark programs measure: the
// services (named by the PRESSROOM_TEST_* variables, else a private stack
// started with dev.Up), a fresh migrated database, fresh buckets, the API
// in the benchmark's process, a site with a signed-in user and, for those
// that want one, `pressroom worker` as a separate process. It also holds
// the small measurement helpers the programs share.
//
// Everything an Env creates is removed by Close.
package benchenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/minio/minio-go/v7"
	"github.com/uptrace/bun"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/pressroom/pressroom/api"
	"github.com/pressroom/pressroom/auth"
	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/dev"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/readcache"
	"github.com/pressroom/pressroom/storage"
	"github.com/pressroom/pressroom/testsupport"
)

// The bench user, whom User creates and signs in.
const (
	Email    = "bench@bench.test"
	Password = "pressroom-bench"
)

// Env is one benchmark run's Pressroom. New sets Root, Dir and Log; Up
// sets the rest.
type Env struct {
	Root  string // the repository root
	Dir   string // a temporary directory, removed by Close unless kept
	Where string // where the services come from, for the report

	// Config points at the fresh database and buckets, a task queue of the
	// run's own and the API's address; AutoMigrate is off.
	Config   config.Config
	DB       *bun.DB // the API's
	Storage  *minio.Client
	Temporal client.Client
	Log      *slog.Logger // discards; for the API and in-process workers

	// SiteUploadLimit, when set before Up, replaces the default cap on one
	// site's uploads processing at once (a benchmark running more at once
	// than the default would get 429s).
	SiteUploadLimit int

	// Database, when set before Up, names the run's database: created
	// when missing, migrated, and kept by Close, so that a later run can
	// reuse what this one seeded (bench/search -db); SiteUser then signs
	// in to a site and user that exist already.
	Database string

	postgres string // server URL (maintenance database)
	cleanups []func()
}

// New finds the repository root from the working directory and makes a
// temporary directory named after prefix; with keep, Close leaves it and
// its path is printed.
func New(prefix string, keep bool) (*Env, error) {
	root, err := dev.CheckoutRoot()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, err
	}
	e := &Env{Root: root, Dir: dir, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if keep {
		fmt.Println("keeping", dir)
	} else {
		e.Defer(func() { os.RemoveAll(dir) })
	}
	return e, nil
}

// Defer has Close run fn; Close runs them in reverse order.
func (e *Env) Defer(fn func()) { e.cleanups = append(e.cleanups, fn) }

// Close removes everything the Env created, last first.
func (e *Env) Close() {
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
	e.cleanups = nil
}

// Up gets the services, creates a fresh database (migrated) and fresh
// buckets on them, and serves the API in this process on a free port.
func (e *Env) Up(ctx context.Context) error {
	svc, err := e.services(ctx)
	if err != nil {
		return err
	}
	e.postgres = svc.postgres
	suffix := randomSuffix()
	cfg, err := config.FromEnv(func(string) string { return "" })
	if err != nil {
		return err
	}
	st := svc.storage
	st.UploadsBucket, st.AssetsBucket = "bench-"+suffix+"-uploads", "bench-"+suffix+"-assets"
	cfg.TemporalAddress, cfg.TaskQueue, cfg.Storage = svc.temporal, "bench-"+suffix, st
	cfg.PublishTaskQueue = cfg.TaskQueue + "-publish"
	cfg.Webhooks.TaskQueue = cfg.TaskQueue + "-webhooks"
	// Benchmark receivers listen on this machine.
	cfg.Webhooks.AllowPrivate = true
	// A benchmark stack: its worker process accepts the default secret keys.
	cfg.Dev = true
	cfg.AutoMigrate = false
	if e.SiteUploadLimit > 0 {
		cfg.SiteUploadLimit = e.SiteUploadLimit
	}
	if e.Database != "" {
		cfg.DatabaseURL, err = e.keptDatabase(ctx, e.Database)
	} else {
		cfg.DatabaseURL, err = e.freshDatabase(ctx, "pr_bench_"+suffix)
	}
	if err != nil {
		return err
	}
	e.Config = cfg

	if e.DB, err = e.OpenDB(ctx); err != nil {
		return err
	}
	m, err := models.NewMigrator(e.DB)
	if err != nil {
		return err
	}
	if _, err := m.Up(ctx); err != nil {
		return err
	}
	if e.Storage, err = e.freshBuckets(ctx, st); err != nil {
		return err
	}
	return e.serveAPI()
}

// svcs are the running dependencies.
type svcs struct {
	postgres string // server URL (maintenance database)
	temporal string
	storage  config.Storage
}

// services returns the services named by the PRESSROOM_TEST_* variables,
// else starts a private stack in Dir (stopped by Close); it sets Where.
func (e *Env) services(ctx context.Context) (svcs, error) {
	defaults, err := config.FromEnv(func(string) string { return "" })
	if err != nil {
		return svcs{}, err
	}
	if pg := os.Getenv(dev.EnvTestPostgres); pg != "" {
		st := defaults.Storage
		st.Endpoint = os.Getenv(dev.EnvTestS3Endpoint)
		st.PublicEndpoint = st.Endpoint
		st.AccessKey, st.SecretKey = os.Getenv(dev.EnvTestS3AccessKey), os.Getenv(dev.EnvTestS3SecretKey)
		e.Where = "from PRESSROOM_TEST_* (devstack exec)"
		return svcs{postgres: pg, temporal: os.Getenv(dev.EnvTestTemporal), storage: st}, nil
	}
	fmt.Fprintln(os.Stderr, "starting a private stack (no PRESSROOM_TEST_* variables)...")
	stack, err := dev.Up(ctx, dev.StackOptions{
		RepoRoot: e.Root, StateDir: filepath.Join(e.Dir, "stack"), DatabaseURL: os.Getenv("DATABASE_URL"), Database: "pressroom", Log: os.Stderr,
	})
	if err != nil {
		return svcs{}, err
	}
	e.Defer(func() {
		if err := stack.Down(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the stack:", err)
		}
	})
	e.Where = "private stack (dev.Up)"
	return svcs{postgres: stack.Postgres.ServerURL, temporal: stack.TemporalAddress, storage: stack.Storage}, nil
}

// freshDatabase creates the database name (dropped by Close) and returns
// its URL.
func (e *Env) freshDatabase(ctx context.Context, name string) (string, error) {
	if err := withServer(ctx, e.postgres, func(conn *pgx.Conn) error { return dev.CreateDatabase(ctx, conn, name, "") }); err != nil {
		return "", err
	}
	e.Defer(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = withServer(ctx, e.postgres, func(conn *pgx.Conn) error {
			_, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
			return err
		})
	})
	u, err := url.Parse(e.postgres)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

// keptDatabase creates the database name unless it exists, and returns its
// URL; Close leaves it.
func (e *Env) keptDatabase(ctx context.Context, name string) (string, error) {
	if err := withServer(ctx, e.postgres, func(conn *pgx.Conn) error { return dev.CreateDatabase(ctx, conn, name, "") }); err != nil {
		return "", err
	}
	u, err := url.Parse(e.postgres)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

// OpenDB opens a connection pool of its own on the run's database (closed
// by Close): a worker in this process gets one, so that its queries can be
// told from the API's.
func (e *Env) OpenDB(ctx context.Context) (*bun.DB, error) {
	if e.Config.DatabaseURL == "" {
		return nil, errors.New("benchenv: OpenDB before Up")
	}
	db, err := models.Open(ctx, e.Config.DatabaseURL, models.WithWebhookPendingLimit(e.Config.Webhooks.PendingLimit))
	if err != nil {
		return nil, err
	}
	e.Defer(func() { db.Close() })
	return db, nil
}

// freshBuckets creates st's buckets (removed, with their objects, by Close).
func (e *Env) freshBuckets(ctx context.Context, st config.Storage) (*minio.Client, error) {
	mc, err := storage.NewClient(st)
	if err != nil {
		return nil, err
	}
	if err := storage.EnsureBuckets(ctx, mc, st); err != nil {
		return nil, err
	}
	e.Defer(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, b := range []string{st.UploadsBucket, st.AssetsBucket} {
			_ = mc.RemoveBucketWithOptions(ctx, b, minio.RemoveBucketOptions{ForceDelete: true})
		}
	})
	return mc, nil
}

// serveAPI dials Temporal and serves the API on a free port of 127.0.0.1,
// which becomes Config.PublicURL.
func (e *Env) serveAPI() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	e.Config.PublicURL = "http://" + ln.Addr().String()
	tc, err := client.Dial(client.Options{HostPort: e.Config.TemporalAddress, Namespace: e.Config.TemporalNamespace, Logger: quietLogger{}})
	if err != nil {
		ln.Close()
		return fmt.Errorf("temporal: %w", err)
	}
	e.Temporal = tc
	e.Defer(tc.Close)
	reads, listener := readcache.Listening(e.Config.DatabaseURL, readcache.DefaultLimits)
	listening, stopListening := context.WithCancel(context.Background())
	go listener.Run(listening)
	e.Defer(stopListening)
	app, err := api.New(api.Deps{Config: e.Config, DB: e.DB, Temporal: tc, Storage: e.Storage, Log: e.Log, Reads: reads})
	if err != nil {
		ln.Close()
		return err
	}
	go app.Listener(ln) //nolint:errcheck // ends with Shutdown
	e.Defer(func() { _ = app.Shutdown() })
	return nil
}

// User creates the site "Bench" and the bench user on it, and returns a
// client signed in as that user (password grant).
func (e *Env) User(ctx context.Context) (*Client, error) {
	return e.SiteUser(ctx, "bench", Email)
}

// SiteUser creates the site slug and a user email of it (password
// Password), and returns a client signed in as that user: benchmarks of
// several sites (bench/uploads/fairness).
func (e *Env) SiteUser(ctx context.Context, slug, email string) (*Client, error) {
	if e.Database != "" {
		var n int
		if err := e.DB.NewRaw("SELECT count(*) FROM sites WHERE subdomain_slug = ?", slug).Scan(ctx, &n); err != nil {
			return nil, err
		}
		if n > 0 { // a kept database: the site and its user exist
			c := newClient(e.Config.PublicURL, &http.Client{Timeout: time.Minute})
			return c, c.signIn(ctx, email)
		}
	}
	site, err := models.CreateSite(ctx, e.DB, strings.ToUpper(slug[:1])+slug[1:], slug)
	if err != nil {
		return nil, err
	}
	hash, err := auth.HashPassword(Password)
	if err != nil {
		return nil, err
	}
	if _, err := models.CreateUser(ctx, e.DB, site.ID, email, "Bench", hash); err != nil {
		return nil, err
	}
	c := newClient(e.Config.PublicURL, &http.Client{Timeout: time.Minute})
	if err := c.signIn(ctx, email); err != nil {
		return nil, err
	}
	return c, nil
}

// StartWorker runs `pressroom worker` (bin) on the run's database, buckets
// and task queue, as a separate process with TMPDIR Dir/tmp and its output
// in the log file it returns (Dir/worker.log), and waits until it polls
// the task queue's activities. Close stops it.
func (e *Env) StartWorker(ctx context.Context, bin string) (p *dev.Process, logPath string, err error) {
	logPath = filepath.Join(e.Dir, "worker.log")
	wlog, err := os.Create(logPath)
	if err != nil {
		return nil, "", err
	}
	e.Defer(func() { wlog.Close() })
	tmp := filepath.Join(e.Dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return nil, "", err
	}
	p, err = dev.StartProcess("worker", bin, []string{"worker"}, testsupport.WorkerEnv(e.Config, tmp), wlog, nil)
	if err != nil {
		return nil, "", err
	}
	e.Defer(func() { _ = p.Stop(15 * time.Second) })
	if err := p.WaitFor(ctx, time.Minute, func(ctx context.Context) error { return e.polled(ctx) }); err != nil {
		return nil, "", fmt.Errorf("%w (worker log: %s)", err, logPath)
	}
	return p, logPath, nil
}

// polled tells whether a worker polls the run's task queue's activities.
func (e *Env) polled(ctx context.Context) error {
	resp, err := e.Temporal.DescribeTaskQueue(ctx, e.Config.TaskQueue, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
	if err != nil {
		return err
	}
	if len(resp.GetPollers()) == 0 {
		return errors.New("no worker polls " + e.Config.TaskQueue + " yet")
	}
	return nil
}

func withServer(ctx context.Context, serverURL string, fn func(*pgx.Conn) error) error {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return fmt.Errorf("connect to postgres: %w", err)
	}
	defer conn.Close(context.Background())
	return fn(conn)
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// quietLogger silences the Temporal client.
type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}
