package api

import (
	"context"
	"database/sql"
	"errors"
	"sync"

	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
)

// runTx runs fn in a transaction, retrying (a bounded number of times) when
// Postgres aborts it for a deadlock or a serialization failure, or the
// engine finds the item drafted under it (drafts.ErrRetry): two writers
// racing for the same records, one of which can simply go again. Every
// write of the API runs its transaction through runTx.
//
// It also records the request's audit (api/audit.go), last in the same
// transaction: the change and its audit event commit together or not at
// all.
//
// Writers wait for the pool in arrival order (txGate): database/sql hands a
// freed connection to a random waiter, so under more concurrent writes
// than connections a write's wait had no bound but chance.
func runTx(ctx context.Context, db *bun.DB, fn func(context.Context, bun.Tx) error) error {
	leave, err := txGateOf(db).enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	ctx = context.WithValue(ctx, inTxGate{}, true)
	withAudit := func(ctx context.Context, tx bun.Tx) error {
		if err := fn(ctx, tx); err != nil {
			return err
		}
		return models.RecordAudit(ctx, tx)
	}
	for attempt := 0; attempt < 3; attempt++ {
		err = db.RunInTx(ctx, nil, withAudit)
		if err != nil {
			models.AuditOf(ctx).RolledBack()
		}
		if !errors.Is(err, drafts.ErrRetry) && !models.IsRetryableConflict(err) {
			return err
		}
	}
	return err
}

// readOnlyTx runs fn, a dry run (a publish plan), in a read-only
// transaction on one snapshot (repeatable read): it reads one state of the
// database across its queries and cannot write, even by mistake. A
// read-only repeatable-read transaction never fails for serialization, so
// it is not retried.
func readOnlyTx(ctx context.Context, db *bun.DB, fn func(context.Context, bun.Tx) error) error {
	return db.RunInTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}, fn)
}

// txGate admits write transactions to a pool in arrival order, at most as
// many at once as the pool has connections. database/sql gives a freed
// connection to a random one of the callers waiting for it
// (connRequestSet.TakeRandom), so with 64 concurrent PATCHes on 20
// connections a write could lose that draw again and again: bench/http
// measured p99 at 3–4× p50 at 64 connections and the spread growing with
// the queue (docs/operations.md, "Postgres pool sizing"). Waiting here
// instead, where a channel's blocked senders are served first come first
// served, each write waits about its share of the queue ahead of it; the
// pool still bounds the connections, the request's deadline the wait
// (context.DeadlineExceeded: 503, as a wait for the pool itself).
type txGate chan struct{}

// enter waits for a place (until ctx ends) and returns the function that
// gives it back. A runTx inside another (its context marked by runTx) does
// not wait again: its outer one holds a place.
func (g txGate) enter(ctx context.Context) (func(), error) {
	if ctx.Value(inTxGate{}) != nil {
		return func() {}, nil
	}
	select {
	case g <- struct{}{}:
		return func() { <-g }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// inTxGate marks a context inside runTx's gate.
type inTxGate struct{}

// txGates holds one gate per pool, sized by the pool's connections when
// first used (serve sizes the pool before it serves).
var txGates sync.Map // *bun.DB → txGate

func txGateOf(db *bun.DB) txGate {
	if g, ok := txGates.Load(db); ok {
		return g.(txGate)
	}
	n := db.Stats().MaxOpenConnections
	if n <= 0 { // unbounded pool: nothing to queue for
		n = 1 << 16
	}
	g, _ := txGates.LoadOrStore(db, make(txGate, n))
	return g.(txGate)
}
