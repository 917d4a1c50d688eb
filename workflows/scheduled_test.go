package workflows_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/pressroom/pressroom/activities"
	"github.com/pressroom/pressroom/workflows"
)

// updateCallbacks records what an Update's caller hears.
type updateCallbacks struct {
	rejected, completedErr error
	accepted, completed    bool
	result                 any
}

func (u *updateCallbacks) cb() *testsuite.TestUpdateCallback {
	return &testsuite.TestUpdateCallback{
		OnAccept:   func() { u.accepted = true },
		OnReject:   func(err error) { u.rejected = err },
		OnComplete: func(res any, err error) { u.completed, u.result, u.completedErr = true, res, err },
	}
}

// scheduledEnv is publishEnv with RecordPublishAt recording every time (in a database that has the revision
// scheduled) and Publish recording the workflow time it ran at.
func scheduledEnv(t *testing.T, ranAt *time.Time) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	e, p := publishEnv(t)
	e.OnActivity(p.RecordPublishAt, mock.Anything, revisionID, mock.Anything).Return(true, nil).Maybe()
	return awaitAndPublish(e, p, ranAt)
}

// awaitAndPublish mocks Publish (recording the workflow time it ran at).
// AwaitRevision is not mocked: runs started since the started-after-commit
// change never call it (their revision committed before they started), and
// the real activity, without a database, would fail the test.
func awaitAndPublish(e *testsuite.TestWorkflowEnvironment, p *activities.Publisher, ranAt *time.Time) *testsuite.TestWorkflowEnvironment {
	e.OnActivity(p.Publish, mock.Anything, revisionID).Return(func(_ context.Context, _ string) (*workflows.PublishResult, error) {
		*ranAt = e.Now()
		return &workflows.PublishResult{Status: "published", VersionsCount: 1}, nil
	}).Maybe()
	return e
}

func TestScheduledPublishWaitsForItsTime(t *testing.T) {
	var ranAt time.Time
	e := scheduledEnv(t, &ranAt)
	start := e.Now()
	at := start.Add(3 * time.Hour)
	scheduleAt(t, e, at)
	var got *workflows.PublishResult
	if err := e.GetWorkflowResult(&got); err != nil || got.Status != "published" {
		t.Fatalf("result = %+v, %v", got, err)
	}
	if ranAt.Before(at) {
		t.Errorf("published at %s, before its time %s", ranAt, at)
	}
}

func TestScheduledPublishMoves(t *testing.T) {
	var ranAt time.Time
	e := scheduledEnv(t, &ranAt)
	at := e.Now().Add(3 * time.Hour)
	to := e.Now().Add(5 * time.Hour)
	moved := &updateCallbacks{}
	e.RegisterDelayedCallback(func() {
		e.UpdateWorkflow(workflows.MovePublishAtUpdate, "move", moved.cb(), to)
	}, time.Hour)
	scheduleAt(t, e, at)
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if !moved.completed || moved.completedErr != nil || moved.rejected != nil {
		t.Fatalf("move: %+v", moved)
	}
	if ranAt.Before(to) {
		t.Errorf("published at %s, before the moved time %s (first time %s)", ranAt, to, at)
	}
	e.AssertExpectations(t)
}

func TestScheduledPublishCancelled(t *testing.T) {
	e, _ := publishEnv(t)
	cancelled := &updateCallbacks{}
	e.RegisterDelayedCallback(func() { e.UpdateWorkflow(workflows.CancelUpdate, "cancel", cancelled.cb()) }, time.Hour)
	scheduleAt(t, e, e.Now().Add(3*time.Hour))
	var got *workflows.PublishResult
	if err := e.GetWorkflowResult(&got); err != nil || got.Status != workflows.Cancelled {
		t.Fatalf("result = %+v, %v; want cancelled", got, err)
	}
	if !cancelled.completed || cancelled.completedErr != nil {
		t.Fatalf("cancel: %+v", cancelled)
	}
	e.AssertExpectations(t) // Publish never ran
}

