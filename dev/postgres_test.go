package dev_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pressroom/pressroom/dev"
)

// fakePostgres stands in for the seams of SelectPostgres and records how
// they were called.
type fakePostgres struct {
	answering  map[string]bool // URLs whose probe succeeds
	binDir     string          // "" means the binaries are not installed
	clusterURL string          // what StartCluster returns
	startErr   error
	ensureErr  error
	stopErr    error

	mu          sync.Mutex
	probed      []string
	findCalls   int
	startedWith []string // "binDir dataDir"
	ensured     []string // "serverURL name"
	stops       int
}

func (f *fakePostgres) seams(o dev.PostgresOptions) dev.PostgresOptions {
	o.Probe = func(_ context.Context, u string) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.probed = append(f.probed, u)
		if f.answering[u] {
			return nil
		}
		return errors.New("connection refused")
	}
	o.FindBinaries = func() (string, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.findCalls++
		if f.binDir == "" {
			return "", errors.New("not found")
		}
		return f.binDir, nil
	}
	o.StartCluster = func(_ context.Context, binDir, dataDir string, _ io.Writer) (string, func() error, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.startedWith = append(f.startedWith, binDir+" "+dataDir)
		if f.startErr != nil {
			return "", nil, f.startErr
		}
		return f.clusterURL, func() error {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.stops++
			return f.stopErr
		}, nil
	}
	o.EnsureDB = func(_ context.Context, serverURL, name string) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.ensured = append(f.ensured, serverURL+" "+name)
		return f.ensureErr
	}
	return o
}

const (
	remoteURL  = "postgres://app@db.example.test:5432/pressroom?sslmode=disable"
	localURL   = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	clusterURL = "postgres://postgres@127.0.0.1:5433/postgres?sslmode=disable"
	binDir     = "/usr/lib/postgresql/99/bin"
	dataDir    = "/state/postgres"
	dbName     = "pressroom_dev"
)

