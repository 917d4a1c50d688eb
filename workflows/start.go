package workflows

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/pressroom/pressroom/models"
)

// Starting the workflows, for their callers (the API, the worker's
// dispatcher), never for workflow code: each workflow's id, id reuse policy
// and search attributes sit here beside the workflows that rely on them
// (PublishRevision reads its publish time from PublishAtAttribute). The
// errors are Temporal's, wrapped; callers decide what they answer.

// StartPublishRevision starts the publication of a revision of siteID on
// taskQueue. A zero publishAt publishes at once; any other time schedules
// it (PublishRevision waits on a timer until then). A revision that
// publishes a release names it in releaseID ("" for none).
func StartPublishRevision(ctx context.Context, c client.Client, taskQueue, siteID, revisionID, releaseID string, publishAt time.Time) error {
	attrs := []temporal.SearchAttributeUpdate{RevisionIDAttribute.ValueSet(revisionID)}
	if releaseID != "" {
		attrs = append(attrs, ReleaseIDAttribute.ValueSet(releaseID))
	}
	if !publishAt.IsZero() {
		attrs = append(attrs, PublishAtAttribute.ValueSet(publishAt))
	}
	opts := client.StartWorkflowOptions{ID: PublishRevisionID(revisionID), TaskQueue: taskQueue}
	return start(ctx, c, opts, PublishRevision, revisionID, siteID, attrs...)
}

// StartAssetUpload starts the ingestion of an upload (IngestUpload) on
// taskQueue. A new attempt reuses the id once the previous run has closed
// (Temporal refuses to start an id that is running, so two ingestions of
// one upload never overlap). The previous run may have completed: a
// rejection completes the run with the outcome "rejected" since the queue,
// and only an upload in error gets a new attempt (the API's rule).
func StartAssetUpload(ctx context.Context, c client.Client, taskQueue string, in Upload) error {
	opts := client.StartWorkflowOptions{ID: AssetUploadID(in.UploadID), TaskQueue: taskQueue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE}
	return start(ctx, c, opts, IngestUpload, in, in.SiteID, UploadIDAttribute.ValueSet(in.UploadID))
}

// UploadOf is the input of the ingestion of up's current attempt, from its
// committed row: what the API starts it with, and the commit sweep too.
func UploadOf(up *models.AssetUpload) Upload {
	return Upload{UploadID: up.ID.String(), Attempt: up.Attempt, SiteID: up.SiteID.String(), AssetID: models.AssetID(up.ID).String(),
		Key: up.Key, FileName: up.FileName, ContentType: up.ContentType, FileSize: up.FileSize, ETag: up.ETag}
}

// IsAlreadyStarted tells a start refused because a run of that workflow id
// is running: the row's own run (started by someone else, the commit sweep
// or the API), or for an upload, its previous attempt's, still closing.
func IsAlreadyStarted(err error) bool {
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	return errors.As(err, &started)
}

// StartWebhookDelivery starts a delivery's workflow on taskQueue; one of
// that id that is running is left as it is. A delivery retried by hand runs
// again under its id.
func StartWebhookDelivery(ctx context.Context, c client.Client, taskQueue string, in WebhookDeliveryInput) error {
	opts := client.StartWorkflowOptions{ID: WebhookDeliveryID(in.DeliveryID), TaskQueue: taskQueue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE}
	return start(ctx, c, opts, WebhookDelivery, in, in.SiteID, WebhookIDAttribute.ValueSet(in.WebhookID))
}

// start starts workflow with its one argument under opts, tagged with the
// search attribute every workflow carries (its site) and attrs.
func start(ctx context.Context, c client.Client, opts client.StartWorkflowOptions, workflow, arg any, siteID string, attrs ...temporal.SearchAttributeUpdate) error {
	opts.TypedSearchAttributes = temporal.NewSearchAttributes(append(attrs, SiteIDAttribute.ValueSet(siteID))...)
	if _, err := c.ExecuteWorkflow(ctx, opts, workflow, arg); err != nil {
		return fmt.Errorf("start workflow %s: %w", opts.ID, err)
	}
	return nil
}

// ReviewNoticeWait bounds how long the API and the commit sweep wait for a
// review's Update to be accepted (it needs a worker to take it). Past it
// the review stays unnotified, and the commit sweep sends it again.
const ReviewNoticeWait = 5 * time.Second

// NotifyReview sends the committed review n of the site's release to the
// release's review workflow (ReleaseReview on taskQueue), starting it if it
// is not running (Update-with-start), and waits until the workflow has
// accepted it (recorded in its history, so durable). The Update id is the
// review's: a notice sent twice to one run is taken once.
func NotifyReview(ctx context.Context, c client.Client, taskQueue, siteID, releaseID string, reminder time.Duration, n ReviewNotice) error {
	ctx, cancel := context.WithTimeout(ctx, ReviewNoticeWait)
	defer cancel()
	opts := client.StartWorkflowOptions{ID: ReleaseReviewID(releaseID), TaskQueue: taskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		TypedSearchAttributes:    temporal.NewSearchAttributes(ReleaseIDAttribute.ValueSet(releaseID), SiteIDAttribute.ValueSet(siteID))}
	op := c.NewWithStartWorkflowOperation(opts, ReleaseReview, ReviewInput{SiteID: siteID, ReleaseID: releaseID, Reminder: reminder})
	_, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{StartWorkflowOperation: op,
		UpdateOptions: client.UpdateWorkflowOptions{UpdateID: n.ReviewID, UpdateName: ReviewUpdate, Args: []any{n},
			WaitForStage: client.WorkflowUpdateStageAccepted}})
	if err != nil {
		return fmt.Errorf("notify review %s of release %s: %w", n.ReviewID, releaseID, err)
	}
	return nil
}

// EndReview tells the review workflow of a release that was published or
// cancelled that it may end. A release never reviewed has none: Temporal's
// not-found is no error. Any other failure is only late, not lost: the
// workflow looks at the release's status in the database at every period.
func EndReview(ctx context.Context, c client.Client, releaseID string) error {
	err := c.SignalWorkflow(ctx, ReleaseReviewID(releaseID), "", ReleaseEndedSignal, nil)
	var gone *serviceerror.NotFound
	if err != nil && !errors.As(err, &gone) {
		return fmt.Errorf("end the review of release %s: %w", releaseID, err)
	}
	return nil
}