// A run recorded before the started-after-commit change (an API that
// started it inside the revision's transaction) whose revision rolled back
// leaves no timer behind.
func TestScheduledPublishNotCommitted(t *testing.T) {
	e, p := publishEnv(t)
	e.OnGetVersion("started-after-commit", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	e.OnActivity(p.AwaitRevision, mock.Anything, revisionID).Return(false, nil).Once()
	scheduleAt(t, e, e.Now().Add(24*time.Hour))
	var got *workflows.PublishResult
	if err := e.GetWorkflowResult(&got); err != nil || got.Status != workflows.NotCommitted {
		t.Fatalf("result = %+v, %v", got, err)
	}
}

// A run started since the started-after-commit change trusts its commit:
// it never asks AwaitRevision (here it would answer "not committed"), and
// publishes at its time.
func TestScheduledPublishStartedAfterCommitDoesNotAwait(t *testing.T) {
	var ranAt time.Time
	e := scheduledEnv(t, &ranAt)
	asked := false
	e.OnActivity("AwaitRevision", mock.Anything, revisionID).Return(func(context.Context, string) (bool, error) {
		asked = true
		return false, nil
	}).Maybe()
	scheduleAt(t, e, e.Now().Add(time.Hour))
	var got *workflows.PublishResult
	if err := e.GetWorkflowResult(&got); err != nil || got.Status != "published" || asked {
		t.Fatalf("result = %+v, %v, AwaitRevision asked %v; want published without asking", got, err, asked)
	}
}

// scheduleAt runs the workflow as the API starts a scheduled revision's:
// with PressroomPublishAt among its search attributes.
func scheduleAt(t *testing.T, e *testsuite.TestWorkflowEnvironment, at time.Time) {
	t.Helper()
	if err := e.SetTypedSearchAttributesOnStart(temporal.NewSearchAttributes(workflows.PublishAtAttribute.ValueSet(at))); err != nil {
		t.Fatal(err)
	}
	e.ExecuteWorkflow(workflows.PublishRevision, revisionID)
}

// recordings is what RecordPublishAt wrote, in order: the database's
// publish_at is the last one.
type recordings struct {
	mu  sync.Mutex
	ats []time.Time
}

func (r *recordings) add(at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ats = append(r.ats, at)
}

func (r *recordings) all() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.ats...)
}

// movingEnv is scheduledEnv with RecordPublishAt answered by record.
func movingEnv(t *testing.T, ranAt *time.Time, record func(at time.Time) (bool, error)) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	e, p := publishEnv(t)
	e.OnActivity(p.RecordPublishAt, mock.Anything, revisionID, mock.Anything).Return(func(_ context.Context, _ string, at time.Time) (bool, error) {
		return record(at)
	})
	return awaitAndPublish(e, p, ranAt)
}

// runMovedAfterAnHour runs the workflow scheduled at at, moved to to an
// hour in, and returns what the move's caller heard.
func runMovedAfterAnHour(t *testing.T, e *testsuite.TestWorkflowEnvironment, at, to time.Time) *updateCallbacks {
	t.Helper()
	moved := &updateCallbacks{}
	e.RegisterDelayedCallback(func() { e.UpdateWorkflow(workflows.MovePublishAtUpdate, "move", moved.cb(), to) }, time.Hour)
	scheduleAt(t, e, at)
	return moved
}

// The workflow is the one writer of publish_at: a move is acknowledged only
// once the database has the new time.
func TestScheduledPublishMoveRecordsTheTime(t *testing.T) {
	var ranAt time.Time
	db := &recordings{}
	e := movingEnv(t, &ranAt, func(at time.Time) (bool, error) { db.add(at); return true, nil })
	at, to := e.Now().Add(3*time.Hour), e.Now().Add(5*time.Hour)
	moved := &updateCallbacks{}
	var recordedBeforeAck []time.Time
	cb := moved.cb()
	complete := cb.OnComplete
	cb.OnComplete = func(res any, err error) { recordedBeforeAck = db.all(); complete(res, err) }
	e.RegisterDelayedCallback(func() { e.UpdateWorkflow(workflows.MovePublishAtUpdate, "move", cb, to) }, time.Hour)
	scheduleAt(t, e, at)
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if !moved.completed || moved.completedErr != nil {
		t.Fatalf("move: %+v", moved)
	}
	if len(recordedBeforeAck) != 1 || !recordedBeforeAck[0].Equal(to) {
		t.Errorf("recorded before the acknowledgement: %v, want [%s]", recordedBeforeAck, to)
	}
	if ranAt.Before(to) {
		t.Errorf("published at %s, before the moved time %s", ranAt, to)
	}
}

