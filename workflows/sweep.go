package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// SweepScheduleID names the schedule that runs SweepUploads.
const SweepScheduleID = "pressroom-sweep-uploads"

// SweepUploads removes signatures never confirmed, and their objects.
func SweepUploads(ctx workflow.Context) (int, error) {
	return runScheduled[int](ctx, sweepUnconfirmedActivity, 5*time.Minute)
}

// runScheduled runs the one activity of a scheduled upkeep workflow (the
// sweeps, the webhook prune) and returns its result. The activity
// heartbeats; it is retried a few times (retrySweep), and whatever a
// failed run leaves, the schedule's next run does.
func runScheduled[T any](ctx workflow.Context, activity string, timeout time.Duration) (T, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: timeout, HeartbeatTimeout: time.Minute, RetryPolicy: retrySweep,
	})
	var out T
	err := workflow.ExecuteActivity(ctx, activity).Get(ctx, &out)
	return out, err
}