func TestSelectPostgres(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		databaseURL string
		localURL    string
		fake        *fakePostgres

		wantErr       []string // substrings of the error; nil means success
		wantSource    string
		wantURL       string
		wantServerURL string
		wantProbed    []string
		wantFind      int
		wantStarted   []string
		wantEnsured   []string
		wantStopsNow  int // stops of the cluster during SelectPostgres
		wantStopsEnd  int // after Postgres.Stop
		wantStopErr   bool
	}{
		{
			name:        "DATABASE_URL answering is used as it is",
			databaseURL: remoteURL, localURL: localURL,
			fake:          &fakePostgres{answering: map[string]bool{remoteURL: true, localURL: true}, binDir: binDir, clusterURL: clusterURL},
			wantSource:    dev.PostgresFromURL,
			wantURL:       remoteURL,
			wantServerURL: "postgres://app@db.example.test:5432/postgres?sslmode=disable",
			wantProbed:    []string{remoteURL},
		},
		{
			name:        "DATABASE_URL not answering is an error; the local server is not tried",
			databaseURL: remoteURL, localURL: localURL,
			fake:       &fakePostgres{answering: map[string]bool{localURL: true}, binDir: binDir, clusterURL: clusterURL},
			wantErr:    []string{"DATABASE_URL", "connection refused"},
			wantProbed: []string{remoteURL},
		},
		{
			name:          "local server answering gets the database",
			localURL:      localURL,
			fake:          &fakePostgres{answering: map[string]bool{localURL: true}, binDir: binDir, clusterURL: clusterURL},
			wantSource:    dev.PostgresFromLocalServer,
			wantURL:       "postgres://postgres@127.0.0.1:5432/" + dbName + "?sslmode=disable",
			wantServerURL: localURL,
			wantProbed:    []string{localURL},
			wantEnsured:   []string{localURL + " " + dbName},
		},
		{
			name:          "no LocalURL means DefaultLocalPostgres",
			fake:          &fakePostgres{answering: map[string]bool{dev.DefaultLocalPostgres: true}},
			wantSource:    dev.PostgresFromLocalServer,
			wantURL:       "postgres://postgres@127.0.0.1:5432/" + dbName + "?sslmode=disable",
			wantServerURL: dev.DefaultLocalPostgres,
			wantProbed:    []string{dev.DefaultLocalPostgres},
			wantEnsured:   []string{dev.DefaultLocalPostgres + " " + dbName},
		},
		{
			name:        "local server answering but the database cannot be made",
			localURL:    localURL,
			fake:        &fakePostgres{answering: map[string]bool{localURL: true}, binDir: binDir, clusterURL: clusterURL, ensureErr: errors.New("permission denied to create database")},
			wantErr:     []string{"permission denied to create database"},
			wantProbed:  []string{localURL},
			wantEnsured: []string{localURL + " " + dbName},
		},
		{
			name:          "local server down, binaries found: a private cluster",
			localURL:      localURL,
			fake:          &fakePostgres{binDir: binDir, clusterURL: clusterURL},
			wantSource:    dev.PostgresFromPrivateCluster,
			wantURL:       "postgres://postgres@127.0.0.1:5433/" + dbName + "?sslmode=disable",
			wantServerURL: clusterURL,
			wantProbed:    []string{localURL},
			wantFind:      1,
			wantStarted:   []string{binDir + " " + dataDir},
			wantEnsured:   []string{clusterURL + " " + dbName},
			wantStopsEnd:  1,
		},
		{
			name:          "Stop reports the cluster's stop error",
			localURL:      localURL,
			fake:          &fakePostgres{binDir: binDir, clusterURL: clusterURL, stopErr: errors.New("pg_ctl stop failed")},
			wantSource:    dev.PostgresFromPrivateCluster,
			wantURL:       "postgres://postgres@127.0.0.1:5433/" + dbName + "?sslmode=disable",
			wantServerURL: clusterURL,
			wantProbed:    []string{localURL},
			wantFind:      1,
			wantStarted:   []string{binDir + " " + dataDir},
			wantEnsured:   []string{clusterURL + " " + dbName},
			wantStopsEnd:  1,
			wantStopErr:   true,
		},
		{
			name:       "binaries missing: say what to install",
			localURL:   localURL,
			fake:       &fakePostgres{},
			wantErr:    []string{"apt-get install postgresql", "DATABASE_URL", "127.0.0.1:5432"},
			wantProbed: []string{localURL},
			wantFind:   1,
		},
		{
			name:        "cluster fails to start",
			localURL:    localURL,
			fake:        &fakePostgres{binDir: binDir, startErr: errors.New("initdb: exit status 1")},
			wantErr:     []string{"private PostgreSQL cluster", "initdb: exit status 1"},
			wantProbed:  []string{localURL},
			wantFind:    1,
			wantStarted: []string{binDir + " " + dataDir},
		},
		{
			name:         "database cannot be made in the started cluster: the cluster is stopped",
			localURL:     localURL,
			fake:         &fakePostgres{binDir: binDir, clusterURL: clusterURL, ensureErr: errors.New("disk full")},
			wantErr:      []string{"disk full"},
			wantProbed:   []string{localURL},
			wantFind:     1,
			wantStarted:  []string{binDir + " " + dataDir},
			wantEnsured:  []string{clusterURL + " " + dbName},
			wantStopsNow: 1,
			wantStopsEnd: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := tt.fake
			var log bytes.Buffer
			p, err := dev.SelectPostgres(context.Background(), f.seams(dev.PostgresOptions{
				DatabaseURL: tt.databaseURL, LocalURL: tt.localURL, DataDir: dataDir, Database: dbName, Log: &log,
			}))
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("SelectPostgres succeeded with %+v; want an error mentioning %q", p, tt.wantErr)
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not mention %q", err, s)
					}
				}
			} else {
				if err != nil {
					t.Fatalf("SelectPostgres: %v (log: %s)", err, log.String())
				}
				if p.Source != tt.wantSource || p.URL != tt.wantURL || p.ServerURL != tt.wantServerURL {
					t.Errorf("SelectPostgres = {Source %q, URL %q, ServerURL %q}\nwant {Source %q, URL %q, ServerURL %q}",
						p.Source, p.URL, p.ServerURL, tt.wantSource, tt.wantURL, tt.wantServerURL)
				}
			}
			f.mu.Lock()
			checkCalls(t, "Probe", f.probed, tt.wantProbed)
			checkCalls(t, "StartCluster", f.startedWith, tt.wantStarted)
			checkCalls(t, "EnsureDB", f.ensured, tt.wantEnsured)
			if f.findCalls != tt.wantFind {
				t.Errorf("FindBinaries called %d times, want %d", f.findCalls, tt.wantFind)
			}
			if f.stops != tt.wantStopsNow {
				t.Errorf("cluster stopped %d times during SelectPostgres, want %d", f.stops, tt.wantStopsNow)
			}
			f.mu.Unlock()

			if p != nil {
				if err := p.Stop(); (err != nil) != tt.wantStopErr {
					t.Errorf("Postgres.Stop() = %v, want error: %v", err, tt.wantStopErr)
				}
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.stops != tt.wantStopsEnd {
				t.Errorf("cluster stopped %d times in all, want %d", f.stops, tt.wantStopsEnd)
			}
		})
	}
}

