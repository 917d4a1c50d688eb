package dev

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Where the database came from, as SelectPostgres reports it.
const (
	PostgresFromURL            = "DATABASE_URL"
	PostgresFromLocalServer    = "local server"
	PostgresFromPrivateCluster = "private cluster"
)

// DefaultLocalPostgres is the server tried when DATABASE_URL is not set.
const DefaultLocalPostgres = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// PostgresOptions says how to find or start a database.
type PostgresOptions struct {
	DatabaseURL string // the DATABASE_URL variable; used as it is when set
	LocalURL    string // a server to try next (DefaultLocalPostgres)
	DataDir     string // where a private cluster lives
	Database    string // database to create on a found or started server
	Log         io.Writer

	// Seams for tests of the selection logic; nil means the real thing.
	Probe        func(ctx context.Context, url string) error
	FindBinaries func() (string, error)
	StartCluster func(ctx context.Context, binDir, dataDir string, log io.Writer) (serverURL string, stop func() error, err error)
	EnsureDB     func(ctx context.Context, serverURL, name string) error
}

// Postgres is the database SelectPostgres settled on.
type Postgres struct {
	// URL connects to the service's database.
	URL string
	// ServerURL connects to the server's maintenance database; tests create
	// their own databases through it.
	ServerURL string
	// Source says which rule chose it.
	Source string
	stop   func() error
}

// Stop stops a private cluster that SelectPostgres started; else it does nothing.
func (p *Postgres) Stop() error {
	if p.stop == nil {
		return nil
	}
	return p.stop()
}

// SelectPostgres picks the database, in this order: DATABASE_URL if set;
// else a server answering at LocalURL (creating the database); else a
// private cluster under DataDir started from the installed initdb and
// pg_ctl; else an error that says what to install.
func SelectPostgres(ctx context.Context, o PostgresOptions) (*Postgres, error) {
	if o.Probe == nil {
		o.Probe = probePostgres
	}
	if o.FindBinaries == nil {
		o.FindBinaries = findPostgresBinaries
	}
	if o.StartCluster == nil {
		o.StartCluster = startPrivateCluster
	}
	if o.EnsureDB == nil {
		o.EnsureDB = ensureDatabase
	}
	if o.LocalURL == "" {
		o.LocalURL = DefaultLocalPostgres
	}
	if o.Log == nil {
		o.Log = io.Discard
	}

	if o.DatabaseURL != "" {
		if err := o.Probe(ctx, o.DatabaseURL); err != nil {
			return nil, fmt.Errorf("DATABASE_URL is set but its server does not answer: %w", err)
		}
		server, err := withDatabase(o.DatabaseURL, "postgres")
		if err != nil {
			return nil, err
		}
		return &Postgres{URL: o.DatabaseURL, ServerURL: server, Source: PostgresFromURL}, nil
	}

	if err := o.Probe(ctx, o.LocalURL); err == nil {
		return finish(ctx, o, o.LocalURL, PostgresFromLocalServer, nil)
	}

	binDir, err := o.FindBinaries()
	if err != nil {
		return nil, errors.New("no PostgreSQL to use: DATABASE_URL is not set, nothing answers at " + redact(o.LocalURL) +
			", and initdb/pg_ctl are not installed. Install PostgreSQL (Debian/Ubuntu: apt-get install postgresql; macOS: brew install postgresql) or set DATABASE_URL")
	}
	fmt.Fprintf(o.Log, "no PostgreSQL at %s; starting a private cluster in %s with %s\n", redact(o.LocalURL), o.DataDir, binDir)
	serverURL, stop, err := o.StartCluster(ctx, binDir, o.DataDir, o.Log)
	if err != nil {
		return nil, fmt.Errorf("start private PostgreSQL cluster: %w", err)
	}
	return finish(ctx, o, serverURL, PostgresFromPrivateCluster, stop)
}

func finish(ctx context.Context, o PostgresOptions, serverURL, source string, stop func() error) (*Postgres, error) {
	if err := o.EnsureDB(ctx, serverURL, o.Database); err != nil {
		if stop != nil {
			_ = stop()
		}
		return nil, err
	}
	dbURL, err := withDatabase(serverURL, o.Database)
	if err != nil {
		return nil, err
	}
	return &Postgres{URL: dbURL, ServerURL: serverURL, Source: source, stop: stop}, nil
}

