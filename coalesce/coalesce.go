// Package coalesce shares one computation among concurrent callers that ask
// the same question, without ever answering from the past.
//
// It is like singleflight with one difference that matters for correctness:
// a caller only ever joins a computation that has not started yet. A caller
// arriving while one is running waits for the next, which starts when the
// running one ends and serves everyone who queued meanwhile. So every answer
// reflects the world at some moment after the caller asked: a token revoked,
// or a page published, before a request arrived is never missed by that
// request. Under load one query serves dozens of requests; when idle, each
// request runs its own, with no added wait.
package coalesce

import (
	"errors"
	"sync"
)

// Group coalesces computations by key. The zero value is ready to use.
type Group[V any] struct {
	mu   sync.Mutex
	keys map[string]*key[V]
}

// key is the state of one key: whether a call is running, and the call that
// queues behind it (which nobody has started, so newcomers may still join).
type key[V any] struct {
	running bool
	next    *call[V]
}

type call[V any] struct {
	start chan struct{} // closed when the queued call may run
	done  chan struct{} // closed when val and err are set
	val   V
	err   error
	// joined counts the callers waiting for this call's result besides the
	// one running it. They join only before it starts (under Group.mu), so
	// the count is final when fn runs.
	joined int
}

// ErrPanicked is what callers sharing a call get when it panicked; the
// caller that ran it sees the panic itself.
var ErrPanicked = errors.New("coalesce: the shared computation panicked")

// Do returns fn's result for key. Exactly one caller of a call runs fn (ran
// is true for it); the others get the same value and error. fn runs on the
// caller's goroutine, so it may use that caller's request.
func (g *Group[V]) Do(k string, fn func() (V, error)) (v V, err error, ran bool) {
	return g.DoShared(k, func(bool) (V, error) { return fn() })
}

// DoShared is Do, telling fn whether any other caller waits for its result:
// when none does, fn's value goes to its own caller only, so it need not
// be a copy that outlives the caller's request.
func (g *Group[V]) DoShared(k string, fn func(shared bool) (V, error)) (v V, err error, ran bool) {
	g.mu.Lock()
	if g.keys == nil {
		g.keys = map[string]*key[V]{}
	}
	ks := g.keys[k]
	if ks == nil {
		ks = &key[V]{}
		g.keys[k] = ks
	}
	if ks.next != nil {
		// A call is queued and not started: join it.
		c := ks.next
		c.joined++
		g.mu.Unlock()
		<-c.done
		return c.val, c.err, false
	}
	c := &call[V]{start: make(chan struct{}), done: make(chan struct{})}
	if ks.running {
		// Queue behind the running call; newcomers join this one.
		ks.next = c
		g.mu.Unlock()
		<-c.start
	} else {
		ks.running = true
		g.mu.Unlock()
	}
	g.run(k, ks, c, fn)
	return c.val, c.err, true
}

// run runs fn for c, then starts the call queued behind it, if any.
func (g *Group[V]) run(k string, ks *key[V], c *call[V], fn func(shared bool) (V, error)) {
	finished := false
	defer func() {
		if !finished {
			// fn panicked: release everyone waiting, then let the panic go on.
			c.err = ErrPanicked
		}
		close(c.done)
		g.mu.Lock()
		if n := ks.next; n != nil {
			ks.next = nil // from now on newcomers queue behind n
			close(n.start)
		} else {
			ks.running = false
			delete(g.keys, k)
		}
		g.mu.Unlock()
	}()
	// c has started: no caller joins it any more (nor writes joined), and
	// its start, closed under g.mu, ordered the last join before this read.
	c.val, c.err = fn(c.joined > 0)
	finished = true
}
