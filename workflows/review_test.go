package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/pressroom/pressroom/activities"
	"github.com/pressroom/pressroom/workflows"
)

const (
	reviewSite    = "7b0e1c2d-0000-4000-8000-0000000000a1"
	reviewRelease = "7b0e1c2d-0000-4000-8000-0000000000a2"
	requestID     = "7b0e1c2d-0000-4000-8000-0000000000b1"
	approvalID    = "7b0e1c2d-0000-4000-8000-0000000000b2"
	reminderEvery = 24 * time.Hour
)

// outbox stands for the outbox the review's activities write into: it keeps
// one event per key (what the deterministic event id does in Postgres), and
// when each arrived.
type outbox struct {
	mu     sync.Mutex
	keys   map[string]bool
	events []sent
	// answered is what the database says of a request (a verdict
	// committed whose Update has not arrived); ended of the release.
	answered, ended bool
}

type sent struct {
	typ, key string
	at       time.Duration // since the start
}

func (o *outbox) write(typ, key string, at time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.keys[key] {
		return
	}
	o.keys[key] = true
	o.events = append(o.events, sent{typ, key, at})
}

// count is how many events of type typ were written.
func (o *outbox) count(typ string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, e := range o.events {
		if e.typ == typ {
			n++
		}
	}
	return n
}

// reviewEnv is a test environment running ReleaseReview with its
// activities writing into o.
func reviewEnv(t *testing.T, o *outbox) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	e := s.NewTestWorkflowEnvironment()
	r := &activities.Reviews{}
	e.RegisterActivity(r)
	start := e.Now()
	o.keys = map[string]bool{}
	e.OnActivity(r.RecordReviewEvent, mock.Anything, mock.Anything).Return(func(_ context.Context, ev workflows.ReviewEvent) error {
		o.write(ev.Type, ev.Key, e.Now().Sub(start))
		return nil
	}).Maybe()
	e.OnActivity(r.SendReviewReminder, mock.Anything, mock.Anything).Return(func(_ context.Context, rm workflows.ReviewReminder) (workflows.ReminderOutcome, error) {
		if o.ended || o.answered {
			return workflows.ReminderOutcome{Ended: o.ended, Answered: o.answered}, nil
		}
		o.write("release.review-reminder", rm.Key, e.Now().Sub(start))
		return workflows.ReminderOutcome{}, nil
	}).Maybe()
	e.OnActivity(r.ReleaseEnded, mock.Anything, reviewSite, reviewRelease).Return(func(context.Context, string, string) (bool, error) {
		return o.ended, nil
	}).Maybe()
	return e
}

// review sends the notice of a committed review after d.
func review(t *testing.T, e *testsuite.TestWorkflowEnvironment, d time.Duration, id, verdict string) {
	e.RegisterDelayedCallback(func() {
		e.UpdateWorkflow(workflows.ReviewUpdate, id, &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) { t.Errorf("review %s %s rejected: %v", id, verdict, err) },
			OnComplete: func(_ any, err error) {
				if err != nil {
					t.Errorf("review %s %s failed: %v", id, verdict, err)
				}
			},
		}, workflows.ReviewNotice{ReviewID: id, Verdict: verdict})
	}, d)
}

// endAfter ends the release (published) after d: the database says so, and
// the signal comes.
func endAfter(e *testsuite.TestWorkflowEnvironment, o *outbox, d time.Duration) {
	e.RegisterDelayedCallback(func() {
		o.ended = true
		e.SignalWorkflow(workflows.ReleaseEndedSignal, nil)
	}, d)
}

func runReview(t *testing.T, e *testsuite.TestWorkflowEnvironment) {
	t.Helper()
	e.ExecuteWorkflow(workflows.ReleaseReview, workflows.ReviewInput{SiteID: reviewSite, ReleaseID: reviewRelease, Reminder: reminderEvery})
	if !e.IsWorkflowCompleted() || e.GetWorkflowError() != nil {
		t.Fatalf("completed %v, error %v", e.IsWorkflowCompleted(), e.GetWorkflowError())
	}
}

