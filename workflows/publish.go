package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
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

// localPublishVersion names the change that runs the publish first as a
// local activity (workflow.GetVersion: histories recorded before it replay
// the activity-only path).
const localPublishVersion = "publish-local-first"

// LocalPublishTimeout bounds the first, local attempt of a publish; after
// it (or any failure that is not a rejection) the publish goes on as an
// activity retried forever.
const LocalPublishTimeout = 30 * time.Second

// PublishRevision publishes a revision: one database transaction, in the
// Publish activity. It runs first as a local activity, in the worker that
// runs the workflow task: no activity task to dispatch through the matching
// service and no second workflow task, so the workflow usually completes in
// its first workflow task (docs/drafts.md, "Publish latency"). The local
// attempt's result is recorded in the history (a marker the UI shows as a
// local activity). If it fails for any reason but a rejection (database
// unreachable, timeout, worker gone), the publish falls back to the Publish
// activity as before: transient failures retried with backoff until it
// succeeds, heartbeats, and the pending activity with its last error in the
// UI. Publish is safe to run twice. A rejection fails the workflow with the
// message the revision also records.
func PublishRevision(ctx workflow.Context, revisionID string) (*PublishResult, error) {
	var res *PublishResult
	if workflow.GetVersion(ctx, localPublishVersion, workflow.DefaultVersion, 1) == 1 {
		lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
			StartToCloseTimeout: LocalPublishTimeout,
			RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
		})
		err := workflow.ExecuteLocalActivity(lctx, publishActivity, revisionID).Get(lctx, &res)
		if err == nil {
			return res, nil
		}
		var app *temporal.ApplicationError
		if errors.As(err, &app) && app.Type() == RejectedType {
			return nil, err
		}
		workflow.GetLogger(ctx).Warn("local publish failed; publishing as an activity", "revision", revisionID, "error", err)
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute, HeartbeatTimeout: 20 * time.Second, RetryPolicy: retryForever,
	})
	err := workflow.ExecuteActivity(ctx, publishActivity, revisionID).Get(ctx, &res)
	return res, err
}
