package workflows_test

import (
	"context"
	"slices"

	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/pressroom/pressroom/activities"
	"github.com/pressroom/pressroom/workflows"
)

// envSingleStep is env for the path before the queue: Claim, Record, Fail
// and DeleteTemporary as local activities around one Ingest activity. It
// runs IngestUpload as recorded before the queue (workflow.DefaultVersion
// of "upload-queue"); envQueue runs the current path.
func envSingleStep(t *testing.T) (*testsuite.TestWorkflowEnvironment, *activities.Uploads) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	e := s.NewTestWorkflowEnvironment()
	e.OnGetVersion("upload-queue", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion).Maybe()
	a := &activities.Uploads{}
	e.RegisterActivity(a)
	return e, a
}

// calls lists the activities (local or not) the run started, in order.
func calls(e *testsuite.TestWorkflowEnvironment) *[]string {
	var got []string
	e.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		got = append(got, info.ActivityType.Name)
	})
	e.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []interface{}) {
		got = append(got, "local:"+info.ActivityType.Name)
	})
	return &got
}

// New uploads start IngestUpload; AssetUpload, still registered for the
// runs started before it, takes the same path when run anew (version 2).
func TestAssetUploadSingleStepHappyPath(t *testing.T) {
	for name, wf := range map[string]func(workflow.Context, workflows.Upload) error{
		"IngestUpload": workflows.IngestUpload, "AssetUpload": workflows.AssetUpload,
	} {
		t.Run(name, func(t *testing.T) {
			e, a := envSingleStep(t)
			got := calls(e)
			e.OnActivity(a.Claim, mock.Anything, upload).Return(true, nil).Once()
			e.OnActivity(a.Ingest, mock.Anything, upload).Return(processed, nil).Once()
			e.OnActivity(a.Record, mock.Anything, upload, processed).Return(nil).Once()
			e.OnActivity(a.DeleteTemporary, mock.Anything, upload).Return(nil).Once()
			e.ExecuteWorkflow(wf, upload)
			if !e.IsWorkflowCompleted() || e.GetWorkflowError() != nil {
				t.Fatalf("completed %v, error %v", e.IsWorkflowCompleted(), e.GetWorkflowError())
			}
			e.AssertExpectations(t)
			want := []string{"local:Claim", "Ingest", "local:Record", "local:DeleteTemporary"}
			if !slices.Equal(*got, want) {
				t.Fatalf("activities %v, want %v (one activity task, the short steps local)", *got, want)
			}
		})
	}
}

func TestAssetUploadSingleStepWithoutACommittedNotice(t *testing.T) {
	e, a := envSingleStep(t)
	e.OnActivity(a.Claim, mock.Anything, upload).Return(false, nil).Once()
	e.ExecuteWorkflow(workflows.IngestUpload, upload)
	if !e.IsWorkflowCompleted() || e.GetWorkflowError() != nil {
		t.Fatalf("completed %v, error %v", e.IsWorkflowCompleted(), e.GetWorkflowError())
	}
	e.AssertExpectations(t)
	e.AssertNotCalled(t, "Ingest", mock.Anything, mock.Anything)
}

func TestAssetUploadSingleStepRejections(t *testing.T) {
	for _, step := range []string{"ingest", "record"} {
		t.Run(step, func(t *testing.T) {
			e, a := envSingleStep(t)
			msg := "the file is not a PNG image (" + step + ")"
			e.OnActivity(a.Claim, mock.Anything, upload).Return(true, nil).Once()
			if step == "ingest" {
				e.OnActivity(a.Ingest, mock.Anything, upload).Return(nil, rejected(msg)).Once()
			} else {
				e.OnActivity(a.Ingest, mock.Anything, upload).Return(processed, nil).Once()
				e.OnActivity(a.Record, mock.Anything, upload, processed).Return(rejected(msg)).Once()
			}
			e.OnActivity(a.Fail, mock.Anything, upload, msg).Return(nil).Once()
			e.ExecuteWorkflow(workflows.IngestUpload, upload)
			var app *temporal.ApplicationError
			if err := e.GetWorkflowError(); !errors.As(err, &app) || app.Type() != workflows.RejectedType || app.Message() != msg {
				t.Fatalf("workflow error = %v, want the rejection %q", err, msg)
			}
			e.AssertExpectations(t)
			e.AssertNotCalled(t, "DeleteTemporary", mock.Anything, mock.Anything)
		})
	}
}

