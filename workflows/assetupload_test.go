package workflows_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/pressroom/pressroom/activities"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/workflows"
)

var upload = workflows.Upload{
	UploadID: "9f1c0a5e-0000-4000-8000-000000000001", SiteID: "9f1c0a5e-0000-4000-8000-000000000002",
	AssetID: "9f1c0a5e-0000-4000-8000-000000000003", Key: "site/sig/photo.png", FileName: "photo.png",
	ContentType: "image/png", FileSize: 1234,
}

var processed = &workflows.Processed{Width: 10, Height: 8, Fingerprint: "ab", OriginalKey: "k", OriginalSize: 1234,
	Properties: models.ImageProperties{Format: "png"}, Variants: map[string]models.ImageVariant{}}

func rejected(msg string) error {
	return temporal.NewNonRetryableApplicationError(msg, workflows.RejectedType, nil)
}

// env is a test environment with every activity mocked; a is the receiver
// whose method values name the activities. It runs the five-activity path
// (version 1, still run by workflows started before the single-step path);
// envSingleStep runs the current one.
func env(t *testing.T) (*testsuite.TestWorkflowEnvironment, *activities.Uploads) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	e := s.NewTestWorkflowEnvironment()
	e.OnGetVersion("claim-upload-notice", workflow.DefaultVersion, 2).Return(workflow.Version(1))
	a := &activities.Uploads{}
	e.RegisterActivity(a)
	e.RegisterActivity(&activities.Sweeper{})
	e.OnActivity(a.Claim, mock.Anything, upload).Return(true, nil).Maybe()
	return e, a
}

// A notice that never commits (the API rolled back) is not processed.
func TestAssetUploadWithoutACommittedNotice(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	e := s.NewTestWorkflowEnvironment()
	e.OnGetVersion("claim-upload-notice", workflow.DefaultVersion, 2).Return(workflow.Version(1))
	a := &activities.Uploads{}
	e.RegisterActivity(a)
	e.OnActivity(a.Claim, mock.Anything, upload).Return(false, nil).Once()
	e.ExecuteWorkflow(workflows.AssetUpload, upload)
	if !e.IsWorkflowCompleted() || e.GetWorkflowError() != nil {
		t.Fatalf("completed %v, error %v", e.IsWorkflowCompleted(), e.GetWorkflowError())
	}
	e.AssertExpectations(t)
	e.AssertNotCalled(t, "Inspect", mock.Anything, mock.Anything)
	e.AssertNotCalled(t, "Fail", mock.Anything, mock.Anything, mock.Anything)
}

func TestAssetUploadHappyPath(t *testing.T) {
	e, a := env(t)
	e.OnActivity(a.Inspect, mock.Anything, upload).Return(nil).Once()
	e.OnActivity(a.Process, mock.Anything, upload).Return(processed, nil).Once()
	e.OnActivity(a.Record, mock.Anything, upload, processed).Return(nil).Once()
	e.OnActivity(a.DeleteTemporary, mock.Anything, upload).Return(nil).Once()
	e.ExecuteWorkflow(workflows.AssetUpload, upload)
	if !e.IsWorkflowCompleted() || e.GetWorkflowError() != nil {
		t.Fatalf("completed %v, error %v", e.IsWorkflowCompleted(), e.GetWorkflowError())
	}
	e.AssertExpectations(t)
	e.AssertNotCalled(t, "Fail", mock.Anything, mock.Anything, mock.Anything)
}

