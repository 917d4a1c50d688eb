package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

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

// scheduledEnv is publishEnv with AwaitRevision answering "committed" and
// Publish recording the workflow time it ran at.
func scheduledEnv(t *testing.T, ranAt *time.Time) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	e, p := publishEnv(t)
	e.OnActivity(p.AwaitRevision, mock.Anything, revisionID).Return(true, nil).Once()
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
	e, p := publishEnv(t)
	e.OnActivity(p.AwaitRevision, mock.Anything, revisionID).Return(true, nil).Once()
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

// A revision whose POST rolled back leaves no timer behind.
func TestScheduledPublishNotCommitted(t *testing.T) {
	e, p := publishEnv(t)
	e.OnActivity(p.AwaitRevision, mock.Anything, revisionID).Return(false, nil).Once()
	scheduleAt(t, e, e.Now().Add(24*time.Hour))
	var got *workflows.PublishResult
	if err := e.GetWorkflowResult(&got); err != nil || got.Status != workflows.NotCommitted {
		t.Fatalf("result = %+v, %v", got, err)
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