// A request nobody answers is reminded of every period, 3 times and no
// more, each under its own key; the review then waits for the release's end.
func TestReviewRemindsThreeTimesAtMost(t *testing.T) {
	o := &outbox{}
	e := reviewEnv(t, o)
	review(t, e, 0, requestID, "requested")
	endAfter(e, o, 10*reminderEvery)
	runReview(t, e)
	if n := o.count("release.review-requested"); n != 1 {
		t.Errorf("review-requested sent %d times, want 1", n)
	}
	var at []time.Duration
	for _, ev := range o.events {
		if ev.typ == "release.review-reminder" {
			at = append(at, ev.at)
			if want := fmt.Sprintf("release-review-%s/reminder/%s/%d", reviewRelease, requestID, len(at)); ev.key != want {
				t.Errorf("reminder key %q, want %q", ev.key, want)
			}
		}
	}
	if len(at) != workflows.MaxReviewReminders {
		t.Fatalf("reminders at %v, want %d", at, workflows.MaxReviewReminders)
	}
	for i, d := range at {
		if want := time.Duration(i+1) * reminderEvery; d != want {
			t.Errorf("reminder %d at %s, want %s", i+1, d, want)
		}
	}
}

// A verdict stops the reminders of the request it answers, and is sent.
func TestReviewVerdictStopsReminders(t *testing.T) {
	o := &outbox{}
	e := reviewEnv(t, o)
	review(t, e, 0, requestID, "requested")
	review(t, e, reminderEvery+time.Hour, approvalID, "approved")
	endAfter(e, o, 10*reminderEvery)
	runReview(t, e)
	if n := o.count("release.review-reminder"); n != 1 {
		t.Errorf("%d reminders, want the 1 before the approval: %+v", n, o.events)
	}
	if n := o.count("release.approved"); n != 1 {
		t.Errorf("release.approved sent %d times, want 1", n)
	}
}

// A new request after changes were requested gets its own reminders.
func TestReviewNewRequestRemindsAgain(t *testing.T) {
	o := &outbox{}
	e := reviewEnv(t, o)
	second := "7b0e1c2d-0000-4000-8000-0000000000b3"
	review(t, e, 0, requestID, "requested")
	review(t, e, time.Hour, approvalID, "changes-requested")
	review(t, e, 2*time.Hour, second, "requested")
	endAfter(e, o, 10*reminderEvery)
	runReview(t, e)
	if n := o.count("release.review-reminder"); n != workflows.MaxReviewReminders {
		t.Errorf("%d reminders, want %d of the second request: %+v", n, workflows.MaxReviewReminders, o.events)
	}
	if n := o.count("release.changes-requested"); n != 1 {
		t.Errorf("changes-requested sent %d times", n)
	}
	if n := o.count("release.review-requested"); n != 2 {
		t.Errorf("review-requested sent %d times, want 2", n)
	}
}

// A review sent twice (the API's Update got through, then the commit sweep
// sent it again) writes its event once and does not restart the reminders.
func TestReviewSentTwiceCountsOnce(t *testing.T) {
	o := &outbox{}
	e := reviewEnv(t, o)
	review(t, e, 0, requestID, "requested")
	e.RegisterDelayedCallback(func() {
		e.UpdateWorkflow(workflows.ReviewUpdate, "again", (&updateCallbacks{}).cb(),
			workflows.ReviewNotice{ReviewID: requestID, Verdict: "requested"})
	}, reminderEvery+time.Hour)
	endAfter(e, o, 10*reminderEvery)
	runReview(t, e)
	if n := o.count("release.review-requested"); n != 1 {
		t.Errorf("review-requested written %d times, want 1", n)
	}
	if n := o.count("release.review-reminder"); n != workflows.MaxReviewReminders {
		t.Errorf("%d reminders, want %d", n, workflows.MaxReviewReminders)
	}
}