func TestAssetUploadSingleStepRetriesTransientFailures(t *testing.T) {
	e, a := envSingleStep(t)
	down := errors.New("storage unreachable")
	e.OnActivity(a.Claim, mock.Anything, upload).Return(false, errors.New("database down")).Once()
	e.OnActivity(a.Claim, mock.Anything, upload).Return(true, nil).Once()
	e.OnActivity(a.Ingest, mock.Anything, upload).Return(nil, down).Times(3)
	e.OnActivity(a.Ingest, mock.Anything, upload).Return(processed, nil).Once()
	e.OnActivity(a.Record, mock.Anything, upload, processed).Return(errors.New("database down")).Twice()
	e.OnActivity(a.Record, mock.Anything, upload, processed).Return(nil).Once()
	e.OnActivity(a.DeleteTemporary, mock.Anything, upload).Return(down).Once()
	e.OnActivity(a.DeleteTemporary, mock.Anything, upload).Return(nil).Once()
	e.ExecuteWorkflow(workflows.IngestUpload, upload)
	if err := e.GetWorkflowError(); err != nil {
		t.Fatalf("transient failures were not retried: %v", err)
	}
	e.AssertExpectations(t)
	e.AssertNotCalled(t, "Fail", mock.Anything, mock.Anything, mock.Anything)
}

// An outage longer than one attempt's timeout (30 s) is waited out: the
// local steps retry for as long as it takes, as the activity does. Without
// an explicit retry window the SDK gave them up after 30 s and the workflow
// failed with the upload recorded but its temporary object left behind.
func TestAssetUploadSingleStepOutlivesALongOutage(t *testing.T) {
	e, a := envSingleStep(t)
	down := errors.New("storage unreachable")
	start := e.Now()
	// Seven failures back off 1+2+4+8+16+30+30 s: over a minute and a half.
	e.OnActivity(a.Claim, mock.Anything, upload).Return(false, errors.New("database down")).Times(7)
	e.OnActivity(a.Claim, mock.Anything, upload).Return(true, nil).Once()
	e.OnActivity(a.Ingest, mock.Anything, upload).Return(processed, nil).Once()
	e.OnActivity(a.Record, mock.Anything, upload, processed).Return(errors.New("database down")).Times(7)
	e.OnActivity(a.Record, mock.Anything, upload, processed).Return(nil).Once()
	e.OnActivity(a.DeleteTemporary, mock.Anything, upload).Return(down).Times(7)
	e.OnActivity(a.DeleteTemporary, mock.Anything, upload).Return(nil).Once()
	e.ExecuteWorkflow(workflows.IngestUpload, upload)
	if err := e.GetWorkflowError(); err != nil {
		t.Fatalf("an outage of %s was not waited out: %v", e.Now().Sub(start), err)
	}
	e.AssertExpectations(t)
	if waited := e.Now().Sub(start); waited < 3*90*time.Second {
		t.Fatalf("the run took %s of workflow time; the three outages alone back off 4.5 min", waited)
	}
}

func TestAssetUploadSingleStepRetriesFailUntilRecorded(t *testing.T) {
	e, a := envSingleStep(t)
	e.OnActivity(a.Claim, mock.Anything, upload).Return(true, nil).Once()
	e.OnActivity(a.Ingest, mock.Anything, upload).Return(nil, rejected("never arrived")).Once()
	e.OnActivity(a.Fail, mock.Anything, upload, "never arrived").Return(errors.New("database down")).Twice()
	e.OnActivity(a.Fail, mock.Anything, upload, "never arrived").Return(nil).Once()
	e.ExecuteWorkflow(workflows.IngestUpload, upload)
	var app *temporal.ApplicationError
	if err := e.GetWorkflowError(); !errors.As(err, &app) || app.Message() != "never arrived" {
		t.Fatalf("workflow error = %v", err)
	}
	e.AssertExpectations(t)
}
