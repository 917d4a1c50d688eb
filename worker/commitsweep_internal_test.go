package worker

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// countingSweep counts its runs; every other run fails.
type countingSweep struct{ runs atomic.Int32 }

func (c *countingSweep) StartUnstarted(context.Context) (int, error) {
	if c.runs.Add(1)%2 == 0 {
		return 0, errors.New("temporal unreachable")
	}
	return 1, nil
}

// The commit sweep runs at once when the worker starts, then every period,
// a failed run not stopping the next; after stop it runs no more.
func TestCommitSweeperRunsAtStartAndEveryPeriodUntilStopped(t *testing.T) {
	sweep := &countingSweep{}
	s := &commitSweeper{sweep: sweep, every: 20 * time.Millisecond}
	s.start()
	deadline := time.Now().Add(5 * time.Second)
	for sweep.runs.Load() < 4 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	s.stop()
	s.stop() // twice is harmless (Worker.Stop after Run)
	n := sweep.runs.Load()
	if n < 4 {
		t.Fatalf("%d runs in 5 s with a 20 ms period; want at least 4 (failed runs must not stop it)", n)
	}
	time.Sleep(100 * time.Millisecond)
	if after := sweep.runs.Load(); after != n {
		t.Fatalf("%d runs after stop, want none", after-n)
	}
}

// The first run is at start, not a period later: work a crash left
// unstarted while no worker ran is started as soon as one starts.
func TestCommitSweeperFirstRunIsImmediate(t *testing.T) {
	sweep := &countingSweep{}
	s := &commitSweeper{sweep: sweep, every: time.Hour}
	s.start()
	defer s.stop()
	deadline := time.Now().Add(5 * time.Second)
	for sweep.runs.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if sweep.runs.Load() != 1 {
		t.Fatalf("runs = %d within 5 s of start with an hourly period; want 1", sweep.runs.Load())
	}
}
