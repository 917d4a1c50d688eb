package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/pressroom/pressroom/activities"
)

// PublishRevisionID is the workflow id of a revision's publication.
func PublishRevisionID(revisionID string) string { return "publish-revision-" + revisionID }

// PublishRevision publishes a revision: one activity, one database
// transaction. Transient failures (the database unreachable) are retried
// with backoff until it succeeds; a rejection fails the workflow with the
// message the revision also records.
func PublishRevision(ctx workflow.Context, revisionID string) (*activities.PublishResult, error) {
	var p *activities.Publisher
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute, HeartbeatTimeout: 20 * time.Second, RetryPolicy: retryForever,
	})
	var res *activities.PublishResult
	err := workflow.ExecuteActivity(ctx, p.Publish, revisionID).Get(ctx, &res)
	return res, err
}
