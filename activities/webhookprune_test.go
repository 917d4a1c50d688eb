package activities

import (
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/testsupport"
	"github.com/pressroom/pressroom/workflows"
)

// The activity cuts at now minus the configured retention, as an activity
// (heartbeats and all), and deletes nothing without a sane retention.
func TestPruneWebhookHistoryActivity(t *testing.T) {
	t.Parallel()
	db := testsupport.NewDatabase(t)
	h := testsupport.NewWebhookHistory(t, db, "prune")
	week := 7 * 24 * time.Hour
	oldEvent, old := h.Event(time.Now().Add(-week-time.Hour), models.DeliverySucceeded, models.DeliveryFailed)
	keptEvent, kept := h.Event(time.Now().Add(-week+time.Hour), models.DeliverySucceeded)
	waitingEvent, waiting := h.Event(time.Now().Add(-2*week), testsupport.DeliveryRunning)

	run := func(retention time.Duration) (workflows.PrunedWebhookHistory, error) {
		var s testsuite.WorkflowTestSuite
		e := s.NewTestActivityEnvironment()
		a := &Webhooks{DB: db.DB, Config: config.Webhooks{Retention: retention}}
		e.RegisterActivity(a)
		v, err := e.ExecuteActivity(a.PruneWebhookHistory)
		var out workflows.PrunedWebhookHistory
		if err == nil {
			err = v.Get(&out)
		}
		return out, err
	}

	// Unset (a Webhooks built without its configuration) or below the
	// minimum: refused, not retried, nothing deleted.
	for _, r := range []time.Duration{0, time.Hour} {
		_, err := run(r)
		var app *temporal.ApplicationError
		if !errors.As(err, &app) || !app.NonRetryable() {
			t.Fatalf("retention %s: %v, want a non-retryable error", r, err)
		}
	}
	if n := len(h.Exist("webhook_deliveries", old...)); n != 2 {
		t.Fatalf("a refused run deleted deliveries: %d of 2 left", n)
	}

	got, err := run(week)
	if err != nil || got != (workflows.PrunedWebhookHistory{Deliveries: 2, Events: 1}) {
		t.Fatalf("pruned %+v, %v; want 2 deliveries and 1 event", got, err)
	}
	if left := h.Exist("webhook_deliveries", append(append(old, kept...), waiting...)...); len(left) != 2 || !left[kept[0]] || !left[waiting[0]] {
		t.Errorf("deliveries left %v, want %s (newer) and %s (in progress)", left, kept[0], waiting[0])
	}
	if left := h.Exist("webhook_events", oldEvent, keptEvent, waitingEvent); len(left) != 2 || left[oldEvent] {
		t.Errorf("events left %v, want all but %s", left, oldEvent)
	}
	if again, err := run(week); err != nil || again != (workflows.PrunedWebhookHistory{}) {
		t.Errorf("second run pruned %+v, %v", again, err)
	}
}
