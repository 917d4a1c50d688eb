package auth

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const slot = argonMemory * 1024 // one of our argon2id checks

func TestHashLimiterBoundsConcurrentChecks(t *testing.T) {
	t.Parallel()
	l := NewHashLimiter(2*slot, 10*time.Second)
	var now, peak atomic.Int64
	var wg sync.WaitGroup
	for range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := l.Do(context.Background(), slot, func() {
				n := now.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				time.Sleep(5 * time.Millisecond)
				now.Add(-1)
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if peak.Load() != 2 {
		t.Errorf("peak concurrent checks = %d, want 2 (a budget of two 64 MiB checks)", peak.Load())
	}
	// A hash asking for more than the whole budget runs alone instead of never.
	if err := l.Do(context.Background(), 10*slot, func() {}); err != nil {
		t.Errorf("oversized check: %v", err)
	}
}

func TestHashLimiterServesWaitersInArrivalOrder(t *testing.T) {
	t.Parallel()
	l := NewHashLimiter(slot, 10*time.Second)
	hold := make(chan struct{})
	held := make(chan struct{})
	go func() { _ = l.Do(context.Background(), slot, func() { close(held); <-hold }) }()
	<-held
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := l.Do(context.Background(), slot, func() { mu.Lock(); order = append(order, i); mu.Unlock() }); err != nil {
				t.Error(err)
			}
		}()
		for l.waiting.Load() != int64(i+1) { // counted as waiting before the next one arrives
			time.Sleep(time.Millisecond)
		}
		// The count goes up a few instructions before the waiter joins the
		// semaphore's queue (Do cannot count after: Acquire blocks). Without
		// this pause a descheduled waiter could be overtaken by the next one
		// (CI saw [0 1 2 4 3 ...]): the queue is FIFO, the test's idea of
		// arrival was early.
		time.Sleep(20 * time.Millisecond)
	}
	close(hold)
	wg.Wait()
	for i, v := range order {
		if v != i {
			t.Fatalf("order %v, want arrival order", order)
		}
	}
}

func TestHashLimiterGivesUpAfterItsWait(t *testing.T) {
	t.Parallel()
	l := NewHashLimiter(slot, 100*time.Millisecond)
	hold := make(chan struct{})
	held := make(chan struct{})
	go func() { _ = l.Do(context.Background(), slot, func() { close(held); <-hold }) }()
	<-held
	defer close(hold)
	start := time.Now()
	ran := false
	err := l.Do(context.Background(), slot, func() { ran = true })
	if !errors.Is(err, ErrBusy) || ran {
		t.Fatalf("Do while the budget is taken = %v (ran %v), want ErrBusy", err, ran)
	}
	if d := time.Since(start); d < 100*time.Millisecond || d > 2*time.Second {
		t.Errorf("gave up after %v, want about the 100ms wait", d)
	}
	if err := l.CheckPassword(context.Background(), dummyForTest, "x"); !errors.Is(err, ErrBusy) {
		t.Errorf("CheckPassword while the budget is taken = %v, want ErrBusy", err)
	}
	// A canceled caller gets its context's error, not ErrBusy.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Do(ctx, slot, func() {}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled Do = %v", err)
	}
}

func TestHashLimiterRefusesAnEndlessQueue(t *testing.T) {
	t.Parallel()
	l := NewHashLimiter(slot, 10*time.Second)
	l.waiting.Store(l.maxWait) // the queue is full
	hold := make(chan struct{})
	held := make(chan struct{})
	go func() { _ = l.Do(context.Background(), slot, func() { close(held); <-hold }) }()
	<-held
	defer close(hold)
	start := time.Now()
	if err := l.Do(context.Background(), slot, func() {}); !errors.Is(err, ErrBusy) || time.Since(start) > time.Second {
		t.Errorf("Do with a full queue = %v after %v, want ErrBusy at once", err, time.Since(start))
	}
}

const dummyForTest = "$argon2id$v=19$m=65536,t=1,p=2$QfPRr98zmPX8vrqR8DCXJw$v0PVsTkLLKm/WHJcgNP7eJ4WYacMGIoqQjpFvKPSSck"

func TestLimitedCheckPassword(t *testing.T) {
	t.Parallel()
	l := NewHashLimiter(slot, time.Second)
	h, err := HashPassword("right one")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.CheckPassword(context.Background(), h, "right one"); err != nil {
		t.Errorf("right password: %v", err)
	}
	if err := l.CheckPassword(context.Background(), h, "wrong"); !errors.Is(err, ErrMismatch) {
		t.Errorf("wrong password: %v", err)
	}
	if got := hashMemory(h); got != slot {
		t.Errorf("hashMemory = %d, want %d", got, slot)
	}
}

func TestClientSecretHMAC(t *testing.T) {
	t.Parallel()
	key := []byte("k1")
	secret, _ := RandomSecret(32)
	h := HashClientSecret(key, secret)
	if IsLegacyClientSecretHash(h) || len(h) != len(clientSecretPrefix)+43 {
		t.Fatalf("hash %q", h)
	}
	if err := CheckClientSecret(key, h, secret); err != nil {
		t.Errorf("right secret: %v", err)
	}
	for name, c := range map[string]struct {
		key          []byte
		hash, secret string
	}{
		"wrong secret":   {key, h, secret + "x"},
		"other key":      {[]byte("k2"), h, secret},
		"argon2 hash":    {key, dummyForTest, secret},
		"empty hash":     {key, "", secret},
		"oversized":      {key, HashClientSecret(key, ""), string(make([]byte, MaxPasswordBytes+1))},
		"empty vs empty": {key, "", ""},
	} {
		if err := CheckClientSecret(c.key, c.hash, c.secret); !errors.Is(err, ErrMismatch) {
			t.Errorf("%s: %v, want ErrMismatch", name, err)
		}
	}
	if !IsLegacyClientSecretHash(dummyForTest) {
		t.Error("an argon2id hash is not recognised as legacy")
	}
}
