package e2e

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/testsupport"
	"github.com/pressroom/pressroom/worker"
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
	ctx := context.Background()
	h := testsupport.NewWebhookHistory(t, s.DB, "prune")
	old := time.Now().Add(-s.Config.Webhooks.Retention - 24*time.Hour)
	gone, goneDs := h.Event(old, models.DeliverySucceeded, models.DeliveryFailed)
	waiting, waitingDs := h.Event(old, models.DeliverySucceeded, models.DeliveryPending)
	recent, recentDs := h.Event(time.Now(), models.DeliverySucceeded)

	if err := worker.EnsureSchedules(ctx, s.Temporal, s.Config); err != nil {
		t.Fatal(err)
	}
	id := workflows.WebhookPruneScheduleID + "-" + s.Config.Webhooks.TaskQueue
	sched := s.Temporal.ScheduleClient().GetHandle(ctx, id)
	t.Cleanup(func() {
		for _, id := range []string{id, workflows.WebhookSweepScheduleID + "-" + s.Config.Webhooks.TaskQueue} {
			_ = s.Temporal.ScheduleClient().GetHandle(ctx, id).Delete(ctx)
		}
	})
	d, err := sched.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if every := d.Schedule.Spec.Intervals; len(every) != 1 || every[0].Every != time.Hour {
		t.Errorf("prune schedule intervals %+v, want hourly", every)
	}
	// Run it now rather than wait for the hour.
	if err := sched.Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
		t.Fatal(err)
	}
	var run string
	for deadline := time.Now().Add(time.Minute); run == "" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if d, err = sched.Describe(ctx); err == nil && len(d.Info.RecentActions) > 0 {
			run = d.Info.RecentActions[0].StartWorkflowResult.WorkflowID
		}
	}
	if run == "" {
		t.Fatal("the triggered prune did not start")
	}
	var got workflows.PrunedWebhookHistory
	wait, cancel := context.WithTimeout(ctx, 2*time.Minute) // the run's own timeout is an hour
	defer cancel()
	if err := s.Temporal.GetWorkflow(wait, run, "").Get(wait, &got); err != nil {
		t.Fatalf("prune run %s: %v", run, err)
	}
	s.recordHistory(t, run, "prune-webhook-history.history.json")
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
