package e2e

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/pressroom/pressroom/worker"
	"github.com/pressroom/pressroom/workflows"
)

// runScheduleNow runs one of the worker's schedules the way an operator's
// "trigger" does, rather than wait for its interval: it makes the
// schedules every worker makes at start (deleting this stack's own when
// the test ends), checks that schedule id runs every `every`, triggers it,
// decodes the run's result into out and records its history as history
// for the replay test. It returns the run's workflow id.
func (s *system) runScheduleNow(t *testing.T, id string, every time.Duration, out any, history string) string {
	t.Helper()
	ctx := context.Background()
	if err := worker.EnsureSchedules(ctx, s.Temporal, s.Config); err != nil {
		t.Fatal(err)
	}
	queue, hooks := s.Config.TaskQueue, s.Config.Webhooks.TaskQueue
	t.Cleanup(func() {
		for _, id := range []string{workflows.AuditPruneScheduleID + "-" + queue, workflows.OAuthPruneScheduleID + "-" + queue,
			workflows.WebhookSweepScheduleID + "-" + hooks, workflows.WebhookPruneScheduleID + "-" + hooks} {
			_ = s.Temporal.ScheduleClient().GetHandle(ctx, id).Delete(ctx)
		}
	})
	sched := s.Temporal.ScheduleClient().GetHandle(ctx, id)
	d, err := sched.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Schedule.Spec.Intervals; len(got) != 1 || got[0].Every != every {
		t.Errorf("schedule %s intervals %+v, want every %s", id, got, every)
	}
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
		t.Fatalf("the triggered run of schedule %s did not start", id)
	}
	wait, cancel := context.WithTimeout(ctx, 2*time.Minute) // a prune run's own timeout is an hour
	defer cancel()
	if err := s.Temporal.GetWorkflow(wait, run, "").Get(wait, out); err != nil {
		t.Fatalf("run %s of schedule %s: %v", run, id, err)
	}
	s.recordHistory(t, run, history)
	return run
}
