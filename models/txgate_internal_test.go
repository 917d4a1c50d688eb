package models

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestTxGateAdmitsInArrivalOrder: with the gate full, waiting writes get
// in in the order they came (database/sql's own queue picks at random), a
// waiter whose request ends stops waiting with its context's error (503
// for a deadline), and a turn inside another does not wait again.
func TestTxGateAdmitsInArrivalOrder(t *testing.T) {
	g := newGate(1)
	leave, err := g.enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	const waiters = 8
	order := make(chan int, waiters)
	for i := 0; i < waiters; i++ {
		go func(i int) {
			out, err := g.enter(context.Background())
			if err != nil {
				t.Error(err)
				return
			}
			order <- i
			out()
		}(i)
		// Each waiter blocks in the gate before the next one starts.
		time.Sleep(30 * time.Millisecond)
	}
	leave()
	for want := 0; want < waiters; want++ {
		select {
		case got := <-order:
			if got != want {
				t.Fatalf("waiter %d got in as number %d", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the gate let nobody in")
		}
	}

	leave, _ = g.enter(context.Background())
	defer leave()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := g.enter(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a full gate past the deadline: %v, want context.DeadlineExceeded", err)
	}
}

// TestWaitTurnInsideATurnDoesNotWait: a runTx inside another's turn (its
// context) would otherwise wait for a place its outer turn holds.
func TestWaitTurnInsideATurnDoesNotWait(t *testing.T) {
	ctx := context.WithValue(context.Background(), inTurn{}, true)
	got, leave, err := WaitTurn(ctx, nil) // no gate is looked up
	if err != nil || got != ctx {
		t.Fatalf("WaitTurn inside a turn: %v, context changed %v", err, got != ctx)
	}
	leave()
}
