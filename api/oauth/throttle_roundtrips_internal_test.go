package oauth

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pressroom/pressroom/testsupport"
)

// Attempts of one user take places one at a time, so the round trips of a
// reservation and of its release bound how fast places turn over under
// load (each waits for a CPU behind argon2id): reserve is begin, locks,
// check-and-take, commit; a success gives its place back in one statement.
// The places are taken and given back all the same.
func TestThrottleReserveAndSucceedRoundTrips(t *testing.T) {
	db := testsupport.NewDatabase(t)
	th := &throttle{db: db.DB, s: ThrottleSettings{MaxPerUser: 1, MaxPerAddress: 100, Window: time.Minute, LockFor: time.Minute, ClientMaxPerAddress: 100}}
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
