package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/pressroom/pressroom/models"
)

// AssetUploadID is the workflow id of an upload's ingestion: the upload id
// makes starting it twice impossible.
func AssetUploadID(uploadID string) string { return "asset-upload-" + uploadID }

// Upload names an upload and what its client declared: the input of
// AssetUpload and of its activities. It travels through workflow history,
// so it holds keys and sizes, never file bytes.
type Upload struct {
	UploadID string
	// Attempt is the upload's attempt this run processes (a failed upload
	// posted again is the same upload, one attempt later).
	Attempt     int
	SiteID      string
	AssetID     string
	Key         string
	FileName    string
	ContentType string
	FileSize    int64
	// ETag is the version of the object the upload notice named (the API
	// reads it when it takes the notice). Every read of the file is
	// conditional on it, so bytes written to the key later never reach an
	// asset. Empty in runs started before the API recorded it.
	ETag string
}

// Processed is what the Process activity made: dimensions, properties and
// the stored objects' keys (no pixels).
type Processed struct {
	Width, Height int
	Properties    models.ImageProperties
	Fingerprint   string
	OriginalKey   string
	OriginalSize  int64
	Variants      map[string]models.ImageVariant
}

// AssetUpload ingests one uploaded file (runs started before IngestUpload
// took its place; new ones start IngestUpload): inspect it, process it into the
// assets bucket, record the asset and finish the upload, then delete the
// temporary object. A rejection marks the upload "error" with its message,
// removes partial objects, and fails the workflow (so the same upload may be
// retried under the same workflow id). Workers still run it for those runs
// only: it is a thin versioned choice among the paths its histories
// recorded, which IngestUpload's older runs share (ingestSteps).
func AssetUpload(ctx workflow.Context, u Upload) error {
	// Version 2 is the single-step path. Runs recorded before it (version
	// 1) replay the five-activity path; runs recorded before the claim step
	// (the default version) replay without it.
	v := workflow.GetVersion(ctx, "claim-upload-notice", workflow.DefaultVersion, 2)
	if v == 2 {
		return ingestSingleStep(ctx, u)
	}
	return fiveActivities(v == 1).ingest(ctx, u)
}

// IngestUpload is the workflow new uploads start (workflow id
// AssetUploadID, input Upload). As a workflow type of its own it needed no
// workflow.GetVersion for AssetUpload's older paths; its own change, the
// per-site queue with outcomes (uploadQueueChange, ingestInTurn), is
// versioned: runs recorded before it replay ingestSingleStep. AssetUpload
// stays registered for the runs started before IngestUpload.
func IngestUpload(ctx workflow.Context, u Upload) error {
	if workflow.GetVersion(ctx, uploadQueueChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return ingestSingleStep(ctx, u)
	}
	return ingestInTurn(ctx, u)
}

// ingestSteps is how one generation of the ingestion before the queue ran
// its steps. Each generation issued the same sequence (claim the notice,
// the image work, Record; on a rejection Fail and fail the run; else
// DeleteTemporary) as different commands, so a generation is a table of
// how it runs a step, and ingest the one sequence: a replayed history
// meets exactly the commands its generation recorded.
type ingestSteps struct {
	// claim runs Claim (nil: the generation before the claim step).
	claim func(workflow.Context, Upload) (bool, error)
	// work is the image work: Ingest, or Inspect then Process.
	work func(workflow.Context, Upload) (*Processed, error)
	// short is ctx with the options of Record, Fail and DeleteTemporary,
	// which exec runs (as activities, or local activities).
	short func(workflow.Context) workflow.Context
	exec  func(ctx workflow.Context, activity any, args ...any) workflow.Future
}

