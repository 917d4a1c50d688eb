package workflows_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/pressroom/pressroom/activities"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/workflows"
)

// envQueue is a test environment for IngestUpload's current path (the
// per-site queue): ClaimSlot, then Ingest and Record, ReleaseSlot (whose
// answer the run wakes with TurnSignal), DeleteTemporary, the outcome.
func envQueue(t *testing.T) (*testsuite.TestWorkflowEnvironment, *activities.Uploads) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	e := s.NewTestWorkflowEnvironment()
	a := &activities.Uploads{}
	e.RegisterActivity(a)
	return e, a
}

// outcome matches the upsert of PressroomOutcome = want.
func outcome(e *testsuite.TestWorkflowEnvironment, want string) {
	e.OnUpsertTypedSearchAttributes(mock.MatchedBy(func(sa temporal.SearchAttributes) bool {
		got, ok := sa.GetKeyword(workflows.OutcomeAttribute)
		return ok && got == want && sa.Size() == 1
	})).Return(nil).Once()
}

var (
	granted = models.UploadTurn{Claimed: true, Granted: true}
	waiting = func(position int) models.UploadTurn { return models.UploadTurn{Claimed: true, Position: position} }
)

// An upload whose turn has come runs at once, wakes the uploads the
// release names, and records the outcome "finished".
func TestIngestInTurnFinished(t *testing.T) {
	e, a := envQueue(t)
	got := calls(e)
	e.OnActivity(a.ClaimSlot, mock.Anything, upload).Return(granted, nil).Once()
	e.OnActivity(a.Ingest, mock.Anything, upload).Return(processed, nil).Once()
	e.OnActivity(a.Record, mock.Anything, upload, processed).Return(nil).Once()
	e.OnActivity(a.ReleaseSlot, mock.Anything, upload).Return([]string{"next-1", "next-2"}, nil).Once()
	e.OnSignalExternalWorkflow(mock.Anything, "asset-upload-next-1", "", workflows.TurnSignal, nil).Return(nil).Once()
	// An upload that ended meanwhile cannot be signalled: no matter.
	e.OnSignalExternalWorkflow(mock.Anything, "asset-upload-next-2", "", workflows.TurnSignal, nil).Return(errors.New("workflow not found")).Once()
	e.OnActivity(a.DeleteTemporary, mock.Anything, upload).Return(nil).Once()
	outcome(e, workflows.OutcomeFinished)
	e.ExecuteWorkflow(workflows.IngestUpload, upload)
	if !e.IsWorkflowCompleted() || e.GetWorkflowError() != nil {
		t.Fatalf("completed %v, error %v", e.IsWorkflowCompleted(), e.GetWorkflowError())
	}
	e.AssertExpectations(t)
	want := []string{"local:ClaimSlot", "Ingest", "local:Record", "local:ReleaseSlot", "local:DeleteTemporary"}
	if !slices.Equal(*got, want) {
		t.Fatalf("activities %v, want %v", *got, want)
	}
}

// A waiting upload sleeps until it is woken, then looks again; no image
// work happens before its turn.
func TestIngestInTurnWaitsToBeWoken(t *testing.T) {
	e, a := envQueue(t)
	start := e.Now()
	var ingestAt time.Time
	e.OnActivity(a.ClaimSlot, mock.Anything, upload).Return(waiting(40), nil).Once()
	e.OnActivity(a.ClaimSlot, mock.Anything, upload).Return(granted, nil).Once()
	e.OnActivity(a.Ingest, mock.Anything, upload).Run(func(mock.Arguments) { ingestAt = e.Now() }).Return(processed, nil).Once()
	e.OnActivity(a.Record, mock.Anything, upload, processed).Return(nil).Once()
	e.OnActivity(a.ReleaseSlot, mock.Anything, upload).Return([]string(nil), nil).Once()
	e.OnActivity(a.DeleteTemporary, mock.Anything, upload).Return(nil).Once()
	outcome(e, workflows.OutcomeFinished)
	// Woken twice before it looks: one look answers both.
	e.RegisterDelayedCallback(func() {
		e.SignalWorkflow(workflows.TurnSignal, nil)
		e.SignalWorkflow(workflows.TurnSignal, nil)
	}, 7*time.Second)
	e.ExecuteWorkflow(workflows.IngestUpload, upload)
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	e.AssertExpectations(t)
	if waited := ingestAt.Sub(start); waited < 7*time.Second || waited > 8*time.Second {
		t.Fatalf("Ingest started %s after the start, want when woken (7 s)", waited)
	}
}

// A wake-up that never comes costs a delay, not a stuck upload: the run
// looks again after a while (sooner at the front of the queue).
func TestIngestInTurnLooksAgainWithoutAWake(t *testing.T) {
	for _, tc := range []struct {
		position int
		after    time.Duration
	}{{1, 30 * time.Second}, {9, 90 * time.Second}, {1000, 5 * time.Minute}} {
		e, a := envQueue(t)
		start := e.Now()
		var ingestAt time.Time
		e.OnActivity(a.ClaimSlot, mock.Anything, upload).Return(waiting(tc.position), nil).Once()
		e.OnActivity(a.ClaimSlot, mock.Anything, upload).Return(granted, nil).Once()
		e.OnActivity(a.Ingest, mock.Anything, upload).Run(func(mock.Arguments) { ingestAt = e.Now() }).Return(processed, nil).Once()
		e.OnActivity(a.Record, mock.Anything, upload, processed).Return(nil).Once()
		e.OnActivity(a.ReleaseSlot, mock.Anything, upload).Return([]string(nil), nil).Once()
		e.OnActivity(a.DeleteTemporary, mock.Anything, upload).Return(nil).Once()
		outcome(e, workflows.OutcomeFinished)
		e.ExecuteWorkflow(workflows.IngestUpload, upload)
		if err := e.GetWorkflowError(); err != nil {
			t.Fatal(err)
		}
		e.AssertExpectations(t)
		if waited := ingestAt.Sub(start); waited < tc.after || waited > tc.after+time.Second {
			t.Errorf("position %d: looked again after %s, want %s", tc.position, waited, tc.after)
		}
	}
}

