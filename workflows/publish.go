package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// PublishRevisionID is the workflow id of a revision's publication.
func PublishRevisionID(revisionID string) string { return "publish-revision-" + revisionID }

// NotCommitted is the status of a publish whose revision was never
// committed: nothing was published and no draft was reserved.
const NotCommitted = "not-committed"

// Cancelled is the status of a scheduled publish cancelled before its time
// (DELETE /revisions/:id): nothing was published.
const Cancelled = "cancelled"

// Updates a scheduled publish accepts while it waits (docs/drafts.md).
const (
	// MovePublishAtUpdate moves the time (argument and result: the new
	// time). Rejected once the timer has fired or the publish was cancelled.
	MovePublishAtUpdate = "move-publish-at"
	// CancelUpdate ends the wait without publishing. The API records the
	// cancellation first (drafts.Cancel), so a publish that fires anyway
	// finds the revision cancelled and does nothing.
	CancelUpdate = "cancel"
	// NotScheduledType is the application error type of an update that
	// came too late: the publish is under way or over.
	NotScheduledType = "NotScheduled"
)

// scheduledVersion marks the change that added the timer: histories of
// runs started before it (immediate publishes only) replay unchanged.
const scheduledVersion = "scheduled-publish"

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
//
// With a publishAt (a scheduled revision) it first waits on a durable
// timer, which MovePublishAtUpdate moves and CancelUpdate ends; the timer
// lives in Temporal's history, so it survives restarts of the API, the
// worker and the Temporal server. Runs started before publishAt existed
// carry one argument: publishAt is then zero, an immediate publish.
func PublishRevision(ctx workflow.Context, revisionID string, publishAt time.Time) (*PublishResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute, HeartbeatTimeout: 20 * time.Second, RetryPolicy: retryForever,
	})
	if !publishAt.IsZero() && workflow.GetVersion(ctx, scheduledVersion, workflow.DefaultVersion, 1) == 1 {
		// The API starts the workflow before it commits the revision: a
		// revision that never committed must not leave a timer pending for
		// months.
		var committed bool
		if err := workflow.ExecuteActivity(ctx, awaitRevisionActivity, revisionID).Get(ctx, &committed); err != nil {
			return nil, err
		}
		if !committed {
			return &PublishResult{Status: NotCommitted}, nil
		}
		fire, err := waitUntil(ctx, publishAt)
		if err != nil {
			return nil, err
		}
		if !fire {
			return &PublishResult{Status: Cancelled}, nil
		}
	}
	var res *PublishResult
	err := workflow.ExecuteActivity(ctx, publishActivity, revisionID).Get(ctx, &res)
	return res, err
}

// waitUntil waits until at, which MovePublishAtUpdate may move, and reports
// whether to publish (false: cancelled).
func waitUntil(ctx workflow.Context, at time.Time) (bool, error) {
	var fired, cancelled, moved bool
	tooLate := func() error {
		if fired || cancelled {
			return temporal.NewApplicationError("the revision is no longer scheduled", NotScheduledType)
		}
		return nil
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, MovePublishAtUpdate, func(ctx workflow.Context, to time.Time) (time.Time, error) {
		at, moved = to, true
		// What the Temporal UI shows (and lists filter by) follows the move.
		if err := workflow.UpsertTypedSearchAttributes(ctx, PublishAtAttribute.ValueSet(to)); err != nil {
			return time.Time{}, err
		}
		return to, nil
	}, workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, to time.Time) error {
		if to.IsZero() {
			return temporal.NewApplicationError("a time is required", NotScheduledType)
		}
		return tooLate()
	}}); err != nil {
		return false, err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, CancelUpdate, func(ctx workflow.Context) error {
		cancelled = true
		return nil
	}, workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context) error { return tooLate() }}); err != nil {
		return false, err
	}
	for !fired && !cancelled {
		moved = false
		d := at.Sub(workflow.Now(ctx))
		if d < time.Millisecond {
			fired = true
			break
		}
		tctx, stop := workflow.WithCancel(ctx)
		timer := workflow.NewTimerWithOptions(tctx, d, workflow.TimerOptions{Summary: "publish at " + at.UTC().Format(time.RFC3339)})
		if err := workflow.Await(ctx, func() bool { return timer.IsReady() || moved || cancelled }); err != nil {
			stop()
			return false, err
		}
		if moved || cancelled {
			stop() // a new timer for the new time, or none
			continue
		}
		if err := timer.Get(ctx, nil); err != nil {
			return false, err
		}
		fired = true
	}
	return !cancelled, nil
}