func checkCalls(t *testing.T, seam string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s calls:\n got  %q\n want %q", seam, got, want)
	}
}

// deadURL is a Postgres URL with a password at a port nothing listens on.
func deadURL(t *testing.T, password string) string {
	t.Helper()
	port, err := dev.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("postgres://app:%s@127.0.0.1:%d/postgres?sslmode=disable", url.QueryEscape(password), port)
}

// TestSelectPostgresRedactsPasswords checks that no error or log line shows
// the password of a database URL. Probe and EnsureDB are the real ones where
// a real connection failure is what produces the message.
func TestSelectPostgresRedactsPasswords(t *testing.T) {
	t.Parallel()
	const password = "Pa55-w0rd-never-shown"
	tests := []struct {
		name                  string
		databaseURL, localURL func(*testing.T) string
		fake                  *fakePostgres
		realProbe             bool
		realEnsure            bool
		wantInLog             string
	}{
		{
			name:        "DATABASE_URL does not answer (real probe)",
			databaseURL: func(t *testing.T) string { return deadURL(t, password) },
			fake:        &fakePostgres{},
			realProbe:   true,
		},
		{
			name:      "local server down and no binaries (real probe)",
			localURL:  func(t *testing.T) string { return deadURL(t, password) },
			fake:      &fakePostgres{},
			realProbe: true,
		},
		{
			name:      "local server down, the cluster does not start",
			localURL:  func(t *testing.T) string { return deadURL(t, password) },
			fake:      &fakePostgres{binDir: binDir, startErr: errors.New("pg_ctl: exit status 1")},
			realProbe: true,
			wantInLog: "app:xxxxx@127.0.0.1",
		},
		{
			name:       "database creation cannot connect (real EnsureDB)",
			localURL:   func(t *testing.T) string { return deadURL(t, password) },
			fake:       &fakePostgres{},
			realEnsure: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := dev.PostgresOptions{DataDir: dataDir, Database: dbName}
			if tt.databaseURL != nil {
				o.DatabaseURL = tt.databaseURL(t)
			}
			if tt.localURL != nil {
				o.LocalURL = tt.localURL(t)
			}
			var log bytes.Buffer
			o.Log = &log
			tt.fake.answering = map[string]bool{o.LocalURL: true}
			o = tt.fake.seams(o)
			if tt.realProbe {
				o.Probe = nil
			}
			if tt.realEnsure {
				o.EnsureDB = nil
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			p, err := dev.SelectPostgres(ctx, o)
			if err == nil {
				t.Fatalf("SelectPostgres succeeded with %+v; want an error", p)
			}
			if strings.Contains(err.Error(), password) {
				t.Errorf("the error shows the password: %q", err)
			}
			if strings.Contains(log.String(), password) {
				t.Errorf("the log shows the password:\n%s", log.String())
			}
			if tt.wantInLog != "" && !strings.Contains(log.String(), tt.wantInLog) {
				t.Errorf("the log should name the redacted URL (%q):\n%s", tt.wantInLog, log.String())
			}
		})
	}
}

