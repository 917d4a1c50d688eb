package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/workflows"
)

// AbandonedAfter is how long an upload at the head of its site's queue has
// been processing before the sweep asks Temporal whether its run is still
// there: far longer than any ingestion takes.
const AbandonedAfter = time.Hour

// abandonedMessage is the error-message of an upload whose run ended
// without ending it.
const abandonedMessage = "processing stopped before it finished (its workflow was terminated, or is gone); post the upload notice again to process the file"

// SweepAbandoned ends in error the uploads at the head of their site's
// queue (holding a slot, or first in line) whose ingestion run has ended
// without ending them: terminated, timed out, or gone from Temporal. Such
// an upload would otherwise hold its site's slot, or its place at the
// front, for good. A Failed run is left alone: it is a fault on the
// operator's list, and a reset resumes it. It wakes the next uploads of the
// sites it freed, and returns how many uploads it ended.
func (s *Sweeper) SweepAbandoned(ctx context.Context) (int, error) {
	after := s.AbandonedAfter
	if after <= 0 {
		after = AbandonedAfter
	}
	limit := max(s.SiteLimit, 1)
	heads, err := models.UploadQueueHeads(ctx, s.DB, limit, time.Now().Add(-after), SweepBatch)
	if err != nil {
		return 0, err
	}
	ended, freed := 0, map[uuid.UUID]bool{}
	for i, h := range heads {
		activity.RecordHeartbeat(ctx, i)
		if held, err := s.runHolds(ctx, h.ID); err != nil || held {
			if err != nil {
				return ended, err
			}
			continue
		}
		prefix := h.SiteID.String() + "/" + models.AssetID(h.ID).String() + "/"
		if err := removePartialObjects(ctx, s.Storage, s.Buckets.AssetsBucket, prefix); err != nil {
			return ended, err
		}
		changed, err := models.FailUpload(ctx, s.DB, h.ID, h.SiteID, h.Attempt, abandonedMessage)
		if err != nil {
			return ended, err
		}
		if changed {
			ended++
			freed[h.SiteID] = true
		}
	}
	for site := range freed {
		if err := s.wake(ctx, site, limit); err != nil {
			return ended, err
		}
	}
	return ended, nil
}

// runHolds tells whether the upload's ingestion run still holds it: it is
// running, or it failed (an operator's to reset).
func (s *Sweeper) runHolds(ctx context.Context, uploadID uuid.UUID) (bool, error) {
	d, err := s.Temporal.DescribeWorkflowExecution(ctx, workflows.AssetUploadID(uploadID.String()), "")
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("describe the ingestion of upload %s: %w", uploadID, err)
	}
	switch d.GetWorkflowExecutionInfo().GetStatus() {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
		return true, nil
	}
	return false, nil
}

// wake signals the runs of the site's waiting uploads whose turn has come
// (an upload that ended meanwhile cannot be signalled, nor needs to be).
func (s *Sweeper) wake(ctx context.Context, siteID uuid.UUID, limit int) error {
	next, err := models.NextWaitingUploads(ctx, s.DB, siteID, limit)
	if err != nil {
		return err
	}
	for _, id := range next {
		err := s.Temporal.SignalWorkflow(ctx, workflows.AssetUploadID(id.String()), "", workflows.TurnSignal, nil)
		var notFound *serviceerror.NotFound
		if err != nil && !errors.As(err, &notFound) {
			return fmt.Errorf("wake upload %s: %w", id, err)
		}
	}
	return nil
}
