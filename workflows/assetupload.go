package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/pressroom/pressroom/activities"
)

// Search attributes operators filter Pressroom's workflows by.
var (
	SiteIDAttribute     = temporal.NewSearchAttributeKeyKeyword("PressroomSiteId")
	UploadIDAttribute   = temporal.NewSearchAttributeKeyKeyword("PressroomUploadId")
	RevisionIDAttribute = temporal.NewSearchAttributeKeyKeyword("PressroomRevisionId")
)

// AssetUploadID is the workflow id of an upload's ingestion: the upload id
// makes starting it twice impossible.
func AssetUploadID(uploadID string) string { return "asset-upload-" + uploadID }

// retryForever retries transient failures (storage or database down) with
// backoff for as long as it takes: the upload stays "processing" and the
// pending activity, with its last error, is visible in the Temporal UI.
// Rejections are not retried.
var retryForever = &temporal.RetryPolicy{
	InitialInterval:        time.Second,
	BackoffCoefficient:     2,
	MaximumInterval:        30 * time.Second,
	NonRetryableErrorTypes: []string{activities.RejectedType},
}

// AssetUpload ingests one uploaded file: inspect it, process it into the
// assets bucket, record the asset and finish the upload, then delete the
// temporary object. A rejection marks the upload "error" with its message,
// removes partial objects, and fails the workflow (so the same upload may be
// retried under the same workflow id).
func AssetUpload(ctx workflow.Context, u activities.Upload) error {
	var a *activities.Uploads
	short := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second, RetryPolicy: retryForever,
	})
	inspect := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		// Inspect waits up to a minute for the file, heartbeating meanwhile.
		StartToCloseTimeout: 2 * time.Minute, HeartbeatTimeout: 20 * time.Second, RetryPolicy: retryForever,
	})
	process := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute, HeartbeatTimeout: 30 * time.Second, RetryPolicy: retryForever,
	})

	// Runs recorded before the claim step replay without it.
	if workflow.GetVersion(ctx, "claim-upload-notice", workflow.DefaultVersion, 1) == 1 {
		claim := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: activities.ClaimWait + 30*time.Second, HeartbeatTimeout: 10 * time.Second, RetryPolicy: retryForever,
		})
		var claimed bool
		if err := workflow.ExecuteActivity(claim, a.Claim, u).Get(ctx, &claimed); err != nil {
			return err
		}
		if !claimed {
			return nil // the notice never committed, or a later attempt took over
		}
	}
	err := workflow.ExecuteActivity(inspect, a.Inspect, u).Get(ctx, nil)
	var processed *activities.Processed
	if err == nil {
		err = workflow.ExecuteActivity(process, a.Process, u).Get(ctx, &processed)
	}
	if err == nil {
		err = workflow.ExecuteActivity(short, a.Record, u, processed).Get(ctx, nil)
	}
	if msg, rejected := rejection(err); rejected {
		// Recording the failure must happen even if the workflow is being
		// cancelled, hence the disconnected context.
		cleanup, cancel := workflow.NewDisconnectedContext(short)
		defer cancel()
		if ferr := workflow.ExecuteActivity(cleanup, a.Fail, u, msg).Get(cleanup, nil); ferr != nil {
			return ferr
		}
		return temporal.NewNonRetryableApplicationError(msg, activities.RejectedType, nil)
	}
	if err != nil {
		return err
	}
	return workflow.ExecuteActivity(short, a.DeleteTemporary, u).Get(ctx, nil)
}

// rejection extracts the person-readable message of a rejected activity.
func rejection(err error) (string, bool) {
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Type() == activities.RejectedType {
		return app.Message(), true
	}
	return "", false
}

// SweepScheduleID names the schedule that runs SweepUploads.
const SweepScheduleID = "pressroom-sweep-uploads"

// SweepUploads removes signatures never confirmed, and their objects.
func SweepUploads(ctx workflow.Context) (int, error) {
	var s *activities.Sweeper
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute, HeartbeatTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 5 * time.Second, MaximumAttempts: 5},
	})
	var n int
	err := workflow.ExecuteActivity(ctx, s.SweepUnconfirmed).Get(ctx, &n)
	return n, err
}
