package e2e

import (
	"testing"
	"time"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/testsupport"
	"github.com/pressroom/pressroom/workflows"
)

// The retention end to end, the Temporal way: the schedule every worker
// creates at start runs PruneWebhookHistory on the webhook task queue,
// whose activity deletes the history older than PRESSROOM_WEBHOOK_RETENTION
// (30 days here) and keeps a pending delivery and its event; the run's
// result says what went.
func TestWebhookPruneSchedule(t *testing.T) {
	t.Parallel()
	s := start(t)
	h := testsupport.NewWebhookHistory(t, s.DB, "prune")
	old := time.Now().Add(-s.Config.Webhooks.Retention - 24*time.Hour)
	gone, goneDs := h.Event(old, models.DeliverySucceeded, models.DeliveryFailed)
	waiting, waitingDs := h.Event(old, models.DeliverySucceeded, models.DeliveryPending)
	recent, recentDs := h.Event(time.Now(), models.DeliverySucceeded)

	var got workflows.PrunedWebhookHistory
	run := s.runScheduleNow(t, workflows.WebhookPruneScheduleID+"-"+s.Config.Webhooks.TaskQueue, time.Hour, &got, "prune-webhook-history.history.json")
	if got != (workflows.PrunedWebhookHistory{Deliveries: 3, Events: 1}) {
		t.Errorf("prune run %s deleted %+v, want 3 deliveries and 1 event", run, got)
	}
	if left := h.Exist("webhook_events", gone, waiting, recent); len(left) != 2 || left[gone] {
		t.Errorf("events left %v, want all but %s", left, gone)
	}
	all := append(append(goneDs, waitingDs...), recentDs...)
	if left := h.Exist("webhook_deliveries", all...); len(left) != 2 || !left[waitingDs[1]] || !left[recentDs[0]] {
		t.Errorf("deliveries left %v, want the pending %s and the recent %s", left, waitingDs[1], recentDs[0])
	}
}
