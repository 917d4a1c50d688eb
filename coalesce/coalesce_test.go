package coalesce

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestSequentialCallsEachRun(t *testing.T) {
	var g Group[int]
	runs := 0
	for i := 1; i <= 3; i++ {
		v, err, ran := g.Do("k", func() (int, error) { runs++; return runs, nil })
		if v != i || err != nil || !ran {
			t.Fatalf("call %d = %d, %v, ran %v", i, v, err, ran)
		}
	}
	if len(g.keys) != 0 {
		t.Fatalf("idle group keeps %d keys", len(g.keys))
	}
}

// Callers arriving while a call runs must not get its (possibly stale)
// answer: they share the next call, which one of them runs.
func TestLateCallersShareTheNextCallNotTheRunningOne(t *testing.T) {
	var g Group[int]
	var starts atomic.Int32
	release := make(chan struct{})
	first := make(chan int)
	go func() {
		v, _, _ := g.Do("k", func() (int, error) { n := starts.Add(1); <-release; return int(n), nil })
		first <- v
	}()
	waitFor(t, func() bool { return starts.Load() == 1 })

	const late = 10
	var wg sync.WaitGroup
	var ranCount atomic.Int32
	results := make([]int, late)
	for i := range late {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err, ran := g.Do("k", func() (int, error) { return int(starts.Add(1)), nil })
			if err != nil {
				t.Error(err)
			}
			if ran {
				ranCount.Add(1)
			}
			results[i] = v
		}()
	}
	// Every late caller is queued (one leads the next call, the rest joined it)
	// before the first call is let go.
	time.Sleep(50 * time.Millisecond)
	close(release)
	if v := <-first; v != 1 {
		t.Fatalf("first caller got %d", v)
	}
	wg.Wait()
	for i, v := range results {
		if v != 2 {
			t.Errorf("late caller %d got the answer of call %d, want call 2", i, v)
		}
	}
	if ranCount.Load() != 1 || starts.Load() != 2 {
		t.Errorf("late callers ran fn %d times (calls started: %d), want once", ranCount.Load(), starts.Load())
	}
}

// The property the package exists for, under contention: every answer comes
// from a call that started after the caller asked.
func TestAnswersNeverPredateTheQuestion(t *testing.T) {
	var g Group[int64]
	var starts atomic.Int64
	var runs atomic.Int64
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 300 {
				before := starts.Load()
				v, err, _ := g.Do("k", func() (int64, error) {
					runs.Add(1)
					n := starts.Add(1)
					time.Sleep(20 * time.Microsecond)
					return n, nil
				})
				if err != nil || v <= before {
					t.Errorf("answer from call %d to a caller who asked after call %d had started (err %v)", v, before, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if total := int64(32 * 300); runs.Load() >= total {
		t.Errorf("fn ran %d times for %d calls: nothing was shared", runs.Load(), total)
	} else {
		t.Logf("%d calls, fn ran %d times", total, runs.Load())
	}
}

func TestKeysAreIndependent(t *testing.T) {
	var g Group[string]
	release := make(chan struct{})
	go g.Do("a", func() (string, error) { <-release; return "a", nil })
	waitFor(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return g.keys["a"] != nil })
	if v, _, ran := g.Do("b", func() (string, error) { return "b", nil }); v != "b" || !ran {
		t.Fatalf("key b waited for key a: %q %v", v, ran)
	}
	close(release)
}

func TestErrorsAreShared(t *testing.T) {
	var g Group[int]
	boom := errors.New("boom")
	if _, err, _ := g.Do("k", func() (int, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
}

func TestPanicReleasesWaitersAndPropagates(t *testing.T) {
	var g Group[int]
	release := make(chan struct{})
	go g.Do("k", func() (int, error) { <-release; return 1, nil })
	waitFor(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return g.keys["k"] != nil })

	// A queues the next call, whose fn panics; B joins that call.
	panicked := make(chan any, 1)
	go func() {
		defer func() { panicked <- recover() }()
		g.Do("k", func() (int, error) { panic("bad") })
	}()
	waitFor(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return g.keys["k"].next != nil })
	joined := make(chan error, 1)
	go func() {
		_, err, ran := g.Do("k", func() (int, error) { return 2, nil })
		if ran {
			t.Error("B ran a call it should have joined")
		}
		joined <- err
	}()
	time.Sleep(20 * time.Millisecond)
	close(release)
	if r := <-panicked; r != "bad" {
		t.Fatalf("the runner recovered %v, want the panic", r)
	}
	if err := <-joined; !errors.Is(err, ErrPanicked) {
		t.Fatalf("a caller sharing a panicked call got %v, want ErrPanicked", err)
	}
	// The group is usable afterwards.
	if v, err, _ := g.Do("k", func() (int, error) { return 3, nil }); v != 3 || err != nil {
		t.Fatalf("after a panic: %d %v", v, err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

// DoShared tells fn whether callers wait for its result: not for a caller
// alone, and for the call late callers queued into.
func TestDoSharedTellsWhetherOthersWait(t *testing.T) {
	var g Group[bool]
	if shared, _, _ := g.DoShared("k", func(shared bool) (bool, error) { return shared, nil }); shared {
		t.Error("a caller alone was told others wait")
	}
	release := make(chan struct{})
	var starts atomic.Int32
	go g.DoShared("k", func(shared bool) (bool, error) { starts.Add(1); <-release; return shared, nil })
	waitFor(t, func() bool { return starts.Load() == 1 })
	var wg sync.WaitGroup
	results := make([]bool, 5)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], _, _ = g.DoShared("k", func(shared bool) (bool, error) { return shared, nil })
		}()
	}
	time.Sleep(50 * time.Millisecond) // all five queued: one leads, four join
	close(release)
	wg.Wait()
	for i, shared := range results {
		if !shared {
			t.Errorf("caller %d: the queued call was not told four callers wait for it", i)
		}
	}
}
