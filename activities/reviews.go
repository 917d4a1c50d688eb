package activities

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
	"github.com/pressroom/pressroom/webhooks"
	"github.com/pressroom/pressroom/workflows"
)

// Reviews are the activities of a release's review workflow
// (workflows.ReleaseReview): they write its webhook events into the outbox
// under deterministic ids (models.EventKeyID of the workflow's key), so a
// retry after a commit whose answer was lost, or a replay after a worker's
// crash, writes nothing twice.
type Reviews struct {
	DB *bun.DB
}

// RecordReviewEvent writes the event of a committed review.
func (r *Reviews) RecordReviewEvent(ctx context.Context, ev workflows.ReviewEvent) error {
	site, err := parseIDs(ev.SiteID, ev.ReviewID)
	if err != nil {
		return err
	}
	if !webhooks.KnownEvent(ev.Type) || ev.Key == "" {
		return reject("bad review event %q (key %q)", ev.Type, ev.Key)
	}
	return r.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		return models.RecordEvent(ctx, tx, models.Event{SiteID: site[0], Type: ev.Type, SubjectType: "release-reviews",
			SubjectID: site[1], ID: models.EventKeyID(ev.Key)})
	})
}

// SendReviewReminder writes the reminder of a request that waited a whole
// period, unless the database says the release ended or the request was
// answered meanwhile (a verdict whose Update has not reached the workflow
// yet stops the reminder all the same). The release's row is locked, so a
// review being committed finishes first.
func (r *Reviews) SendReviewReminder(ctx context.Context, rm workflows.ReviewReminder) (workflows.ReminderOutcome, error) {
	var out workflows.ReminderOutcome
	ids, err := parseIDs(rm.SiteID, rm.ReleaseID, rm.RequestID)
	if err != nil || rm.Key == "" {
		return out, reject("bad reminder %+v: %v", rm, err)
	}
	err = r.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		out = workflows.ReminderOutcome{}
		rel, err := models.Find[drafts.Release](ctx, tx, ids[0], ids[1], "release", true)
		if errors.Is(err, models.ErrNotFound) {
			out.Ended = true
			return nil
		}
		if err != nil {
			return err
		}
		if rel.Status == drafts.ReleasePublished || rel.Status == drafts.ReleaseCancelled {
			out.Ended = true
			return nil
		}
		if out.Answered, err = drafts.RequestAnswered(ctx, tx, ids[0], ids[1], ids[2]); err != nil || out.Answered {
			return err
		}
		return models.RecordEvent(ctx, tx, models.Event{SiteID: ids[0], Type: webhooks.ReleaseReviewReminder,
			SubjectType: "release-reviews", SubjectID: ids[2], ID: models.EventKeyID(rm.Key)})
	})
	return out, err
}

// ReleaseEnded tells whether the release was published or cancelled.
func (r *Reviews) ReleaseEnded(ctx context.Context, siteID, releaseID string) (bool, error) {
	ids, err := parseIDs(siteID, releaseID)
	if err != nil {
		return false, err
	}
	return drafts.ReleaseEnded(ctx, r.DB, ids[0], ids[1])
}

// parseIDs parses the ids a workflow passed; a bad one is rejected.
func parseIDs(ids ...string) ([]uuid.UUID, error) {
	out := make([]uuid.UUID, len(ids))
	for i, s := range ids {
		id, err := uuid.Parse(s)
		if err != nil {
			return nil, reject("bad id %q", s)
		}
		out[i] = id
	}
	return out, nil
}
