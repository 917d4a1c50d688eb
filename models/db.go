// Package models holds Pressroom's bun models, its migrations and the
// persistence operations the API, the worker and the CLI share.
package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// DefaultMaxConns is the pool size Open sets; SizePool changes it.
const DefaultMaxConns = 20

// Open connects to PostgreSQL at url and checks the connection.
//
// A caller waiting for a free connection waits as long as its context
// allows (database/sql has no acquire timeout of its own): the API gives
// every request a deadline, so a full pool ends in 503, never a hang.
func Open(ctx context.Context, url string, opts ...Option) (*bun.DB, error) {
	cfg, err := pgx.ParseConfig(url) // pgx parses, so odd URLs fail here, not at first query
	if err != nil {
		return nil, fmt.Errorf("parse database URL: %w", err)
	}
	for _, opt := range opts {
		opt(cfg)
	}
	// bun formats arguments into the SQL text itself, so nearly every query
	// text is new: pgx's default (prepare and cache each text) would cost an
	// extra round trip per query and fill its cache for nothing.
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	// The few statements that are prepared (prepared.go: the write path's
	// lock-and-load and draft upsert) are lookups by key, written for one
	// plan whatever their parameters: planning them once per connection is
	// the point of preparing them.
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	// No JIT compilation: every statement here is a short one, and
	// Postgres JIT-compiles any statement whose estimated cost passes
	// jit_above_cost. A recursive query's estimate is a blind guess (ten
	// times its first step per level), so the subtree statements of a
	// DELETE (models/drafts/delete.go), which touch a few dozen buffers for
	// a leaf, were estimated at 200,000 and spent about 300 ms compiling
	// 140 functions before running for 1 ms. A startup parameter: no
	// statement of its own.
	cfg.RuntimeParams["jit"] = "off"
	sqldb := stdlib.OpenDB(*cfg)
	sqldb.SetMaxOpenConns(DefaultMaxConns)
	sqldb.SetMaxIdleConns(DefaultMaxConns)
	sqldb.SetConnMaxIdleTime(5 * time.Minute)
	db := bun.NewDB(sqldb, pgdialect.New())
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("connect to database %s: %w", cfg.Database, err)
	}
	return db, nil
}

// Option changes how Open connects.
type Option func(*pgx.ConnConfig)

// WithTracer has every statement of every connection reported to t, at the
// driver: what bun's query hooks see, plus transactions' BEGIN and COMMIT
// and the prepared statements that bypass bun (prepared.go).
func WithTracer(t pgx.QueryTracer) Option {
	return func(cfg *pgx.ConnConfig) { cfg.Tracer = t }
}

// SizePool sets how many connections db holds at most (and keeps idle),
// and as many write turns (WaitTurn): a turn taken before keeps its place
// in the old gate until it ends.
func SizePool(db *bun.DB, n int) {
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	txGates.Store(db, newGate(n))
}

// IsNoRows tells whether err means a lookup found nothing.
func IsNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }
