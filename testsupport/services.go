// Package testsupport gives tests the real services Pressroom runs on.
//
// Under `make test`, devstack starts Postgres, Temporal and MinIO once and
// hands their addresses over in PRESSROOM_TEST_* variables; a package run on
// its own (`go test ./api/`) starts a private stack the first time a test
// asks for it and stops it when the package's tests end. Each test gets its
// own database and its own buckets, so tests run in parallel.
package testsupport

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/dev"
)

// Services are the running dependencies of this test process.
type Services struct {
	// PostgresURL connects to the server's maintenance database.
	PostgresURL     string
	TemporalAddress string
	// Storage is the storage endpoint and credentials (buckets are per test).
	Storage config.Storage
}

// process-wide state: one stack per test binary, stopped by Main.
var (
	startOnce sync.Once
	shared    *Services
	startErr  error
	ownStack  *dev.Stack
	ownDir    string
	cleanups  []func()
	cleanupMu sync.Mutex
)

// Main runs the package's tests and then stops anything testsupport
// started. Use it from TestMain: os.Exit(testsupport.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	cleanupMu.Lock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	cleanupMu.Unlock()
	if ownStack != nil {
		if err := ownStack.Down(); err != nil {
			fmt.Fprintln(os.Stderr, "testsupport: stopping services:", err)
		}
		os.RemoveAll(ownDir)
	}
	return code
}

func atExit(fn func()) {
	cleanupMu.Lock()
	defer cleanupMu.Unlock()
	cleanups = append(cleanups, fn)
}

// Get returns the shared services, starting them on first use when no
// PRESSROOM_TEST_* variables name running ones.
func Get(t testing.TB) *Services {
	t.Helper()
	startOnce.Do(func() { shared, startErr = start() })
	if startErr != nil {
		t.Fatalf("testsupport: services unavailable: %v", startErr)
	}
	return shared
}

func start() (*Services, error) {
	if pg := os.Getenv(dev.EnvTestPostgres); pg != "" {
		return &Services{
			PostgresURL:     pg,
			TemporalAddress: os.Getenv(dev.EnvTestTemporal),
			Storage:         storageConfig(os.Getenv(dev.EnvTestS3Endpoint), os.Getenv(dev.EnvTestS3AccessKey), os.Getenv(dev.EnvTestS3SecretKey)),
		}, nil
	}
	root, err := dev.CheckoutRoot()
	if err != nil {
		return nil, err
	}
	ownDir, err = os.MkdirTemp("", "pressroom-pkgtest-")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ownStack, err = dev.Up(ctx, dev.StackOptions{
		RepoRoot: root, StateDir: ownDir, DatabaseURL: os.Getenv("DATABASE_URL"), Database: "pressroom", Log: os.Stderr,
	})
	if err != nil {
		return nil, err
	}
	return &Services{
		PostgresURL:     ownStack.Postgres.ServerURL,
		TemporalAddress: ownStack.TemporalAddress,
		Storage:         ownStack.Storage,
	}, nil
}

func storageConfig(endpoint, access, secret string) config.Storage {
	c := Defaults().Storage
	c.Endpoint, c.PublicEndpoint, c.AccessKey, c.SecretKey = endpoint, endpoint, access, secret
	return c
}

// Defaults is the configuration with every default applied.
func Defaults() config.Config {
	c, err := config.FromEnv(func(string) string { return "" })
	if err != nil {
		panic(err) // the defaults are tested to parse
	}
	return c
}