// ingest runs the sequence with s's steps.
func (s ingestSteps) ingest(ctx workflow.Context, u Upload) error {
	if s.claim != nil {
		claimed, err := s.claim(ctx, u)
		if err != nil {
			return err
		}
		if !claimed {
			return nil // the notice never committed, or a later attempt took over
		}
	}
	short := s.short(ctx)
	processed, err := s.work(ctx, u)
	if err == nil {
		err = s.exec(short, recordActivity, u, processed).Get(ctx, nil)
	}
	if msg, rejected := rejection(err); rejected {
		// Recording the failure must happen even if the workflow is being
		// cancelled, hence the disconnected context.
		cleanup, cancel := workflow.NewDisconnectedContext(short)
		defer cancel()
		if ferr := s.exec(cleanup, failActivity, u, msg).Get(cleanup, nil); ferr != nil {
			return ferr
		}
		return temporal.NewNonRetryableApplicationError(msg, RejectedType, nil)
	}
	if err != nil {
		return err
	}
	return s.exec(short, deleteTemporaryActivity, u).Get(ctx, nil)
}

// fiveActivities is AssetUpload before version 2: every step an activity
// task, Inspect and Process apart; Claim only from version 1 (claimed).
func fiveActivities(claimed bool) ingestSteps {
	s := ingestSteps{
		short: func(ctx workflow.Context) workflow.Context {
			return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second, RetryPolicy: retryForever})
		},
		exec: workflow.ExecuteActivity,
		work: func(ctx workflow.Context, u Upload) (*Processed, error) {
			inspect := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
				// Inspect waits up to a minute for the file, heartbeating meanwhile.
				StartToCloseTimeout: 2 * time.Minute, HeartbeatTimeout: 20 * time.Second, RetryPolicy: retryForever,
			})
			process := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
				StartToCloseTimeout: 10 * time.Minute, HeartbeatTimeout: 30 * time.Second, RetryPolicy: retryForever,
			})
			var processed *Processed
			err := workflow.ExecuteActivity(inspect, inspectActivity, u).Get(ctx, nil)
			if err == nil {
				err = workflow.ExecuteActivity(process, processActivity, u).Get(ctx, &processed)
			}
			return processed, err
		},
	}
	if claimed {
		s.claim = func(ctx workflow.Context, u Upload) (bool, error) {
			claim := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
				StartToCloseTimeout: ClaimWait + 30*time.Second, HeartbeatTimeout: 10 * time.Second, RetryPolicy: retryForever,
			})
			var ok bool
			err := workflow.ExecuteActivity(claim, claimActivity, u).Get(ctx, &ok)
			return ok, err
		}
	}
	return s
}

// singleStep is the path before the queue (IngestUpload's runs recorded
// before uploadQueueChange, and AssetUpload version 2): one activity task
// (Ingest: inspect and process, heartbeating) and the short steps as local
// activities (Claim, Record, DeleteTemporary, Fail), which run in the
// worker's workflow task and leave one marker event each instead of a task
// round trip through the Temporal server. Each step keeps its retry policy:
// local activities retry with the same backoff (the SDK schedules a timer
// for long backoffs), and their results are recorded in history, so a
// replay does not run them again. A pending local activity shows in the UI
// as the pending workflow task; its result or last failure shows as a
// marker.
var singleStep = ingestSteps{
	claim: func(ctx workflow.Context, u Upload) (bool, error) {
		var ok bool
		err := workflow.ExecuteLocalActivity(localForever(ctx, ClaimWait+30*time.Second), claimActivity, u).Get(ctx, &ok)
		return ok, err
	},
	work: func(ctx workflow.Context, u Upload) (*Processed, error) {
		ingest := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			// Inspect waits up to a minute for the file; then the image work.
			StartToCloseTimeout: 12 * time.Minute, HeartbeatTimeout: 30 * time.Second, RetryPolicy: retryForever,
		})
		var processed *Processed
		err := workflow.ExecuteActivity(ingest, ingestActivity, u).Get(ctx, &processed)
		return processed, err
	},
	short: func(ctx workflow.Context) workflow.Context { return localForever(ctx, 30*time.Second) },
	exec:  workflow.ExecuteLocalActivity,
}

// ingestSingleStep runs the single-step path (singleStep).
func ingestSingleStep(ctx workflow.Context, u Upload) error { return singleStep.ingest(ctx, u) }

// rejection extracts the person-readable message of a rejected activity.
func rejection(err error) (string, bool) {
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Type() == RejectedType {
		return app.Message(), true
	}
	return "", false
}
