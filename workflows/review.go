package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// ReleaseReviewID is the workflow id of a release's review: one per
// release, so every request and verdict of it reaches the same run.
func ReleaseReviewID(releaseID string) string { return "release-review-" + releaseID }

// The messages a release's review accepts (docs/releases.md, "Durable
// review").
const (
	// ReviewUpdate is a committed request or verdict (argument: a
	// ReviewNotice). Its Update id is the review's id, so Temporal takes a
	// review once per run however often it is sent; the events it sends
	// are keyed by the review's id too, so a resend in a later run sends
	// nothing twice either.
	ReviewUpdate = "review"
	// ReleaseEndedSignal tells the review that its release was published
	// or cancelled (sent after the commit): the review ends.
	ReleaseEndedSignal = "release-ended"
	// MaxReviewReminders is how many reminders one request gets at most.
	MaxReviewReminders = 3
	// InvalidReviewType is the application error type of an Update the
	// workflow refuses (no review id, an unknown verdict).
	InvalidReviewType = "InvalidReview"
)

// Activities of the review (activities.Reviews).
const (
	recordReviewEventActivity  = "RecordReviewEvent"
	sendReviewReminderActivity = "SendReviewReminder"
	releaseEndedActivity       = "ReleaseEnded"
)

// Webhook event types the review sends (webhooks.Events has them too:
// package webhooks is not imported here, workflow code stays free of the
// API's dependencies).
const (
	reviewRequestedEvent = "release.review-requested"
	approvedEvent        = "release.approved"
	changesEvent         = "release.changes-requested"
)

// ReviewInput is the input of ReleaseReview. Reminder travels with it (set
// from the starter's PRESSROOM_REVIEW_REMINDER), so the workflow stays
// deterministic; Pending and Reminded carry the state across
// continue-as-new.
type ReviewInput struct {
	SiteID    string
	ReleaseID string
	Reminder  time.Duration
	// Pending is the request (review id) no verdict has answered yet, ""
	// for none; Reminded counts the reminders sent for it.
	Pending  string
	Reminded int
}

// ReviewNotice is a committed review, as ReviewUpdate carries it.
type ReviewNotice struct {
	ReviewID string
	Verdict  string // requested, approved or changes-requested
}

// ReviewEvent is what RecordReviewEvent writes into the outbox: the event
// Type about the review ReviewID, under the deterministic Key (the event's
// id derives from it: writing it twice writes it once).
type ReviewEvent struct {
	SiteID, ReleaseID, ReviewID string
	Type, Key                   string
}

// ReviewReminder is the input of SendReviewReminder: the N-th reminder of
// the request RequestID.
type ReviewReminder struct {
	SiteID, ReleaseID, RequestID string
	N                            int
	Key                          string
}

// ReminderOutcome is what SendReviewReminder found in the database: the
// release ended (published or cancelled), or the request was answered (a
// verdict or a newer request committed after it, whose Update may still be
// on its way), or neither, and the reminder was written.
type ReminderOutcome struct {
	Ended, Answered bool
}

// reviewRunLimit bounds one run's history: after that many timer rounds
// the review continues as new with its state (a release may wait in review
// for months with nobody answering; each round is a few events).
const reviewRunLimit = 100

// reviewEventOf is the webhook event of a verdict ("" for an unknown one).
func reviewEventOf(verdict string) string {
	switch verdict {
	case "requested":
		return reviewRequestedEvent
	case "approved":
		return approvedEvent
	case "changes-requested":
		return changesEvent
	}
	return ""
}

// review is a run's state.
type review struct {
	in ReviewInput
	// changed: an Update moved the pending request; the wait starts over.
	changed, ended bool
}

// ReleaseReview is the durable review of one release (docs/releases.md,
// "Durable review"):
//
//   - every committed request and verdict reaches it as a ReviewUpdate
//     (from the API after its commit, or from the worker's commit sweep for
//     one whose Update did not get through), and it sends the webhook
//     event of it (release.review-requested, release.approved,
//     release.changes-requested);
//   - while a request waits for a verdict, a durable timer of
//     in.Reminder sends release.review-reminder, at most
//     MaxReviewReminders times per request; a verdict (or a newer request)
//     stops them. Before sending, the activity looks at the database, so a
//     verdict committed whose Update has not arrived yet stops them too;
//   - it ends when ReleaseEndedSignal comes, or when it finds the release
//     published or cancelled in the database: at start, and every
//     in.Reminder while it waits, so an end whose signal was lost ends it
//     within one period.
//
// Every event is written by an activity under a deterministic key (the
// review's id, or the request's id and the reminder's number), so a retried
// activity or a replay after a crash writes none twice.
func ReleaseReview(ctx workflow.Context, in ReviewInput) error {
	ctx = reviewActivities(ctx)
	r := &review{in: in}
	// The handlers first: an Update may come with the first workflow task.
	if err := r.register(ctx); err != nil {
		return err
	}
	ended := workflow.GetSignalChannel(ctx, ReleaseEndedSignal)
	workflow.Go(ctx, func(ctx workflow.Context) {
		ended.Receive(ctx, nil)
		r.ended = true
	})
	// A release published or cancelled before the review started (or
	// before a resent review reached a new run) ends it at once.
	var done bool
	if err := workflow.ExecuteActivity(ctx, releaseEndedActivity, in.SiteID, in.ReleaseID).Get(ctx, &done); err != nil {
		return err
	}
	for rounds := 0; !done && !r.ended; {
		if rounds >= reviewRunLimit || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
				return err
			}
			if r.ended {
				break
			}
			return workflow.NewContinueAsNewError(ctx, ReleaseReview, r.in)
		}
		fired, err := r.wait(ctx)
		if err != nil {
			return err
		}
		if !fired {
			continue // the pending request changed, or the release ended
		}
		rounds++
		if done, err = r.remind(ctx); err != nil {
			return err
		}
	}
	// Events of Updates under way are written before the run ends.
	return workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
}