// A verdict the database has but the workflow has not heard of yet (its
// Update waits for the commit sweep) stops the reminders too.
func TestReviewAnsweredInTheDatabaseStopsReminders(t *testing.T) {
	o := &outbox{}
	e := reviewEnv(t, o)
	review(t, e, 0, requestID, "requested")
	e.RegisterDelayedCallback(func() { o.answered = true }, reminderEvery+time.Hour)
	endAfter(e, o, 10*reminderEvery)
	runReview(t, e)
	if n := o.count("release.review-reminder"); n != 1 {
		t.Errorf("%d reminders, want 1", n)
	}
}

// The release's end (its signal) ends the review at once, reminders pending.
func TestReviewEndsWhenTheReleaseEnds(t *testing.T) {
	o := &outbox{}
	e := reviewEnv(t, o)
	start := e.Now()
	review(t, e, 0, requestID, "requested")
	endAfter(e, o, time.Hour)
	runReview(t, e)
	if d := e.Now().Sub(start); d > 2*time.Hour {
		t.Errorf("ended %s after the start, want at the signal (1h)", d)
	}
	if n := o.count("release.review-reminder"); n != 0 {
		t.Errorf("%d reminders after the release ended", n)
	}
}

// Without its signal (lost), the review finds the release ended in the
// database at its next look.
func TestReviewEndsWhenTheDatabaseSaysSo(t *testing.T) {
	o := &outbox{}
	e := reviewEnv(t, o)
	start := e.Now()
	review(t, e, 0, requestID, "requested")
	e.RegisterDelayedCallback(func() { o.ended = true }, time.Hour)
	runReview(t, e)
	if d := e.Now().Sub(start); d != reminderEvery {
		t.Errorf("ended %s after the start, want at the first look (%s)", d, reminderEvery)
	}
	if n := o.count("release.review-reminder"); n != 0 {
		t.Errorf("%d reminders after the release ended", n)
	}
}

// A release already published when its review starts (a review resent by
// the commit sweep after the publish) ends it at once, its event written.
func TestReviewOfAnEndedReleaseEndsAtOnce(t *testing.T) {
	o := &outbox{ended: true}
	e := reviewEnv(t, o)
	start := e.Now()
	review(t, e, 0, approvalID, "approved")
	runReview(t, e)
	if d := e.Now().Sub(start); d >= time.Minute {
		t.Errorf("ended %s after the start, want at once", d)
	}
	if n := o.count("release.approved"); n != 1 {
		t.Errorf("release.approved written %d times, want 1", n)
	}
}

// A notice with no review id or an unknown verdict is refused.
func TestReviewRefusesABadNotice(t *testing.T) {
	o := &outbox{}
	e := reviewEnv(t, o)
	u := &updateCallbacks{}
	e.RegisterDelayedCallback(func() {
		e.UpdateWorkflow(workflows.ReviewUpdate, "bad", u.cb(), workflows.ReviewNotice{ReviewID: requestID, Verdict: "maybe"})
	}, 0)
	endAfter(e, o, time.Hour)
	runReview(t, e)
	var app *temporal.ApplicationError
	if u.rejected == nil || !errors.As(u.rejected, &app) || app.Type() != workflows.InvalidReviewType {
		t.Errorf("rejected = %v, want %s", u.rejected, workflows.InvalidReviewType)
	}
}

// A review waiting longer than a run's bound continues as new, its state
// (the pending request, the reminders sent) carried over.
func TestReviewContinuesAsNewWithItsState(t *testing.T) {
	o := &outbox{}
	e := reviewEnv(t, o)
	review(t, e, 0, requestID, "requested")
	e.ExecuteWorkflow(workflows.ReleaseReview, workflows.ReviewInput{SiteID: reviewSite, ReleaseID: reviewRelease, Reminder: reminderEvery})
	var can *workflow.ContinueAsNewError
	if err := e.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("error = %v, want continue-as-new", err)
	}
	var in workflows.ReviewInput
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &in); err != nil {
		t.Fatal(err)
	}
	if in.Pending != requestID || in.Reminded != workflows.MaxReviewReminders || in.Reminder != reminderEvery {
		t.Errorf("carried over %+v", in)
	}
	if n := o.count("release.review-reminder"); n != workflows.MaxReviewReminders {
		t.Errorf("%d reminders, want %d", n, workflows.MaxReviewReminders)
	}
}
