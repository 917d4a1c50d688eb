package models

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"
)

// The hot statements (the write path's lock-and-load and draft upsert, the
// reads' batched load, the bearer token check) run as prepared statements
// that every connection caches: their text is
// fixed and their values travel as parameters ($1, $2…), so Postgres parses
// and plans them once per connection instead of once per request. Every
// other query goes through bun, which writes the values into the text
// (the pool's default is the simple protocol, see Open): caching those
// texts would prepare each once and never reuse it.
//
// They bypass bun's query hooks; a test that counts statements counts at
// the driver (testsupport's statement log, a pgx tracer).
//
// A generic plan is made at a statement's first run on a connection, from
// the tables' statistics then, and kept until an ANALYZE of a table it
// reads (autovacuum's, within a minute of enough changes) invalidates it.
// A plan made while a table was nearly empty scans it whole; until that
// ANALYZE it keeps doing so as the table grows. That was the 3 ms the
// batched drafted-path walk cost in bench/http once (plans made during
// the seeding), not its uuid[] parameter; bench/http now analyzes before
// each shape. On a running site the window is short (autovacuum analyzes
// a table after 50 changes and 10% of its rows, within a minute) and the
// table small while it lasts. Write these statements for index lookups
// (keys and correlated subqueries), which any plan of a grown table uses.

// sqlRunner is what database/sql's DB, Conn and Tx have in common.
type sqlRunner interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// underlying is db's database/sql handle, which runs text as given.
func underlying(db bun.IDB) (sqlRunner, error) {
	switch d := db.(type) {
	case bun.Tx:
		return d.Tx, nil
	case *bun.Tx:
		return d.Tx, nil
	case bun.Conn:
		return d.Conn, nil
	case *bun.DB:
		return d.DB, nil
	}
	return nil, fmt.Errorf("models: no prepared statements on %T (pass the *bun.DB, a bun.Tx or a bun.Conn)", db)
}

// ScanPrepared runs query, written with $n placeholders, as a cached
// prepared statement on db (the transaction, connection or pool) and scans
// its one row into dest (sql.ErrNoRows when there is none).
func ScanPrepared(ctx context.Context, db bun.IDB, query string, args []any, dest ...any) error {
	run, err := underlying(db)
	if err != nil {
		return err
	}
	return run.QueryRowContext(ctx, query, append([]any{pgx.QueryExecModeCacheStatement}, args...)...).Scan(dest...)
}

// ExecPrepared runs query, written with $n placeholders, as a cached
// prepared statement on db.
func ExecPrepared(ctx context.Context, db bun.IDB, query string, args ...any) (sql.Result, error) {
	run, err := underlying(db)
	if err != nil {
		return nil, err
	}
	return run.ExecContext(ctx, query, append([]any{pgx.QueryExecModeCacheStatement}, args...)...)
}

// UUIDParam is id as a prepared statement's parameter: its 16 bytes, which
// pgx encodes as uuid directly (a uuid.UUID would go through its text form).
func UUIDParam[T ~[16]byte](id T) [16]byte { return [16]byte(id) }

// NullUUIDParam is id as a parameter, NULL when id is nil.
func NullUUIDParam[T ~[16]byte](id *T) any {
	if id == nil {
		return nil
	}
	return [16]byte(*id)
}

// QueryPrepared runs query, written with $n placeholders, as a cached
// prepared statement on db and returns its rows, which the caller closes.
func QueryPrepared(ctx context.Context, db bun.IDB, query string, args ...any) (*sql.Rows, error) {
	run, err := underlying(db)
	if err != nil {
		return nil, err
	}
	return run.QueryContext(ctx, query, append([]any{pgx.QueryExecModeCacheStatement}, args...)...)
}

// UUIDsParam is ids as a prepared statement's uuid[] parameter.
func UUIDsParam[T ~[16]byte](ids []T) [][16]byte {
	out := make([][16]byte, len(ids))
	for i, id := range ids {
		out[i] = [16]byte(id)
	}
	return out
}
