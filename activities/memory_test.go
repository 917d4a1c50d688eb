package activities_test

import (
	"context"
	"testing"
	"time"

	"github.com/pressroom/pressroom/activities"
)

func TestMemoryBudget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := activities.NewMemoryBudget(1000 * activities.BytesPerPixel) // room for 1000 pixels

	r1, err := b.Reserve(ctx, 600)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := b.Reserve(ctx, 400) // fits exactly
	if err != nil {
		t.Fatal(err)
	}
	// A third image waits until one of them is done.
	got := make(chan func())
	go func() {
		r, err := b.Reserve(ctx, 300)
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	select {
	case <-got:
		t.Fatal("a reservation over the budget did not wait")
	case <-time.After(100 * time.Millisecond):
	}
	r2()
	r3 := <-got
	r1()
	r3()

	// An image over the whole budget runs alone instead of never.
	big, err := b.Reserve(ctx, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := b.Reserve(short, 1); err == nil {
		t.Fatal("a reservation ran beside an image holding the whole budget")
	}
	big()
	if r, err := b.Reserve(ctx, 1); err != nil {
		t.Fatal(err)
	} else {
		r()
	}
}
