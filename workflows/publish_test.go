package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/pressroom/pressroom/activities"
	"github.com/pressroom/pressroom/workflows"
)

const revisionID = "7b0e1c2d-0000-4000-8000-000000000001"

// publishEnv is a test environment with the publish activity mocked; p is
// the receiver whose method value names the activity.
func publishEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, *activities.Publisher) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	e := s.NewTestWorkflowEnvironment()
	p := &activities.Publisher{}
	e.RegisterActivity(p)
	return e, p
}

func TestPublishRevisionSucceeds(t *testing.T) {
	e, p := publishEnv(t)
	want := &workflows.PublishResult{Status: "published", VersionsCount: 3}
	e.OnActivity(p.Publish, mock.Anything, revisionID).Return(want, nil).Once()
	e.ExecuteWorkflow(workflows.PublishRevision, revisionID)
	if !e.IsWorkflowCompleted() || e.GetWorkflowError() != nil {
		t.Fatalf("completed %v, error %v", e.IsWorkflowCompleted(), e.GetWorkflowError())
	}
	var got *workflows.PublishResult
	if err := e.GetWorkflowResult(&got); err != nil {
		t.Fatal(err)
	}
	if got == nil || *got != *want {
		t.Fatalf("result = %+v, want %+v", got, want)
	}
	e.AssertExpectations(t)
}

// A rejection (a draft gone, a rule broken: the activity already marked the
// revision failed) is not retried and fails the workflow with its message.
func TestPublishRevisionRejected(t *testing.T) {
	e, p := publishEnv(t)
	msg := "2 of the listed drafts no longer exist (reverted or published meanwhile)"
	e.OnActivity(p.Publish, mock.Anything, revisionID).
		Return(nil, temporal.NewNonRetryableApplicationError(msg, workflows.RejectedType, nil)).Once()
	e.ExecuteWorkflow(workflows.PublishRevision, revisionID)
	if !e.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	err := e.GetWorkflowError()
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != workflows.RejectedType || app.Message() != msg {
		t.Fatalf("workflow error = %v, want the rejection %q", err, msg)
	}
	e.AssertExpectations(t) // Once: a rejection is not retried
}

// Transient failures (the database unreachable, a deadlock, an activity
// timeout) are retried with backoff until the publish succeeds.
func TestPublishRevisionRetriesTransientFailures(t *testing.T) {
	e, p := publishEnv(t)
	var attempts []int32
	var startToClose, heartbeat time.Duration
	record := func(ctx context.Context) {
		info := activity.GetInfo(ctx)
		attempts = append(attempts, info.Attempt)
		startToClose, heartbeat = info.Deadline.Sub(info.StartedTime), info.HeartbeatTimeout
	}
	e.OnActivity(p.Publish, mock.Anything, revisionID).Return(func(ctx context.Context, _ string) (*workflows.PublishResult, error) {
		record(ctx)
		return nil, errors.New("publish revision: dial tcp 127.0.0.1:5432: connect: connection refused")
	}).Times(4)
	e.OnActivity(p.Publish, mock.Anything, revisionID).Return(func(ctx context.Context, _ string) (*workflows.PublishResult, error) {
		record(ctx)
		return &workflows.PublishResult{Status: "published", VersionsCount: 1}, nil
	}).Once()
	e.ExecuteWorkflow(workflows.PublishRevision, revisionID)
	if err := e.GetWorkflowError(); err != nil {
		t.Fatalf("transient failures were not retried: %v", err)
	}
	var got *workflows.PublishResult
	if err := e.GetWorkflowResult(&got); err != nil || got.Status != "published" {
		t.Fatalf("result = %+v, %v", got, err)
	}
	e.AssertExpectations(t)
	if len(attempts) != 5 || attempts[0] != 1 || attempts[4] != 5 {
		t.Errorf("attempts = %v, want 1..5", attempts)
	}
	// Not a requirement, a fact operators need: without a heartbeat, a
	// worker that dies mid-publish is noticed only when StartToClose runs out.
	t.Logf("publish activity: StartToClose %s, heartbeat timeout %s", startToClose, heartbeat)
}

// A rejection after transient failures still ends the workflow at once.
func TestPublishRevisionRejectedAfterRetries(t *testing.T) {
	e, p := publishEnv(t)
	msg := "the revision breaks a rule of the content: duplicate key"
	e.OnActivity(p.Publish, mock.Anything, revisionID).Return(nil, errors.New("deadlock detected")).Twice()
	e.OnActivity(p.Publish, mock.Anything, revisionID).
		Return(nil, temporal.NewNonRetryableApplicationError(msg, workflows.RejectedType, nil)).Once()
	e.ExecuteWorkflow(workflows.PublishRevision, revisionID)
	var app *temporal.ApplicationError
	if err := e.GetWorkflowError(); !errors.As(err, &app) || app.Message() != msg {
		t.Fatalf("workflow error = %v, want the rejection %q", err, msg)
	}
	e.AssertExpectations(t)
}
