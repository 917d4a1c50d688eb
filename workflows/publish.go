package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// PublishRevisionID is the workflow id of a revision's publication.
func PublishRevisionID(revisionID string) string { return "publish-revision-" + revisionID }

// NotCommitted is the status of a publish whose revision was not there:
// only a run that an API before the start-after-commit change started
// inside the revision's transaction ends so (drafts.RevisionCommitted).
// Nothing was published and no draft was reserved.
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
// A scheduled revision's workflow starts with the search attribute
// PressroomPublishAt (PublishAtAttribute): it first waits on a durable
// timer until then, which MovePublishAtUpdate moves and CancelUpdate ends.
// The timer lives in Temporal's history, so it survives restarts of the
// API, the worker and the Temporal server. The time travels as the search
// attribute, which operators see anyway, rather than as an argument: every
// caller, and every history recorded before scheduling existed, keeps the
// one-argument signature.
func PublishRevision(ctx workflow.Context, revisionID string) (*PublishResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute, HeartbeatTimeout: 20 * time.Second, RetryPolicy: retryForever,
	})
	publishAt, scheduled := workflow.GetTypedSearchAttributes(ctx).GetTime(PublishAtAttribute)
	if scheduled && !publishAt.IsZero() && workflow.GetVersion(ctx, scheduledVersion, workflow.DefaultVersion, 1) == 1 {
		// The update handlers first: an Update may arrive with the very
		// first workflow task, before anything else has run.
		w, err := newSchedule(ctx, revisionID, publishAt)
		if err != nil {
			return nil, err
		}
		if workflow.GetVersion(ctx, startedAfterCommitChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
			// Recorded when the API started the workflow before it
			// committed the revision: a revision that never committed must
			// not leave a timer pending for months.
			var committed bool
			if err := workflow.ExecuteActivity(ctx, awaitRevisionActivity, revisionID).Get(ctx, &committed); err != nil {
				return nil, err
			}
			if !committed {
				return &PublishResult{Status: NotCommitted}, nil
			}
		}
		fire, err := w.wait(ctx)
		if err != nil {
			return nil, err
		}
		if !fire {
			return &PublishResult{Status: Cancelled}, nil
		}
	}
	var res *PublishResult
	err := workflow.ExecuteActivity(ctx, publishActivity, revisionID).Get(ctx, &res)
	if err == nil && res != nil && res.Status == "published" {
		endReview(ctx)
	}
	return res, err
}

// endsReviewVersion marks the change that made a publish of a release tell
// the release's review (ReleaseReview) that it may end: histories recorded
// before it replay without the signal.
const endsReviewVersion = "publish-ends-review"

// endReview signals the review of the release the revision published, if
// it published one. A release never reviewed has no review workflow: the
// signal then fails, harmlessly; a review that misses it finds the release
// published in the database at its next look.
func endReview(ctx workflow.Context) {
	releaseID, ok := workflow.GetTypedSearchAttributes(ctx).GetKeyword(ReleaseIDAttribute)
	if !ok || releaseID == "" || workflow.GetVersion(ctx, endsReviewVersion, workflow.DefaultVersion, 1) != 1 {
		return
	}
	_ = workflow.SignalExternalWorkflow(ctx, ReleaseReviewID(releaseID), "", ReleaseEndedSignal, nil).Get(ctx, nil)
}

// startedAfterCommitChange marks the change that made the API start a
// revision's workflow after the revision commits (docs/architecture.md,
// "From a commit to a workflow"): a scheduled publish no longer checks that
// its revision committed (AwaitRevision) before it waits. Histories
// recorded before it replay with the check.
const startedAfterCommitChange = "started-after-commit"

// schedule is a scheduled publish's time and what the updates did to it.
type schedule struct {
	revisionID              string
	at                      time.Time
	fired, cancelled, moved bool
	// moving counts the moves under way (recording their time in the
	// database): a timer that fires meanwhile waits for them, so a move
	// the database took is never answered after the publish has begun.
	moving int
	// one orders the moves, so the database's publish_at ends at the time
	// of the last one, as the workflow's does.
	one workflow.Mutex
}

// recordedMoveVersion marks the change that made the workflow the one
// writer of a scheduled revision's publish_at: a move records it (local
// activity RecordPublishAt) before it is acknowledged, so the API holds no
// transaction while it waits for the Update. Moves in histories recorded
// before it replay without the activity.
const recordedMoveVersion = "move-records-publish-at"

