package models_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/testsupport"
)

// Old and new history in every status, on two sites: exactly the finished
// deliveries older than the cut-off go, and the old events none of whose
// deliveries is left; pending ones (queued or in progress) and the events
// they point at stay, as does everything newer. Small batches make it loop,
// and a second run deletes nothing.
func TestPruneWebhookHistory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testsupport.NewDatabase(t)
	a := testsupport.NewWebhookHistory(t, db, "prune-a")
	b := testsupport.NewWebhookHistory(t, db, "prune-b")
	now := time.Now()
	cutoff := now.Add(-30 * 24 * time.Hour)
	old, recent := cutoff.Add(-10*24*time.Hour), cutoff.Add(time.Hour)
	const (
		pending   = models.DeliveryPending
		running   = testsupport.DeliveryRunning
		succeeded = models.DeliverySucceeded
		failed    = models.DeliveryFailed
	)

	var gone, kept struct{ events, deliveries []uuid.UUID }
	// Old events whose deliveries all ended: all of it goes.
	for range 4 {
		e, ds := a.Event(old, succeeded, failed, succeeded)
		gone.events, gone.deliveries = append(gone.events, e), append(gone.deliveries, ds...)
	}
	e, ds := b.Event(old, failed)
	gone.events, gone.deliveries = append(gone.events, e), append(gone.deliveries, ds...)
	// An old event without deliveries (its webhook was deleted) goes.
	e, _ = a.Event(old)
	gone.events = append(gone.events, e)
	// Old events with a delivery still pending (queued, in progress):
	// their finished deliveries go, the pending ones and the event stay.
	for _, pendingOne := range []string{pending, running} {
		e, ds := a.Event(old, succeeded, pendingOne, failed)
		gone.deliveries = append(gone.deliveries, ds[0], ds[2])
		kept.events, kept.deliveries = append(kept.events, e), append(kept.deliveries, ds[1])
	}
	e, ds = b.Event(old, running)
	kept.events, kept.deliveries = append(kept.events, e), append(kept.deliveries, ds...)
	// Everything newer than the cut-off stays, in every status.
	e, ds = a.Event(recent, succeeded, failed, pending, running)
	kept.events, kept.deliveries = append(kept.events, e), append(kept.deliveries, ds...)
	e, ds = b.Event(recent, succeeded)
	kept.events, kept.deliveries = append(kept.events, e), append(kept.deliveries, ds...)
	e, _ = a.Event(recent)
	kept.events = append(kept.events, e)

	var webhooksBefore int
	if err := db.NewRaw("SELECT count(*) FROM webhooks").Scan(ctx, &webhooksBefore); err != nil {
		t.Fatal(err)
	}

	const batch = 3
	var calls []models.PrunedWebhookHistory
	got, err := models.PruneWebhookHistory(ctx, db, cutoff, batch, func(p models.PrunedWebhookHistory) { calls = append(calls, p) })
	if err != nil {
		t.Fatal(err)
	}
	want := models.PrunedWebhookHistory{Deliveries: len(gone.deliveries), Events: len(gone.events)}
	if got != want {
		t.Fatalf("pruned %+v, want %+v", got, want)
	}
	// One statement per full batch and a last, short one, for each table:
	// 17 deliveries are 5 full batches and one of 2, 6 events 2 full
	// batches and an empty one.
	if wantCalls := want.Deliveries/batch + 1 + want.Events/batch + 1; len(calls) != wantCalls {
		t.Errorf("%d statements (%+v), want %d", len(calls), calls, wantCalls)
	}
	if len(calls) == 0 || calls[len(calls)-1] != got {
		t.Errorf("the last progress %+v is not the result %+v", calls, got)
	}
	for i := 1; i < len(calls); i++ {
		if d := calls[i].Deliveries - calls[i-1].Deliveries + calls[i].Events - calls[i-1].Events; d < 0 || d > batch {
			t.Errorf("statement %d deleted %d rows, batch is %d", i, d, batch)
		}
	}

	check := func(when string) {
		t.Helper()
		for _, c := range []struct {
			table      string
			gone, kept []uuid.UUID
		}{{"webhook_events", gone.events, kept.events}, {"webhook_deliveries", gone.deliveries, kept.deliveries}} {
			ids := append(append([]uuid.UUID{}, c.gone...), c.kept...)
			exist := a.Exist(c.table, ids...)
			for _, id := range c.gone {
				if exist[id] {
					t.Errorf("%s: %s %s was kept", when, c.table, id)
				}
			}
			for _, id := range c.kept {
				if !exist[id] {
					t.Errorf("%s: %s %s was deleted", when, c.table, id)
				}
			}
		}
		var webhooks int
		if err := db.NewRaw("SELECT count(*) FROM webhooks").Scan(ctx, &webhooks); err != nil || webhooks != webhooksBefore {
			t.Errorf("%s: %d webhooks (%v), were %d", when, webhooks, err, webhooksBefore)
		}
	}
	check("after the first run")

	again, err := models.PruneWebhookHistory(ctx, db, cutoff, batch, nil)
	if err != nil || again != (models.PrunedWebhookHistory{}) {
		t.Fatalf("second run pruned %+v (%v), want nothing", again, err)
	}
	check("after the second run")
}

func TestPruneWebhookHistoryRefusesAnEmptyBatch(t *testing.T) {
	t.Parallel()
	if _, err := models.PruneWebhookHistory(context.Background(), nil, time.Now(), 0, nil); err == nil {
		t.Fatal("batch 0 accepted")
	}
}