func withDatabase(rawURL, name string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("parse database URL: %w", err)
	}
	u.Path = "/" + name
	return u.String(), nil
}

// redact drops a password from a URL before it is printed.
func redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(unparseable URL)"
	}
	return u.Redacted()
}

func probePostgres(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return conn.Ping(ctx)
}

// ensureDatabase creates database name on the server unless it exists.
func ensureDatabase(ctx context.Context, serverURL, name string) error {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", redact(serverURL), err)
	}
	defer conn.Close(context.Background())
	return CreateDatabase(ctx, conn, name, "")
}

// CreateDatabase creates a database, from template when it is not empty; an
// existing database is not an error.
func CreateDatabase(ctx context.Context, conn *pgx.Conn, name, template string) error {
	sql := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if template != "" {
		sql += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	if _, err := conn.Exec(ctx, sql); err != nil {
		var pgErr *pgconn.PgError
		// 42P04: it exists. 23505: another process created it at the same
		// moment (two test binaries starting against one server), which
		// Postgres reports as a unique violation on pg_database.
		if errors.As(err, &pgErr) && (pgErr.Code == "42P04" || pgErr.Code == "23505") {
			return nil
		}
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}

// findPostgresBinaries finds a directory holding initdb and pg_ctl: on PATH,
// else the newest Debian-style /usr/lib/postgresql/<version>/bin.
func findPostgresBinaries() (string, error) {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return pgVersion(dirs[i]) > pgVersion(dirs[j]) })
	for _, d := range append(dirs, "/usr/local/pgsql/bin", "/opt/homebrew/bin", "/usr/local/bin") {
		_, e1 := os.Stat(filepath.Join(d, "initdb"))
		_, e2 := os.Stat(filepath.Join(d, "pg_ctl"))
		if e1 == nil && e2 == nil {
			return d, nil
		}
	}
	return "", errNotFound
}

func pgVersion(binDir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return v
}

// startPrivateCluster initialises (once) and starts a cluster in dataDir,
// listening on 127.0.0.1 only, with trust auth for the postgres role. As
// root it runs the server as the "postgres" system user, because initdb and
// postgres refuse to run as root.
func startPrivateCluster(ctx context.Context, binDir, dataDir string, log io.Writer) (string, func() error, error) {
	dataDir, err := filepath.Abs(dataDir)
	if err != nil {
		return "", nil, err
	}
	cred, err := serverCredential(filepath.Dir(dataDir))
	if err != nil {
		return "", nil, err
	}
	run := func(ctx context.Context, name string, args ...string) error {
		cmd := exec.CommandContext(ctx, filepath.Join(binDir, name), args...)
		cmd.Stdout, cmd.Stderr = log, log
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
		}
		return nil
	}
	if _, err := os.Stat(filepath.Join(dataDir, "PG_VERSION")); err != nil {
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return "", nil, err
		}
		if cred != nil {
			if err := os.Chown(dataDir, int(cred.Uid), int(cred.Gid)); err != nil {
				return "", nil, err
			}
		}
		if err := run(ctx, "initdb", "-D", dataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C"); err != nil {
			return "", nil, err
		}
	}
	port := 5433
	if !PortFree(port) {
		if port, err = FreePort(); err != nil {
			return "", nil, err
		}
	}
	opts := fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c fsync=off", port)
	if err := run(ctx, "pg_ctl", "-D", dataDir, "-l", filepath.Join(dataDir, "server.log"), "-w", "-t", "60", "-o", opts, "start"); err != nil {
		return "", nil, err
	}
	// Stop runs after the caller's context is usually cancelled (Ctrl-C, a
	// deferred cancel), and exec refuses to start under a cancelled one.
	stopCtx := context.WithoutCancel(ctx)
	stop := func() error { return run(stopCtx, "pg_ctl", "-D", dataDir, "-m", "fast", "-w", "stop") }
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port), stop, nil
}

// serverCredential returns the credential to run PostgreSQL under: nil for
// an ordinary user, the "postgres" system user for root. It also makes sure
// that user can reach parent.
func serverCredential(parent string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, errors.New("running as root, and PostgreSQL refuses to run as root: create a 'postgres' system user (the postgresql package does) or set DATABASE_URL")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	if err := os.Chown(parent, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}
