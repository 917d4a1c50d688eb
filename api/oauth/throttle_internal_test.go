package oauth

import (
	"context"
	"fmt"
	"slices"
	"strings"
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
	th := onePlacePerUser(db)
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

// Attempts of one user take places one at a time, so the round trips of a
// reservation and of its release bound how fast places turn over under
// load (each waits for a CPU behind argon2id): reserve is begin, locks,
// check-and-take, commit; a success gives its place back in one statement.
// The places are taken and given back all the same.
func TestThrottleReserveAndSucceedRoundTrips(t *testing.T) {
	db := testsupport.NewDatabase(t)
	th := onePlacePerUser(db)
	ctx := context.Background()
	places := func() int {
		t.Helper()
		n, err := db.DB.NewSelect().Table("oauth_login_attempts").Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return int(n)
	}
	var r *reservation
	stmts := db.Statements.During(func() {
		var wait time.Duration
		var err error
		if r, wait, err = th.Attempt(ctx, "user:trips", "192.0.2.1", time.Second); err != nil || wait > 0 {
			t.Fatalf("attempt: %v %v", wait, err)
		}
	})
	if len(stmts) != 4 {
		t.Errorf("a reservation ran %d statements, want 4 (begin, locks, check-and-take, commit):\n%s", len(stmts), strings.Join(stmts, "\n"))
	}
	if n := places(); n != 2 {
		t.Fatalf("%d places held after a reservation, want 2 (user and address)", n)
	}
	// The user's one place is taken: another attempt of the user finds
	// none, takes nothing, and gives up at its wait's end.
	if _, _, err := th.Attempt(ctx, "user:trips", "192.0.2.2", 50*time.Millisecond); err != errAttemptBusy {
		t.Fatalf("second attempt with the user's place taken: %v, want errAttemptBusy", err)
	}
	if n := places(); n != 2 {
		t.Fatalf("%d places held after a refused attempt, want 2", n)
	}
	stmts = db.Statements.During(func() {
		if err := th.Succeed(ctx, r); err != nil {
			t.Fatal(err)
		}
	})
	if len(stmts) != 1 {
		t.Errorf("a success ran %d statements, want 1:\n%s", len(stmts), strings.Join(stmts, "\n"))
	}
	if n := places(); n != 0 {
		t.Fatalf("%d places held after the success, want 0", n)
	}
}

// onePlacePerUser is a throttle on db that gives each user one place at a
// time (and addresses plenty), so attempts of one user queue.
func onePlacePerUser(db *testsupport.Database) *throttle {
	return &throttle{db: db.DB, s: ThrottleSettings{MaxPerUser: 1, MaxPerAddress: 100, Window: time.Minute, LockFor: time.Minute, ClientMaxPerAddress: 100}}
}