// A rejected file marks the upload "error" (Fail), wakes the next uploads
// and completes the run with the outcome "rejected": a Failed run is a
// fault for an operator, a bad file is not one.
func TestIngestInTurnRejectionCompletes(t *testing.T) {
	for _, step := range []string{"ingest", "record"} {
		t.Run(step, func(t *testing.T) {
			e, a := envQueue(t)
			got := calls(e)
			msg := "the file is not a PNG image (" + step + ")"
			e.OnActivity(a.ClaimSlot, mock.Anything, upload).Return(granted, nil).Once()
			if step == "ingest" {
				e.OnActivity(a.Ingest, mock.Anything, upload).Return(nil, rejected(msg)).Once()
			} else {
				e.OnActivity(a.Ingest, mock.Anything, upload).Return(processed, nil).Once()
				e.OnActivity(a.Record, mock.Anything, upload, processed).Return(rejected(msg)).Once()
			}
			e.OnActivity(a.Fail, mock.Anything, upload, msg).Return(errors.New("database down")).Once()
			e.OnActivity(a.Fail, mock.Anything, upload, msg).Return(nil).Once()
			e.OnActivity(a.ReleaseSlot, mock.Anything, upload).Return([]string{"next"}, nil).Once()
			e.OnSignalExternalWorkflow(mock.Anything, "asset-upload-next", "", workflows.TurnSignal, nil).Return(nil).Once()
			outcome(e, workflows.OutcomeRejected)
			e.ExecuteWorkflow(workflows.IngestUpload, upload)
			if !e.IsWorkflowCompleted() || e.GetWorkflowError() != nil {
				t.Fatalf("completed %v, error %v: a rejection must complete the run", e.IsWorkflowCompleted(), e.GetWorkflowError())
			}
			e.AssertExpectations(t)
			if slices.Contains(*got, "local:DeleteTemporary") {
				t.Errorf("activities %v: a rejected upload's file is left to the bucket's expiry", *got)
			}
		})
	}
}

// A transient fault is still retried for as long as it takes, and a fault
// that ends the run (here: a step that is not a rejection and does not
// retry) fails it, with no outcome: that is the operator's list.
func TestIngestInTurnFaultFails(t *testing.T) {
	e, a := envQueue(t)
	e.OnActivity(a.ClaimSlot, mock.Anything, upload).Return(models.UploadTurn{}, errors.New("database down")).Twice()
	e.OnActivity(a.ClaimSlot, mock.Anything, upload).Return(granted, nil).Once()
	e.OnActivity(a.Ingest, mock.Anything, upload).Return(nil, errors.New("storage unreachable")).Twice()
	e.OnActivity(a.Ingest, mock.Anything, upload).Return(nil, temporal.NewNonRetryableApplicationError("a bug", "Bug", nil)).Once()
	e.ExecuteWorkflow(workflows.IngestUpload, upload)
	var app *temporal.ApplicationError
	if err := e.GetWorkflowError(); !errors.As(err, &app) || app.Type() != "Bug" {
		t.Fatalf("workflow error = %v, want the fault", err)
	}
	e.AssertExpectations(t)
	e.AssertNotCalled(t, "Fail", mock.Anything, mock.Anything, mock.Anything)
}

// A notice that never committed, or an attempt another one replaced, is
// not processed and records no outcome.
func TestIngestInTurnNotClaimed(t *testing.T) {
	e, a := envQueue(t)
	got := calls(e)
	e.OnActivity(a.ClaimSlot, mock.Anything, upload).Return(models.UploadTurn{}, nil).Once()
	e.ExecuteWorkflow(workflows.IngestUpload, upload)
	if !e.IsWorkflowCompleted() || e.GetWorkflowError() != nil {
		t.Fatalf("completed %v, error %v", e.IsWorkflowCompleted(), e.GetWorkflowError())
	}
	if !slices.Equal(*got, []string{"local:ClaimSlot"}) {
		t.Fatalf("activities %v", *got)
	}
}

// A run cancelled while it waits ends its upload in error, so the upload
// neither stays "processing" for good nor blocks its site's queue, and
// wakes the next ones.
func TestIngestInTurnCancelledWhileWaiting(t *testing.T) {
	e, a := envQueue(t)
	e.OnActivity(a.ClaimSlot, mock.Anything, upload).Return(waiting(2), nil)
	e.OnActivity(a.Fail, mock.Anything, upload, mock.MatchedBy(func(msg string) bool { return msg != "" })).Return(nil).Once()
	e.OnActivity(a.ReleaseSlot, mock.Anything, upload).Return([]string(nil), nil).Once()
	e.RegisterDelayedCallback(e.CancelWorkflow, 5*time.Second)
	e.ExecuteWorkflow(workflows.IngestUpload, upload)
	if err := e.GetWorkflowError(); !temporal.IsCanceledError(err) {
		t.Fatalf("workflow error = %v, want cancelled", err)
	}
	e.AssertExpectations(t)
	e.AssertNotCalled(t, "Ingest", mock.Anything, mock.Anything)
}
