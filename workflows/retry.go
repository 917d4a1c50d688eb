package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
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

// retrySweep gives up after a few attempts: the next scheduled sweep
// tries again.
var retrySweep = &temporal.RetryPolicy{InitialInterval: 5 * time.Second, MaximumAttempts: 5}
