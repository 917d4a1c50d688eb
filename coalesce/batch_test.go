package coalesce

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingStore is a keyed store whose reads record their sequence number,
// so a test can tell which fetch answered and whether it started in time.
type countingStore struct {
	fetches atomic.Int64
	keys    atomic.Int64
	delay   time.Duration
}

func (s *countingStore) fetch(_ context.Context, scope string, keys []int) (map[int]string, error) {
	s.fetches.Add(1)
	s.keys.Add(int64(len(keys)))
	time.Sleep(s.delay)
	out := map[int]string{}
	for _, k := range keys {
		if k >= 0 {
			out[k] = scope
		}
	}
	return out, nil
}

func TestBatcherIdleCallerFetchesAlone(t *testing.T) {
	s := &countingStore{}
	b := &Batcher[int, string]{Fetch: s.fetch}
	if v, err := b.Get(context.Background(), "site-a", 1); v != "site-a" || err != nil {
		t.Fatalf("Get = %q %v", v, err)
	}
	if v, _ := b.Get(context.Background(), "site-a", -1); v != "" {
		t.Fatalf("a key the fetch left out = %q, want the zero value", v)
	}
	if s.fetches.Load() != 2 || len(b.scopes) != 0 {
		t.Fatalf("fetches %d, scopes kept %d", s.fetches.Load(), len(b.scopes))
	}
}

// Under contention: many keys per fetch, every answer from a fetch that
// started after the caller asked, and scopes never mixed.
func TestBatcherGathersKeysAndNeverAnswersFromThePast(t *testing.T) {
	var started atomic.Int64
	var fetches, keys atomic.Int64
	b := &Batcher[int, int64]{Max: 16, Fetch: func(_ context.Context, scope string, ks []int) (map[int]int64, error) {
		n := started.Add(1)
		fetches.Add(1)
		keys.Add(int64(len(ks)))
		if len(ks) > 16 {
			t.Errorf("fetch of %d keys, more than Max", len(ks))
		}
		time.Sleep(50 * time.Microsecond)
		out := map[int]int64{}
		for _, k := range ks {
			if (k%2 == 0) != (scope == "even") {
				t.Errorf("key %d fetched in scope %s", k, scope)
			}
			out[k] = n
		}
		return out, nil
	}}
	var wg sync.WaitGroup
	for g := range 48 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				k := g*1000 + i
				scope := "odd"
				if k%2 == 0 {
					scope = "even"
				}
				before := started.Load()
				v, err := b.Get(context.Background(), scope, k)
				if err != nil || v <= before {
					t.Errorf("key %d answered by fetch %d, but fetch %d had started when it asked (err %v)", k, v, before, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	per := float64(keys.Load()) / float64(fetches.Load())
	t.Logf("%d keys in %d fetches (%.1f a fetch)", keys.Load(), fetches.Load(), per)
	if per < 2 {
		t.Errorf("%.1f keys a fetch: nothing was batched", per)
	}
}

func TestBatcherSharesErrorsAndSurvivesPanics(t *testing.T) {
	boom := errors.New("boom")
	b := &Batcher[int, int]{Fetch: func(context.Context, string, []int) (map[int]int, error) { return nil, boom }}
	if _, err := b.Get(context.Background(), "s", 1); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}

	release := make(chan struct{})
	calls := atomic.Int64{}
	p := &Batcher[int, int]{Fetch: func(_ context.Context, _ string, ks []int) (map[int]int, error) {
		if calls.Add(1) == 1 {
			<-release
			return map[int]int{1: 1}, nil
		}
		panic("bad")
	}}
	go p.Get(context.Background(), "s", 1)
	waitFor(t, func() bool { return calls.Load() == 1 })
	panicked := make(chan any, 1)
	go func() {
		defer func() { panicked <- recover() }()
		p.Get(context.Background(), "s", 2) // leads the next batch, which panics
	}()
	waitFor(t, func() bool { p.mu.Lock(); defer p.mu.Unlock(); return len(p.scopes["s"].waiting) == 1 })
	joined := make(chan error, 1)
	go func() { _, err := p.Get(context.Background(), "s", 3); joined <- err }()
	time.Sleep(20 * time.Millisecond)
	close(release)
	if r := <-panicked; r != "bad" {
		t.Fatalf("leader recovered %v", r)
	}
	if err := <-joined; !errors.Is(err, ErrPanicked) {
		t.Fatalf("joined caller got %v, want ErrPanicked", err)
	}
	waitFor(t, func() bool { p.mu.Lock(); defer p.mu.Unlock(); return len(p.scopes) == 0 })
}

// A batch serves every caller in it: the first caller's cancellation does
// not fail the others' fetch, and a caller whose own context ends stops
// waiting at once.
func TestBatcherCallersKeepTheirOwnContexts(t *testing.T) {
	gate := make(chan struct{})
	fetchErr := make(chan error, 4)
	b := &Batcher[int, string]{Fetch: func(ctx context.Context, scope string, keys []int) (map[int]string, error) {
		if keys[0] == 0 {
			<-gate // the running batch, that the next one waits behind
		}
		fetchErr <- ctx.Err()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out := map[int]string{}
		for _, k := range keys {
			out[k] = scope
		}
		return out, nil
	}}
	go b.Get(context.Background(), "s", 0)
	waitFor(t, func() bool { return b.running("s") })

	first, cancelFirst := context.WithCancel(context.Background())
	firstDone := make(chan error, 1)
	go func() { _, err := b.Get(first, "s", 1); firstDone <- err }()
	waitFor(t, func() bool { return b.waitingKeys("s") == 1 })
	joined := make(chan string, 1)
	go func() { v, _ := b.Get(context.Background(), "s", 2); joined <- v }()
	impatient, cancelImpatient := context.WithCancel(context.Background())
	impatientDone := make(chan error, 1)
	go func() { _, err := b.Get(impatient, "s", 3); impatientDone <- err }()
	waitFor(t, func() bool { return b.waitingKeys("s") == 3 })

	cancelImpatient()
	select {
	case err := <-impatientDone:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("a caller whose context ended got %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a caller whose context ended kept waiting for the batch")
	}
	cancelFirst()
	close(gate)
	if v := <-joined; v != "s" {
		t.Errorf("a caller that joined the first caller's batch got %q after the first caller's context ended, want its value", v)
	}
	<-firstDone
	<-fetchErr // the running batch's
	if err := <-fetchErr; err != nil {
		t.Errorf("the joined batch fetched under a context that had ended: %v", err)
	}
}

// running tells whether scope has a batch running; waitingKeys counts the
// keys of its batches waiting to start.
func (b *Batcher[K, V]) running(scope string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.scopes[scope] != nil && b.scopes[scope].running
}

func (b *Batcher[K, V]) waitingKeys(scope string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	if q := b.scopes[scope]; q != nil {
		for _, bt := range q.waiting {
			n += len(bt.keys)
		}
	}
	return n
}
