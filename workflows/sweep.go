package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// SweepScheduleID names the schedule that runs SweepUploads.
const SweepScheduleID = "pressroom-sweep-uploads"

// SweepUploads removes signatures never confirmed, and their objects.
func SweepUploads(ctx workflow.Context) (int, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute, HeartbeatTimeout: time.Minute, RetryPolicy: retrySweep,
	})
	var n int
	err := workflow.ExecuteActivity(ctx, sweepUnconfirmedActivity).Get(ctx, &n)
	return n, err
}
