package activities

import (
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/pressroom/pressroom/workflows"
)

// reject wraps a message a person can act on as a non-retryable error of
// workflows.RejectedType: the workflow records it and does not retry.
func reject(format string, args ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, args...), workflows.RejectedType, nil)
}
