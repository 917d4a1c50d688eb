package coalesce

import (
	"context"
	"sync"
)

// Batcher gathers the keys that concurrent callers ask for into one fetch
// per scope (say, one query for the pages of a site), under the rule Group
// follows: a caller only joins a batch that has not started, so no answer
// predates the question. While a fetch runs, newcomers gather into the next
// batch, which starts when it ends. An idle caller fetches at once, alone.
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
	} else {
		<-bt.done
	}
	return bt.vals[key], bt.err
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
	bt.vals, bt.err = b.Fetch(ctx, scope, bt.keys)
	finished = true
}
