package oauth

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pressroom/pressroom/testsupport"
)

// Attempts of one user waiting for a place get it in arrival order: with
// one place per user, attempts arriving one after another while it is
// held are served first come, first served as places free up, not in the
// order their wake-ups happen to win the race for the lock.
func TestThrottleServesWaitingAttemptsInArrivalOrder(t *testing.T) {
	db := testsupport.NewDatabase(t)
	th := &throttle{db: db.DB, s: ThrottleSettings{MaxPerUser: 1, MaxPerAddress: 100, Window: time.Minute, LockFor: time.Minute, ClientMaxPerAddress: 100}}
	ctx := context.Background()
	first, wait, err := th.Attempt(ctx, "user:fifo", "192.0.2.1", time.Minute)
	if err != nil || wait > 0 {
		t.Fatalf("first attempt: %v %v", wait, err)
	}
	const n = 8
	var mu sync.Mutex
	var served []int
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			// Each from its own address, as different clients of one user.
			r, wait, err := th.Attempt(ctx, "user:fifo", fmt.Sprintf("192.0.2.%d", 10+i), time.Minute)
			if err != nil || wait > 0 {
				t.Errorf("attempt %d: %v %v", i, wait, err)
				return
			}
			mu.Lock()
			served = append(served, i)
			mu.Unlock()
			time.Sleep(20 * time.Millisecond) // the password check
			if err := th.Succeed(ctx, r); err != nil {
				t.Errorf("attempt %d: %v", i, err)
			}
		})
		time.Sleep(30 * time.Millisecond) // a clear arrival order
	}
	if err := th.Succeed(ctx, first); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if want := []int{0, 1, 2, 3, 4, 5, 6, 7}; !slices.Equal(served, want) {
		t.Fatalf("served in order %v, want arrival order %v", served, want)
	}
}
