package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
	"github.com/pressroom/pressroom/workflows"
)

// CommitSweep starts the workflows of committed work whose start never
// happened: upload attempts and revisions, and sends the reviews whose
// Update never reached their release's review workflow (docs/architecture.md, "From a
// commit to a workflow"). The API commits the row, then starts its
// workflow and marks it started; an API that dies between the two, or a
// start Temporal refuses, leaves the row unstarted, and the worker runs
// this sweep every half minute (worker/commitsweep.go). Webhook deliveries
// are the same primitive, started by the dispatcher (DispatchWebhookDeliveries).
type CommitSweep struct {
	DB       *bun.DB
	Temporal client.Client
	// TaskQueue and PublishTaskQueue are where the API starts ingestions
	// and publishes.
	TaskQueue, PublishTaskQueue string
	// ReviewTaskQueue and ReviewReminder are what the API starts review
	// workflows with (the webhook queue, PRESSROOM_REVIEW_REMINDER).
	ReviewTaskQueue string
	ReviewReminder  time.Duration
	// Grace replaces StartGrace when above 0 (tests).
	Grace time.Duration
}

// StartGrace is how long after its commit a row is left to the API's own
// start before the sweep starts it: a start the sweep makes first is
// harmless (the workflow id is the row's), only wasted.
const StartGrace = 10 * time.Second

// StartUnstarted starts the workflows of the rows committed over
// StartGrace ago and never started, and marks them started; it returns
// how many it started. A row whose workflow id Temporal finds running was
// started by a process that died before marking it (or by an API before
// the start-after-commit change, in a rolling upgrade): it is marked too,
// except an upload's later attempt, whose running run may be the previous
// attempt's, still closing; that one is looked at again next time.
func (s *CommitSweep) StartUnstarted(ctx context.Context) (int, error) {
	grace := s.Grace
	if grace <= 0 {
		grace = StartGrace
	}
	before := time.Now().Add(-grace)
	uploads, uerr := s.startUploads(ctx, before)
	revisions, rerr := s.startRevisions(ctx, before)
	reviews, verr := s.notifyReviews(ctx, before)
	return uploads + revisions + reviews, errors.Join(uerr, rerr, verr)
}

// startUploads starts the unstarted upload attempts noticed before before.
func (s *CommitSweep) startUploads(ctx context.Context, before time.Time) (int, error) {
	var started int
	var refused []error // starts Temporal refused: the next sweep tries again
	err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		started, refused = 0, nil
		ups, err := models.UnstartedUploads(ctx, tx, before, SweepBatch)
		if err != nil {
			return err
		}
		for i := range ups {
			err := workflows.StartAssetUpload(ctx, s.Temporal, s.TaskQueue, workflows.UploadOf(&ups[i]))
			running := workflows.IsAlreadyStarted(err)
			switch {
			case err == nil || (running && ups[i].Attempt == 1):
				if err := models.MarkUploadStarted(ctx, tx, ups[i].ID, ups[i].Attempt); err != nil {
					return err
				}
				if err == nil {
					started++
				}
			case !running:
				refused = append(refused, fmt.Errorf("start the ingestion of upload %s: %w", ups[i].ID, err))
			}
		}
		return nil
	})
	return started, errors.Join(err, errors.Join(refused...))
}

// startRevisions starts the unstarted revisions created before before.
func (s *CommitSweep) startRevisions(ctx context.Context, before time.Time) (int, error) {
	var started int
	var refused []error // starts Temporal refused: the next sweep tries again
	err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		started, refused = 0, nil
		revs, err := drafts.UnstartedRevisions(ctx, tx, before, SweepBatch)
		if err != nil {
			return err
		}
		for _, r := range revs {
			var at time.Time
			if r.PublishAt != nil {
				at = *r.PublishAt
			}
			err := workflows.StartPublishRevision(ctx, s.Temporal, s.PublishTaskQueue, r.SiteID.String(), r.ID.String(), releaseOf(r.ReleaseID), at)
			running := workflows.IsAlreadyStarted(err) // the revision's own run: one revision, one workflow id
			switch {
			case err == nil || running:
				if err := drafts.MarkRevisionStarted(ctx, tx, r.ID); err != nil {
					return err
				}
				if err == nil {
					started++
				}
			case !running:
				refused = append(refused, fmt.Errorf("start the publish of revision %s: %w", r.ID, err))
			}
		}
		return nil
	})
	return started, errors.Join(err, errors.Join(refused...))
}

// releaseOf is a revision's release id as the search attribute takes it
// ("" for none).
func releaseOf(id *uuid.UUID) string {
	if id == nil {
		return ""
	}
	return id.String()
}

// notifyReviews sends the reviews committed before before and never
// accepted by their release's review workflow, oldest first, and marks
// them. The Update id is the review's and its events are keyed by it, so a
// review the API's Update did reach after all is taken once.
func (s *CommitSweep) notifyReviews(ctx context.Context, before time.Time) (int, error) {
	if s.ReviewTaskQueue == "" {
		return 0, nil // a sweep built without the review settings (tests)
	}
	var sent int
	var refused []error // Updates Temporal refused: the next sweep tries again
	err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		sent, refused = 0, nil
		rvs, err := drafts.UnnotifiedReviews(ctx, tx, before, SweepBatch)
		if err != nil {
			return err
		}
		stuck := map[uuid.UUID]bool{} // a release whose earlier review failed: its later ones wait, in order
		for _, rv := range rvs {
			if stuck[rv.ReleaseID] {
				continue
			}
			err := workflows.NotifyReview(ctx, s.Temporal, s.ReviewTaskQueue, rv.SiteID.String(), rv.ReleaseID.String(), s.ReviewReminder,
				workflows.ReviewNotice{ReviewID: rv.ID.String(), Verdict: rv.Verdict})
			if err != nil {
				stuck[rv.ReleaseID] = true
				refused = append(refused, fmt.Errorf("send review %s: %w", rv.ID, err))
				continue
			}
			if err := drafts.MarkReviewNotified(ctx, tx, rv.ID); err != nil {
				return err
			}
			sent++
		}
		return nil
	})
	return sent, errors.Join(err, errors.Join(refused...))
}
