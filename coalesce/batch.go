package coalesce

import (
	"context"
	"sync"
	"time"
)

// Batcher gathers the keys that concurrent callers ask for into one fetch
// per scope (say, one query for the pages of a site), under the rule Group
// follows: a caller only joins a batch that has not started, so no answer
// predates the question. While a fetch runs, newcomers gather into the next
// batch, which starts when it ends. An idle caller fetches at once, alone.
//
// A batch's fetch serves every caller in it, so it runs under none of their
// cancellations: its context carries the first caller's values, and the
// latest deadline among the callers (none if one of them has none). A
// caller whose own context ends stops waiting at once; the others still
// get their values.
type Batcher[K comparable, V any] struct {
	// Fetch returns the values of keys within scope. A key it leaves out
	// gets V's zero value.
	Fetch func(ctx context.Context, scope string, keys []K) (map[K]V, error)
	// Max bounds the keys of one fetch; 0 means 100.
	Max int

	mu     sync.Mutex
	scopes map[string]*scopeQueue[K, V]
}

// scopeQueue is one scope's batches: whether one is running, and those
// waiting behind it (only the last of which still takes keys).
type scopeQueue[K comparable, V any] struct {
	running bool
	waiting []*batch[K, V]
}

type batch[K comparable, V any] struct {
	keys  []K
	has   map[K]bool
	start chan struct{} // closed when a waiting batch may run
	done  chan struct{} // closed when vals and err are set
	vals  map[K]V
	err   error
	// deadline is the latest of the callers' deadlines; unbounded when one
	// of them has none. Set while the batch takes keys (under mu), read
	// once it runs.
	deadline  time.Time
	unbounded bool
}

// join adds a caller's deadline to the batch's.
func (bt *batch[K, V]) join(ctx context.Context) {
	dl, ok := ctx.Deadline()
	switch {
	case !ok:
		bt.unbounded = true
	case dl.After(bt.deadline):
		bt.deadline = dl
	}
}

// fetchContext is the context a batch's fetch runs under: ctx's values,
// none of its callers' cancellations, their latest deadline.
func (bt *batch[K, V]) fetchContext(ctx context.Context) (context.Context, context.CancelFunc) {
	shared := context.WithoutCancel(ctx)
	if bt.unbounded {
		return shared, func() {}
	}
	return context.WithDeadline(shared, bt.deadline)
}

// Get returns key's value in scope, fetched together with the other keys
// asked for meanwhile.
func (b *Batcher[K, V]) Get(ctx context.Context, scope string, key K) (V, error) {
	limit := b.Max
	if limit <= 0 {
		limit = 100
	}
	b.mu.Lock()
	if b.scopes == nil {
		b.scopes = map[string]*scopeQueue[K, V]{}
	}
	q := b.scopes[scope]
	if q == nil {
		q = &scopeQueue[K, V]{}
		b.scopes[scope] = q
	}
	var bt *batch[K, V]
	lead := false
	if n := len(q.waiting); n > 0 && len(q.waiting[n-1].keys) < limit {
		bt = q.waiting[n-1]
	} else {
		bt = &batch[K, V]{has: map[K]bool{}, start: make(chan struct{}), done: make(chan struct{})}
		q.waiting = append(q.waiting, bt)
		lead = true
	}
	if !bt.has[key] {
		bt.has[key] = true
		bt.keys = append(bt.keys, key)
	}
	bt.join(ctx)
	runNow := lead && !q.running // then bt is the only batch waiting
	if runNow {
		q.running = true
		q.waiting = q.waiting[1:]
	}
	b.mu.Unlock()
	if lead {
		if !runNow {
			<-bt.start
		}
		b.run(ctx, scope, q, bt)
		return bt.vals[key], bt.err
	}
	select {
	case <-bt.done:
		return bt.vals[key], bt.err
	case <-ctx.Done():
		var zero V
		return zero, ctx.Err()
	}
}

// run fetches bt, then starts the batch waiting behind it, if any.
func (b *Batcher[K, V]) run(ctx context.Context, scope string, q *scopeQueue[K, V], bt *batch[K, V]) {
	finished := false
	defer func() {
		if !finished {
			bt.err = ErrPanicked // Fetch panicked; the panic goes on in this caller
		}
		close(bt.done)
		b.mu.Lock()
		if len(q.waiting) > 0 {
			next := q.waiting[0]
			q.waiting = q.waiting[1:] // started: it takes no more keys
			close(next.start)
		} else {
			q.running = false
			delete(b.scopes, scope)
		}
		b.mu.Unlock()
	}()
	fctx, cancel := bt.fetchContext(ctx)
	defer cancel()
	bt.vals, bt.err = b.Fetch(fctx, scope, bt.keys)
	finished = true
}
