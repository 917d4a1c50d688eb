package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// retryForever retries transient failures (storage or database down) with
// backoff for as long as it takes: the upload stays "processing" and the
// pending activity, with its last error, is visible in the Temporal UI.
// Rejections are not retried.
var retryForever = &temporal.RetryPolicy{
	InitialInterval:        time.Second,
	BackoffCoefficient:     2,
	MaximumInterval:        30 * time.Second,
	NonRetryableErrorTypes: []string{RejectedType},
}

// localRetryWindow is how long a local activity with retryForever keeps
// retrying. A local activity needs it spelled out: without a
// ScheduleToCloseTimeout the SDK uses its StartToCloseTimeout as one, so
// retryForever would give up 30 s after the first attempt and fail the
// workflow (a storage outage of 30 s left a recorded upload's temporary
// object behind that way). Ordinary activities have no such default.
const localRetryWindow = 365 * 24 * time.Hour

// localForever is ctx with local activity options that give each attempt
// attempt and retry with retryForever's backoff for localRetryWindow. Long
// backoffs become workflow timers (the SDK's doing), so a pending retry
// holds no worker slot.
func localForever(ctx workflow.Context, attempt time.Duration) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: attempt, ScheduleToCloseTimeout: localRetryWindow, RetryPolicy: retryForever,
	})
}

// retrySweep gives up after a few attempts: the next scheduled sweep
// tries again.
var retrySweep = &temporal.RetryPolicy{InitialInterval: 5 * time.Second, MaximumAttempts: 5}
