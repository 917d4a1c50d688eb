package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// PublishRevisionID is the workflow id of a revision's publication.
func PublishRevisionID(revisionID string) string { return "publish-revision-" + revisionID }

// NotCommitted is the status of a publish whose revision was never
// committed: nothing was published and no draft was reserved.
const NotCommitted = "not-committed"

// PublishResult is what a publish produced: the result of PublishRevision
// and of its activity.
type PublishResult struct {
	Status        string
	VersionsCount int
}

// PublishRevision publishes a revision: one activity, one database
// transaction. Transient failures (the database unreachable) are retried
// with backoff until it succeeds; a rejection fails the workflow with the
// message the revision also records.
func PublishRevision(ctx workflow.Context, revisionID string) (*PublishResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute, HeartbeatTimeout: 20 * time.Second, RetryPolicy: retryForever,
	})
	var res *PublishResult
	err := workflow.ExecuteActivity(ctx, publishActivity, revisionID).Get(ctx, &res)
	return res, err
}
