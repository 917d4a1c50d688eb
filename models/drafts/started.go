package drafts

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
)

// A revision's publish workflow is started after the revision commits
// (docs/architecture.md, "From a commit to a workflow"): POST /revisions
// commits it, then starts the workflow and marks it started; the worker's
// commit sweep starts those a crash between the two left unstarted.

// MarkRevisionStarted records that the revision's publish workflow was
// started (by POST /revisions after the commit, or by the commit sweep). A
// start that Temporal refused is not marked, so the sweep tries it again.
func MarkRevisionStarted(ctx context.Context, db bun.IDB, revisionID uuid.UUID) error {
	if _, err := db.NewUpdate().Model((*Revision)(nil)).Set("started_at = now()").
		Where("id = ? AND started_at IS NULL", revisionID).Exec(ctx); err != nil {
		return fmt.Errorf("mark the revision's workflow started: %w", err)
	}
	return nil
}

// UnstartedRevisions locks, in tx and skipping rows another sweep holds, at
// most limit revisions publishing or scheduled, created before before,
// whose workflow was never started: the commit sweep starts them.
func UnstartedRevisions(ctx context.Context, tx bun.Tx, before time.Time, limit int) ([]Revision, error) {
	var revs []Revision
	err := tx.NewSelect().Model(&revs).
		Where("r.status IN (?, ?) AND r.started_at IS NULL AND r.created_at < ?", Publishing, Scheduled, before).
		OrderExpr("r.created_at").Limit(int64(limit)).For("UPDATE SKIP LOCKED").Scan(ctx)
	if err != nil && !models.IsNoRows(err) {
		return nil, fmt.Errorf("find unstarted revisions: %w", err)
	}
	return revs, nil
}

// RevisionCommitted tells whether the revision exists. Its workflow is
// started after its commit, so it always does, except for a run that an API
// before that change started inside the revision's transaction (a rolling
// upgrade) and that got ahead of the commit, or whose transaction rolled
// back: that run ends without publishing ("not-committed"), and if the
// revision commits after all, the commit sweep starts it again.
func RevisionCommitted(ctx context.Context, db bun.IDB, revisionID uuid.UUID) (bool, error) {
	ok, err := db.NewSelect().Model((*Revision)(nil)).Where("id = ?", revisionID).Exists(ctx)
	if err != nil {
		return false, fmt.Errorf("look for the revision: %w", err)
	}
	return ok, nil
}

// MarkReviewNotified records that the release's review workflow accepted
// the review (its Update, sent by POST /release-reviews after the commit or
// by the commit sweep). One Temporal did not accept is not marked, so the
// sweep sends it again.
func MarkReviewNotified(ctx context.Context, db bun.IDB, reviewID uuid.UUID) error {
	if _, err := db.NewUpdate().Model((*ReleaseReview)(nil)).Set("notified_at = now()").
		Where("id = ? AND notified_at IS NULL", reviewID).Exec(ctx); err != nil {
		return fmt.Errorf("mark the review notified: %w", err)
	}
	return nil
}

// UnnotifiedReviews locks, in tx and skipping rows another sweep holds, at
// most limit reviews created before before whose workflow never accepted
// them, oldest first (the order the workflow should hear them in).
func UnnotifiedReviews(ctx context.Context, tx bun.Tx, before time.Time, limit int) ([]ReleaseReview, error) {
	var out []ReleaseReview
	err := tx.NewSelect().Model(&out).Where("rr.notified_at IS NULL AND rr.created_at < ?", before).
		OrderExpr("rr.created_at, rr.id").Limit(int64(limit)).For("UPDATE SKIP LOCKED").Scan(ctx)
	if err != nil && !models.IsNoRows(err) {
		return nil, fmt.Errorf("find unnotified reviews: %w", err)
	}
	return out, nil
}

// ReleaseEnded tells whether the site's release id was published or
// cancelled (or is gone): its review has nothing left to wait for.
func ReleaseEnded(ctx context.Context, db bun.IDB, siteID, id uuid.UUID) (bool, error) {
	var status string
	err := db.NewSelect().Model((*Release)(nil)).Column("status").Where("site_id = ? AND id = ?", siteID, id).Scan(ctx, &status)
	if models.IsNoRows(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("release status: %w", err)
	}
	return status == ReleasePublished || status == ReleaseCancelled, nil
}

// RequestAnswered tells whether the request requestID of the site's
// release has an answer: a review (a verdict, or a newer request) created
// after it. A request the site no longer has counts as answered.
func RequestAnswered(ctx context.Context, db bun.IDB, siteID, releaseID, requestID uuid.UUID) (bool, error) {
	var answered bool
	err := db.NewRaw(`SELECT coalesce((SELECT EXISTS (SELECT 1 FROM release_reviews v
  WHERE v.release_id = q.release_id AND v.id <> q.id AND (v.created_at, v.id) > (q.created_at, q.id))
  FROM release_reviews q WHERE q.site_id = ? AND q.release_id = ? AND q.id = ?), true)`, siteID, releaseID, requestID).Scan(ctx, &answered)
	if err != nil {
		return false, fmt.Errorf("request answered: %w", err)
	}
	return answered, nil
}
