package models_test

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/testsupport"
)

func TestMain(m *testing.M) { os.Exit(testsupport.Main(m)) }

func tables(t *testing.T, db *testsupport.Database) []string {
	t.Helper()
	var names []string
	err := db.NewSelect().Column("table_name").Table("information_schema.tables").
		Where("table_schema = 'public'").Where("table_name NOT LIKE 'schema_migration%'").
		Order("table_name").Scan(context.Background(), &names)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func TestMigrationsUpDownUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testsupport.NewEmptyDatabase(t)
	m, err := models.NewMigrator(db.DB)
	if err != nil {
		t.Fatal(err)
	}
	applied, err := m.Up(ctx)
	if err != nil || len(applied) == 0 {
		t.Fatalf("first up: %v %v", applied, err)
	}
	for _, want := range []string{"sites", "users", "oauth_clients"} {
		if !slices.Contains(tables(t, db), want) {
			t.Errorf("after up, table %s is missing (have %v)", want, tables(t, db))
		}
	}
	again, err := m.Up(ctx)
	if err != nil || len(again) != 0 {
		t.Fatalf("second up should apply nothing: %v %v", again, err)
	}
	// bun executes a rollback newest first but reports the group in
	// ascending order; the set is what matters (an empty schema below shows
	// the order worked, since later tables reference earlier ones).
	rolled, err := m.Down(ctx)
	if err != nil || !slices.Equal(sorted(rolled), sorted(applied)) {
		t.Fatalf("down rolled back %v (%v), want %v", rolled, err, applied)
	}
	if left := tables(t, db); len(left) != 0 {
		t.Fatalf("after down, tables remain: %v", left)
	}
	st, err := m.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st {
		if s.Applied {
			t.Errorf("after down, %s still applied", s.Name)
		}
	}
	if _, err := m.Up(ctx); err != nil {
		t.Fatalf("up after down: %v", err)
	}
	if !slices.Contains(tables(t, db), "sites") {
		t.Fatal("up after down did not recreate the tables")
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func TestEveryTableWithSiteDataCarriesSiteID(t *testing.T) {
	t.Parallel()
	db := testsupport.NewDatabase(t)
	// Tables that are not site data: the tenants themselves and global OAuth
	// state (clients, signing keys, sign-in throttling by user and address and
	// its attempts in progress).
	global := map[string]bool{"sites": true, "oauth_clients": true, "oauth_signing_keys": true, "oauth_login_failures": true,
		"oauth_login_attempts": true}
	for _, table := range tables(t, db) {
		if global[table] {
			continue
		}
		var n int
		err := db.NewSelect().ColumnExpr("count(*)").Table("information_schema.columns").
			Where("table_schema = 'public' AND table_name = ? AND column_name = 'site_id'", table).
			Scan(context.Background(), &n)
		if err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("table %s has no site_id column; every table of site data must be scoped by site", table)
		}
	}
}

func TestSitesAndUsers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testsupport.NewDatabase(t)
	s, err := models.CreateSite(ctx, db, "Demo", "Demo-1")
	if err != nil {
		t.Fatal(err)
	}
	if s.SubdomainSlug != "demo-1" {
		t.Errorf("slug not lower-cased: %q", s.SubdomainSlug)
	}
	if _, err := models.CreateSite(ctx, db, "Again", "demo-1"); !errorsIs(err, models.ErrConflict) {
		t.Errorf("duplicate slug: %v, want ErrConflict", err)
	}
	if _, err := models.CreateSite(ctx, db, "Bad", "not a slug!"); err == nil {
		t.Error("a slug with spaces was accepted")
	}
	if _, err := models.CreateUser(ctx, db, s.ID, "Ed@Example.test", "Ed", "hash"); err != nil {
		t.Fatal(err)
	}
	if _, err := models.CreateUser(ctx, db, s.ID, "ed@example.TEST", "Ed 2", "hash"); !errorsIs(err, models.ErrConflict) {
		t.Errorf("e-mail differing only in case: %v, want ErrConflict", err)
	}
	u, err := models.UserByEmail(ctx, db, " ED@example.test ")
	if err != nil || u.SiteID != s.ID {
		t.Fatalf("UserByEmail: %v %v", u, err)
	}
	if _, err := models.UserByEmail(ctx, db, "nobody@example.test"); !models.IsNoRows(err) {
		t.Errorf("missing user: %v, want no rows", err)
	}
}