// A revision the database no longer has scheduled (DELETE committed its
// cancellation before the workflow heard of it) refuses the move as too
// late; the workflow's time stays.
func TestScheduledPublishMoveOfCancelledRevision(t *testing.T) {
	var ranAt time.Time
	e := movingEnv(t, &ranAt, func(time.Time) (bool, error) { return false, nil })
	at, to := e.Now().Add(3*time.Hour), e.Now().Add(5*time.Hour)
	moved := runMovedAfterAnHour(t, e, at, to)
	var app *temporal.ApplicationError
	if !moved.completed || !errors.As(moved.completedErr, &app) || app.Type() != workflows.NotScheduledType {
		t.Fatalf("move of a cancelled revision: %+v, want %s", moved, workflows.NotScheduledType)
	}
	if ranAt.Before(at) || !ranAt.Before(to) {
		t.Errorf("fired at %s, want its unmoved time %s", ranAt, at)
	}
}

// A write that fails may still have committed: the workflow writes its own
// time back before it refuses the move, so the database keeps the time the
// workflow fires at.
func TestScheduledPublishMoveRecordFails(t *testing.T) {
	var ranAt time.Time
	db := &recordings{}
	e := movingEnv(t, &ranAt, func(at time.Time) (bool, error) {
		db.add(at)
		if len(db.all()) == 1 {
			return false, temporal.NewNonRetryableApplicationError("commit outcome unknown", workflows.RejectedType, nil)
		}
		return true, nil
	})
	at, to := e.Now().Add(3*time.Hour), e.Now().Add(5*time.Hour)
	moved := runMovedAfterAnHour(t, e, at, to)
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if !moved.completed || moved.completedErr == nil {
		t.Fatalf("move whose write failed: %+v, want an error", moved)
	}
	if got := db.all(); len(got) != 2 || !got[1].Equal(at) {
		t.Errorf("recorded %v, want [%s %s]", got, to, at)
	}
	if ranAt.Before(at) || !ranAt.Before(to) {
		t.Errorf("fired at %s, want its unmoved time %s", ranAt, at)
	}
}

// Concurrent moves are recorded one at a time, in the order the workflow
// applies them: the database's last time is the one the timer fires at,
// even when the first write is slow to report.
func TestScheduledPublishConcurrentMovesAgree(t *testing.T) {
	var ranAt time.Time
	db := &recordings{}
	e := movingEnv(t, &ranAt, func(at time.Time) (bool, error) {
		first := len(db.all()) == 0
		db.add(at)
		if first {
			time.Sleep(300 * time.Millisecond) // committed, not yet reported
		}
		return true, nil
	})
	start := e.Now()
	a, b := &updateCallbacks{}, &updateCallbacks{}
	e.RegisterDelayedCallback(func() {
		e.UpdateWorkflow(workflows.MovePublishAtUpdate, "a", a.cb(), start.Add(5*time.Hour))
		e.UpdateWorkflow(workflows.MovePublishAtUpdate, "b", b.cb(), start.Add(4*time.Hour))
	}, time.Hour)
	scheduleAt(t, e, start.Add(3*time.Hour))
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if !a.completed || a.completedErr != nil || !b.completed || b.completedErr != nil {
		t.Fatalf("moves: a %+v, b %+v", a, b)
	}
	got := db.all()
	if len(got) != 2 {
		t.Fatalf("recorded %v, want both moves", got)
	}
	last := got[len(got)-1]
	if ranAt.Before(last) || ranAt.After(last.Add(time.Minute)) {
		t.Errorf("fired at %s; the database's publish_at is %s (recorded %v)", ranAt, last, got)
	}
}

// A timer that fires while a move is recording waits for it: the move,
// once acknowledged, is the time the publish happens at.
func TestScheduledPublishTimerWaitsForMove(t *testing.T) {
	var ranAt time.Time
	e := movingEnv(t, &ranAt, func(time.Time) (bool, error) {
		time.Sleep(300 * time.Millisecond)
		return true, nil
	})
	start := e.Now()
	at, to := start.Add(time.Hour), start.Add(5*time.Hour)
	moved := &updateCallbacks{}
	// Sent a moment before the timer: the recording outlasts it.
	e.RegisterDelayedCallback(func() { e.UpdateWorkflow(workflows.MovePublishAtUpdate, "move", moved.cb(), to) }, time.Hour-time.Millisecond)
	scheduleAt(t, e, at)
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if !moved.completed {
		t.Fatalf("move: %+v", moved)
	}
	if moved.completedErr == nil && ranAt.Before(to) {
		t.Errorf("move acknowledged, yet published at %s, before the moved time %s", ranAt, to)
	}
}