// reviewActivities gives ctx the review's activity options: each attempt
// a short database transaction, retried for as long as the database is
// down. An Update's handler gets a context of its own, so it sets them too.
func reviewActivities(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second, RetryPolicy: retryForever})
}

// register sets the ReviewUpdate handler.
func (r *review) register(ctx workflow.Context) error {
	return workflow.SetUpdateHandlerWithOptions(ctx, ReviewUpdate, func(ctx workflow.Context, n ReviewNotice) error {
		ev := ReviewEvent{SiteID: r.in.SiteID, ReleaseID: r.in.ReleaseID, ReviewID: n.ReviewID,
			Type: reviewEventOf(n.Verdict), Key: ReleaseReviewID(r.in.ReleaseID) + "/review/" + n.ReviewID}
		if err := workflow.ExecuteActivity(reviewActivities(ctx), recordReviewEventActivity, ev).Get(ctx, nil); err != nil {
			return err
		}
		switch {
		case n.Verdict == "requested" && n.ReviewID != r.in.Pending:
			r.in.Pending, r.in.Reminded, r.changed = n.ReviewID, 0, true
		case n.Verdict != "requested" && r.in.Pending != "":
			r.in.Pending, r.in.Reminded, r.changed = "", 0, true
		}
		return nil
	}, workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, n ReviewNotice) error {
		if n.ReviewID == "" || reviewEventOf(n.Verdict) == "" {
			return temporal.NewApplicationError(fmt.Sprintf("invalid review notice %q/%q", n.ReviewID, n.Verdict), InvalidReviewType)
		}
		return nil
	}})
}

// wait waits one period of in.Reminder on a durable timer, and reports
// whether it ran out (false: an Update changed the pending request, or the
// release ended, first).
func (r *review) wait(ctx workflow.Context) (bool, error) {
	r.changed = false
	tctx, stop := workflow.WithCancel(ctx)
	defer stop()
	summary := "look whether the release ended"
	if r.in.Pending != "" && r.in.Reminded < MaxReviewReminders {
		summary = fmt.Sprintf("reminder %d of request %s", r.in.Reminded+1, r.in.Pending)
	}
	timer := workflow.NewTimerWithOptions(tctx, r.in.Reminder, workflow.TimerOptions{Summary: summary})
	if err := workflow.Await(ctx, func() bool { return timer.IsReady() || r.changed || r.ended }); err != nil {
		return false, err
	}
	if r.changed || r.ended {
		return false, nil
	}
	return true, timer.Get(ctx, nil)
}

// remind sends the pending request's next reminder, or with none due only
// looks whether the release ended; it reports whether it did.
func (r *review) remind(ctx workflow.Context) (bool, error) {
	if r.in.Pending == "" || r.in.Reminded >= MaxReviewReminders {
		var done bool
		err := workflow.ExecuteActivity(ctx, releaseEndedActivity, r.in.SiteID, r.in.ReleaseID).Get(ctx, &done)
		return done, err
	}
	pending, n := r.in.Pending, r.in.Reminded+1
	rm := ReviewReminder{SiteID: r.in.SiteID, ReleaseID: r.in.ReleaseID, RequestID: pending, N: n,
		Key: fmt.Sprintf("%s/reminder/%s/%d", ReleaseReviewID(r.in.ReleaseID), pending, n)}
	var out ReminderOutcome
	if err := workflow.ExecuteActivity(ctx, sendReviewReminderActivity, rm).Get(ctx, &out); err != nil {
		return false, err
	}
	switch {
	case out.Ended:
		return true, nil
	case r.in.Pending != pending:
		// An Update moved the pending request while the activity ran: its
		// state is the newer one.
	case out.Answered:
		r.in.Pending, r.in.Reminded = "", 0
	default:
		r.in.Reminded = n
	}
	return false, nil
}