// postgresInstalled tells whether initdb can be found where SelectPostgres
// looks for it.
func postgresInstalled() bool {
	if _, err := exec.LookPath("initdb"); err == nil {
		return true
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for _, d := range append(dirs, "/usr/local/pgsql/bin", "/opt/homebrew/bin", "/usr/local/bin") {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return true
		}
	}
	return false
}

// TestPrivateClusterStarts starts a real private cluster with the installed
// binaries, as `make dev` does on a machine with no server running.
func TestPrivateClusterStarts(t *testing.T) {
	t.Parallel()
	if !postgresInstalled() {
		t.Skip("no initdb installed (Debian/Ubuntu: apt-get install postgresql); the private cluster cannot be tested")
	}
	// As root the server runs as the postgres system user, which must be able
	// to traverse every parent of the data directory; t.TempDir() is 0700.
	dir, err := os.MkdirTemp("", "pressroom-pgcluster-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	port, err := dev.FreePort()
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var log lockedBuffer
	p, err := dev.SelectPostgres(ctx, dev.PostgresOptions{
		LocalURL: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port),
		DataDir:  filepath.Join(dir, "data"),
		Database: "pressroom_cluster_test",
		Log:      &log,
	})
	if err != nil {
		t.Fatalf("SelectPostgres: %v\nlog:\n%s", err, log.String())
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = p.Stop()
		}
	})
	if p.Source != dev.PostgresFromPrivateCluster {
		t.Fatalf("Source = %q, want %q", p.Source, dev.PostgresFromPrivateCluster)
	}
	u, err := url.Parse(p.URL)
	if err != nil {
		t.Fatalf("URL %q: %v", p.URL, err)
	}
	if u.Hostname() != "127.0.0.1" || u.Path != "/pressroom_cluster_test" {
		t.Errorf("URL = %q, want a database pressroom_cluster_test on 127.0.0.1", p.URL)
	}

	conn, err := pgx.Connect(ctx, p.URL)
	if err != nil {
		t.Fatalf("connect to the private cluster at %s: %v\nlog:\n%s", p.URL, err, log.String())
	}
	var one int
	if err := conn.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
		t.Errorf("select 1 = %d, %v", one, err)
	}
	conn.Close(ctx)

	// Stop as `make dev` does on Ctrl-C: after the context that started the
	// cluster is cancelled.
	cancel()
	stopped = true
	if err := p.Stop(); err != nil {
		t.Fatalf("Stop: %v\nlog:\n%s", err, log.String())
	}
	addr := net.JoinHostPort("127.0.0.1", u.Port())
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("%s still answers after Stop", addr)
	}
}

// lockedBuffer is a bytes.Buffer safe for the concurrent writes of child
// processes' output copiers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestCreateDatabaseConcurrently: test processes starting together against
// one server create the same database at the same moment; every one of them
// must find it there, none may fail.
func TestCreateDatabaseConcurrently(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, dev.DefaultLocalPostgres)
	if err != nil {
		t.Skipf("no server at %s: %v", dev.DefaultLocalPostgres, err)
	}
	defer admin.Close(context.Background())
	name := fmt.Sprintf("pressroom_race_%d", time.Now().UnixNano())
	t.Cleanup(func() { _, _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name) })
	const n = 8
	conns := make([]*pgx.Conn, n)
	for i := range conns {
		if conns[i], err = pgx.Connect(ctx, dev.DefaultLocalPostgres); err != nil {
			t.Fatal(err)
		}
		defer conns[i].Close(context.Background())
	}
	errs := make(chan error, n)
	start := make(chan struct{})
	for _, c := range conns {
		go func() { <-start; errs <- dev.CreateDatabase(ctx, c, name, "") }()
	}
	close(start)
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("CreateDatabase: %v", err)
		}
	}
}
