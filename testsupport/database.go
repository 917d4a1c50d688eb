package testsupport

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/dev"
	"github.com/pressroom/pressroom/models"
)

var (
	templateOnce sync.Once
	templateName string
	templateErr  error
	// CREATE DATABASE ... TEMPLATE fails if anyone is connected to the
	// template, so clones are made one at a time within a process.
	cloneMu sync.Mutex
)

// Database is a database of one test.
type Database struct {
	*bun.DB
	URL string
	// Statements logs what the database's connections run, when asked.
	Statements *StatementLog
}

// NewDatabase returns a fresh database with every migration applied,
// cloned from a template migrated once per process. It is dropped when the
// test ends.
func NewDatabase(t testing.TB) *Database {
	t.Helper()
	svc := Get(t)
	templateOnce.Do(func() { templateName, templateErr = makeTemplate(svc.PostgresURL) })
	if templateErr != nil {
		t.Fatalf("testsupport: migrated template database: %v", templateErr)
	}
	return newDatabase(t, svc, templateName)
}

// NewEmptyDatabase returns a fresh database with no tables (for migration tests).
func NewEmptyDatabase(t testing.TB) *Database {
	t.Helper()
	return newDatabase(t, Get(t), "")
}

func newDatabase(t testing.TB, svc *Services, template string) *Database {
	t.Helper()
	ctx := context.Background()
	name := "pr_t_" + randomSuffix()
	if err := withServer(ctx, svc.PostgresURL, func(conn *pgx.Conn) error {
		cloneMu.Lock()
		defer cloneMu.Unlock()
		return dev.CreateDatabase(ctx, conn, name, template)
	}); err != nil {
		t.Fatalf("testsupport: %v", err)
	}
	dbURL := withDatabase(svc.PostgresURL, name)
	statements := &StatementLog{}
	db, err := models.Open(ctx, dbURL, models.WithTracer(statements))
	if err != nil {
		t.Fatalf("testsupport: %v", err)
	}
	t.Cleanup(func() {
		db.Close()
		if os.Getenv("PRESSROOM_TEST_KEEP_DB") != "" {
			t.Logf("kept database %s", name)
			return
		}
		if err := dropDatabase(svc.PostgresURL, name); err != nil {
			t.Logf("testsupport: %v", err)
		}
	})
	return &Database{DB: db, URL: dbURL, Statements: statements}
}

// Reopen replaces the database's pool with one opened with opts (and the
// statement log), as `pressroom serve` and `pressroom worker` open theirs
// with settings of their configuration (models.WithWebhookPendingLimit).
func (d *Database) Reopen(t testing.TB, opts ...models.Option) {
	t.Helper()
	db, err := models.Open(context.Background(), d.URL, append([]models.Option{models.WithTracer(d.Statements)}, opts...)...)
	if err != nil {
		t.Fatalf("testsupport: reopen: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	old := d.DB
	d.DB = db
	_ = old.Close()
}

func makeTemplate(serverURL string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name := "pr_tmpl_" + randomSuffix()
	if err := withServer(ctx, serverURL, func(conn *pgx.Conn) error { return dev.CreateDatabase(ctx, conn, name, "") }); err != nil {
		return "", err
	}
	atExit(func() { _ = dropDatabase(serverURL, name) })
	db, err := models.Open(ctx, withDatabase(serverURL, name))
	if err != nil {
		return "", err
	}
	defer db.Close()
	m, err := models.NewMigrator(db)
	if err != nil {
		return "", err
	}
	if _, err := m.Up(ctx); err != nil {
		return "", err
	}
	return name, nil
}

func dropDatabase(serverURL, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return withServer(ctx, serverURL, func(conn *pgx.Conn) error {
		_, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
		if err != nil {
			return fmt.Errorf("drop database %s: %w", name, err)
		}
		return nil
	})
}

func withServer(ctx context.Context, serverURL string, fn func(*pgx.Conn) error) error {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return fmt.Errorf("connect to test postgres: %w", err)
	}
	defer conn.Close(context.Background())
	return fn(conn)
}

func withDatabase(serverURL, name string) string {
	u, err := url.Parse(serverURL)
	if err != nil {
		panic(err)
	}
	u.Path = "/" + name
	return u.String()
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return strings.ToLower(hex.EncodeToString(b))
}
