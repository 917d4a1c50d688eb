package models

import (
	"context"
	"sync"

	"github.com/uptrace/bun"
)

// WaitTurn waits (until ctx ends) for a write transaction's turn at db's
// pool and returns the function that ends the turn, and the context the
// transaction runs under. Turns are given in arrival order, at most as
// many at once as the pool has connections (SizePool resizes them with
// the pool).
//
// database/sql gives a freed connection to a random one of the callers
// waiting for it (connRequestSet.TakeRandom), so with 64 concurrent
// PATCHes on 20 connections a write could lose that draw again and again:
// its wait had no bound but chance, and the tail (p99) grew with the
// queue (bench/http/README.md). A channel serves its blocked senders first
// come first served, so waiting here each write waits about its share of
// the queue ahead of it; the pool still bounds the connections, the
// request's deadline the wait (ctx.Err(): context.DeadlineExceeded, which
// the API answers 503, as a wait for the pool itself). A WaitTurn inside
// another's turn (its context) does not wait again.
func WaitTurn(ctx context.Context, db *bun.DB) (context.Context, func(), error) {
	if ctx.Value(inTurn{}) != nil {
		return ctx, func() {}, nil
	}
	leave, err := gateOf(db).enter(ctx)
	if err != nil {
		return ctx, nil, err
	}
	return context.WithValue(ctx, inTurn{}, true), leave, nil
}

// txGate holds one place per turn.
type txGate chan struct{}

func (g txGate) enter(ctx context.Context) (func(), error) {
	select {
	case g <- struct{}{}:
		return func() { <-g }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// inTurn marks a context inside a turn.
type inTurn struct{}

// txGates holds each pool's gate (*bun.DB → txGate).
var txGates sync.Map

func gateOf(db *bun.DB) txGate {
	if g, ok := txGates.Load(db); ok {
		return g.(txGate)
	}
	g, _ := txGates.LoadOrStore(db, newGate(db.Stats().MaxOpenConnections))
	return g.(txGate)
}

// newGate is a gate of n places (n ≤ 0: an unbounded pool, nothing to
// queue for).
func newGate(n int) txGate {
	if n <= 0 {
		n = 1 << 16
	}
	return make(txGate, n)
}
