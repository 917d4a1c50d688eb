package models

import (
	"context"
	"embed"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"
)

// Migration files are named <timestamp>_<comment>.tx.up.sql / .tx.down.sql;
// the .tx marks them to run inside one transaction each, so a failed
// migration leaves the schema as it was.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrator wraps bun's migrator with the embedded migrations.
type Migrator struct{ m *migrate.Migrator }

// NewMigrator returns a migrator for db over the embedded migrations.
func NewMigrator(db *bun.DB) (*Migrator, error) {
	ms := migrate.NewMigrations()
	if err := ms.Discover(migrationFiles); err != nil {
		return nil, fmt.Errorf("read embedded migrations: %w", err)
	}
	// The lock table keeps two processes (say two `serve` replicas starting
	// at once) from applying the same migration twice.
	return &Migrator{m: migrate.NewMigrator(db, ms,
		migrate.WithTableName("schema_migrations"),
		migrate.WithLocksTableName("schema_migration_locks"),
		migrate.WithMarkAppliedOnSuccess(true))}, nil
}

// Up applies every pending migration and returns their names.
func (m *Migrator) Up(ctx context.Context) ([]string, error) {
	if err := m.m.Init(ctx); err != nil {
		return nil, fmt.Errorf("create migration tables: %w", err)
	}
	if err := m.m.Lock(ctx); err != nil {
		return nil, fmt.Errorf("lock migrations: %w", err)
	}
	defer m.m.Unlock(ctx) //nolint:errcheck // the lock row is removed or the next Lock reports it
	group, err := m.m.Migrate(ctx)
	if err != nil {
		return nil, fmt.Errorf("apply migrations: %w", err)
	}
	return names(group.Migrations), nil
}

// Down rolls back the last group of applied migrations (the last `up`) and
// returns their names.
func (m *Migrator) Down(ctx context.Context) ([]string, error) {
	if err := m.m.Init(ctx); err != nil {
		return nil, fmt.Errorf("create migration tables: %w", err)
	}
	if err := m.m.Lock(ctx); err != nil {
		return nil, fmt.Errorf("lock migrations: %w", err)
	}
	defer m.m.Unlock(ctx) //nolint:errcheck
	group, err := m.m.Rollback(ctx)
	if err != nil {
		return nil, fmt.Errorf("roll back migrations: %w", err)
	}
	return names(group.Migrations), nil
}

// MigrationStatus is one migration and whether it is applied.
type MigrationStatus struct {
	Name    string
	Comment string
	Applied bool
}

// Status lists every known migration in order.
func (m *Migrator) Status(ctx context.Context) ([]MigrationStatus, error) {
	if err := m.m.Init(ctx); err != nil {
		return nil, fmt.Errorf("create migration tables: %w", err)
	}
	ms, err := m.m.MigrationsWithStatus(ctx)
	if err != nil {
		return nil, fmt.Errorf("read migration status: %w", err)
	}
	out := make([]MigrationStatus, 0, len(ms))
	for _, mg := range ms {
		out = append(out, MigrationStatus{Name: mg.Name, Comment: mg.Comment, Applied: mg.IsApplied()})
	}
	return out, nil
}

func names(ms migrate.MigrationSlice) []string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.Name+"_"+m.Comment)
	}
	return out
}
