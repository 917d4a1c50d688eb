package replicas_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pressroom/pressroom/dev"
	"github.com/pressroom/pressroom/models"
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
