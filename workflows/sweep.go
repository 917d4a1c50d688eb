package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// SweepScheduleID names the schedule that runs SweepUploads.
const SweepScheduleID = "pressroom-sweep-uploads"

// SweepUploads removes signatures never confirmed, and their objects, and
// returns how many. Since the upload queue it then ends the uploads whose
// ingestion run is gone (SweepAbandoned; how many is in the run's
// history), so that none holds its site's queue for good.
func SweepUploads(ctx workflow.Context) (int, error) {
	n, err := runScheduled[int](ctx, sweepUnconfirmedActivity, 5*time.Minute)
	if err != nil || workflow.GetVersion(ctx, sweepAbandonedChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return n, err
	}
	_, err = runScheduled[int](ctx, sweepAbandonedActivity, 5*time.Minute)
	return n, err
}

// sweepAbandonedChange is the workflow.GetVersion change that added
// SweepAbandoned to SweepUploads.
const sweepAbandonedChange = "sweep-abandoned-uploads"

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