// moveRecordOptions bound the recording of a move to less than the API's
// 10 s wait for the Update: a database that does not answer in time fails
// the move (503, nothing changed) instead of completing it unheard.
var moveRecordOptions = workflow.LocalActivityOptions{
	StartToCloseTimeout: 3 * time.Second, ScheduleToCloseTimeout: 7 * time.Second,
	RetryPolicy: &temporal.RetryPolicy{InitialInterval: 200 * time.Millisecond, BackoffCoefficient: 2,
		MaximumInterval: 2 * time.Second, NonRetryableErrorTypes: []string{RejectedType}},
}

// notScheduled is the refusal of an update that came too late.
func notScheduled() error {
	return temporal.NewApplicationError("the revision is no longer scheduled", NotScheduledType)
}

// newSchedule registers the updates of a scheduled publish.
func newSchedule(ctx workflow.Context, revisionID string, at time.Time) (*schedule, error) {
	w := &schedule{revisionID: revisionID, at: at, one: workflow.NewMutex(ctx)}
	tooLate := func() error {
		if w.fired || w.cancelled {
			return notScheduled()
		}
		return nil
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, MovePublishAtUpdate, func(ctx workflow.Context, to time.Time) (time.Time, error) {
		if workflow.GetVersion(ctx, recordedMoveVersion, workflow.DefaultVersion, 1) == 1 {
			w.moving++
			defer func() { w.moving-- }()
			if err := w.one.Lock(ctx); err != nil {
				return time.Time{}, err
			}
			defer w.one.Unlock() // after w.at is set below
			// The timer may have fired (or a cancel come) since the
			// validator ran, or while an earlier move held the lock.
			if err := tooLate(); err != nil {
				return time.Time{}, err
			}
			if err := w.record(ctx, to); err != nil {
				return time.Time{}, err
			}
		}
		w.at, w.moved = to, true
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
		return nil, err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, CancelUpdate, func(ctx workflow.Context) error {
		w.cancelled = true
		return nil
	}, workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context) error { return tooLate() }}); err != nil {
		return nil, err
	}
	return w, nil
}

// record writes a move's time into the database (w.one held). A revision
// the database no longer has scheduled (DELETE committed its cancellation
// first) refuses the move. A failed write may still have committed, so the
// time the workflow keeps is written back, retried until it is, before the
// move is refused: the database never keeps a time the workflow will not
// fire at.
func (w *schedule) record(ctx workflow.Context, to time.Time) error {
	var recorded bool
	err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, moveRecordOptions),
		recordPublishAtActivity, w.revisionID, to).Get(ctx, &recorded)
	if err == nil && !recorded {
		return notScheduled()
	}
	if err != nil {
		back := workflow.ExecuteLocalActivity(localForever(ctx, 30*time.Second), recordPublishAtActivity, w.revisionID, w.at)
		if berr := back.Get(ctx, nil); berr != nil {
			return berr
		}
	}
	return err
}

// wait waits until the (possibly moved) time, and reports whether to
// publish (false: cancelled).
func (w *schedule) wait(ctx workflow.Context) (bool, error) {
	for !w.fired && !w.cancelled {
		w.moved = false
		if d := w.at.Sub(workflow.Now(ctx)); d >= time.Millisecond {
			tctx, stop := workflow.WithCancel(ctx)
			timer := workflow.NewTimerWithOptions(tctx, d, workflow.TimerOptions{Summary: "publish at " + w.at.UTC().Format(time.RFC3339)})
			if err := workflow.Await(ctx, func() bool { return timer.IsReady() || w.moved || w.cancelled }); err != nil {
				stop()
				return false, err
			}
			if w.moved || w.cancelled {
				stop() // a new timer for the new time, or none
				continue
			}
			if err := timer.Get(ctx, nil); err != nil {
				return false, err
			}
		}
		// The time has come; a move accepted before it decides first.
		if err := workflow.Await(ctx, func() bool { return w.moving == 0 }); err != nil {
			return false, err
		}
		w.fired = !w.moved && !w.cancelled
	}
	// A move still recording when a cancel came ends (refused) before
	// the workflow does, so its caller hears 409 rather than nothing.
	if err := workflow.Await(ctx, func() bool { return w.moving == 0 }); err != nil {
		return false, err
	}
	return !w.cancelled, nil
}