// Each step's rejection ends the same way: Fail with the message, nothing
// after the failed step, and a failed workflow carrying the message.
func TestAssetUploadRejections(t *testing.T) {
	cases := []struct {
		name  string
		setup func(e *testsuite.TestWorkflowEnvironment, a *activities.Uploads, msg string)
		never []string
	}{
		{"inspect", func(e *testsuite.TestWorkflowEnvironment, a *activities.Uploads, msg string) {
			e.OnActivity(a.Inspect, mock.Anything, upload).Return(rejected(msg))
		}, []string{"Process", "Record", "DeleteTemporary"}},
		{"process", func(e *testsuite.TestWorkflowEnvironment, a *activities.Uploads, msg string) {
			e.OnActivity(a.Inspect, mock.Anything, upload).Return(nil)
			e.OnActivity(a.Process, mock.Anything, upload).Return(nil, rejected(msg))
		}, []string{"Record", "DeleteTemporary"}},
		{"record", func(e *testsuite.TestWorkflowEnvironment, a *activities.Uploads, msg string) {
			e.OnActivity(a.Inspect, mock.Anything, upload).Return(nil)
			e.OnActivity(a.Process, mock.Anything, upload).Return(processed, nil)
			e.OnActivity(a.Record, mock.Anything, upload, processed).Return(rejected(msg))
		}, []string{"DeleteTemporary"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, a := env(t)
			msg := "the file is not a PNG image (" + tc.name + ")"
			tc.setup(e, a, msg)
			e.OnActivity(a.Fail, mock.Anything, upload, msg).Return(nil).Once()
			e.ExecuteWorkflow(workflows.AssetUpload, upload)
			err := e.GetWorkflowError()
			var app *temporal.ApplicationError
			if !errors.As(err, &app) || app.Type() != workflows.RejectedType || app.Message() != msg {
				t.Fatalf("workflow error = %v, want the rejection %q", err, msg)
			}
			e.AssertExpectations(t)
			for _, name := range tc.never {
				e.AssertNotCalled(t, name, mock.Anything, mock.Anything)
			}
		})
	}
}

func TestAssetUploadRetriesTransientFailures(t *testing.T) {
	e, a := env(t)
	down := errors.New("storage unreachable")
	e.OnActivity(a.Inspect, mock.Anything, upload).Return(down).Times(2)
	e.OnActivity(a.Inspect, mock.Anything, upload).Return(nil).Once()
	e.OnActivity(a.Process, mock.Anything, upload).Return(nil, down).Times(3)
	e.OnActivity(a.Process, mock.Anything, upload).Return(processed, nil).Once()
	e.OnActivity(a.Record, mock.Anything, upload, processed).Return(errors.New("database down")).Once()
	e.OnActivity(a.Record, mock.Anything, upload, processed).Return(nil).Once()
	e.OnActivity(a.DeleteTemporary, mock.Anything, upload).Return(down).Once()
	e.OnActivity(a.DeleteTemporary, mock.Anything, upload).Return(nil).Once()
	e.ExecuteWorkflow(workflows.AssetUpload, upload)
	if err := e.GetWorkflowError(); err != nil {
		t.Fatalf("transient failures were not retried: %v", err)
	}
	e.AssertExpectations(t)
	e.AssertNotCalled(t, "Fail", mock.Anything, mock.Anything, mock.Anything)
}

func TestAssetUploadRetriesFailUntilRecorded(t *testing.T) {
	e, a := env(t)
	e.OnActivity(a.Inspect, mock.Anything, upload).Return(rejected("never arrived"))
	e.OnActivity(a.Fail, mock.Anything, upload, "never arrived").Return(errors.New("database down")).Twice()
	e.OnActivity(a.Fail, mock.Anything, upload, "never arrived").Return(nil).Once()
	e.ExecuteWorkflow(workflows.AssetUpload, upload)
	var app *temporal.ApplicationError
	if err := e.GetWorkflowError(); !errors.As(err, &app) || app.Message() != "never arrived" {
		t.Fatalf("workflow error = %v", err)
	}
	e.AssertExpectations(t)
}

// envSweep is a test environment for SweepUploads.
func envSweep() (*testsuite.TestWorkflowEnvironment, *activities.Sweeper) {
	var s testsuite.WorkflowTestSuite
	e := s.NewTestWorkflowEnvironment()
	a := &activities.Sweeper{}
	e.RegisterActivity(a)
	return e, a
}

func TestSweepUploads(t *testing.T) {
	e, s := envSweep()
	e.OnActivity(s.SweepUnconfirmed, mock.Anything).Return(7, nil).Once()
	e.OnActivity(s.SweepAbandoned, mock.Anything).Return(2, nil).Once()
	e.ExecuteWorkflow(workflows.SweepUploads)
	var n int
	if err := e.GetWorkflowResult(&n); err != nil || n != 7 {
		t.Fatalf("sweep = %d, %v", n, err)
	}
	e.AssertExpectations(t)
}

// Sweeps started before the queue (the default version) only remove
// unconfirmed signatures.
func TestSweepUploadsBeforeTheQueue(t *testing.T) {
	e, s := envSweep()
	e.OnGetVersion("sweep-abandoned-uploads", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	e.OnActivity(s.SweepUnconfirmed, mock.Anything).Return(7, nil).Once()
	e.ExecuteWorkflow(workflows.SweepUploads)
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	e.AssertExpectations(t)
	e.AssertNotCalled(t, "SweepAbandoned", mock.Anything)
}
