package drafts

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/webhooks"
)

// The revisions store: reads of revisions and versions, the transitions
// of a scheduled revision, and the one way a revision becomes published
// (recordPublished, for Publish and RevertRevision) (docs/drafts.md).

// The finders of a site's revisions and versions by id (models.NotFound
// otherwise).
var (
	FindRevision = models.Finder[Revision]("revision")
	FindVersion  = models.Finder[Version]("version")
)

// RevisionByKey finds the revision a user, or with userID uuid.Nil the
// integration client clientID, posted with an Idempotency-Key (nil when
// there is none).
func RevisionByKey(ctx context.Context, db bun.IDB, siteID, userID uuid.UUID, clientID, key string) (*Revision, error) {
	rev := new(Revision)
	q := db.NewSelect().Model(rev).Where("site_id = ? AND idempotency_key = ?", siteID, key)
	if userID != uuid.Nil {
		q = q.Where("user_id = ?", userID)
	} else {
		q = q.Where("user_id IS NULL AND oauth_client_id = ?", clientID)
	}
	err := q.Scan(ctx)
	if models.IsNoRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look up the idempotency key: %w", err)
	}
	return rev, nil
}

// ListRevisions lists the site's revisions; page applies the caller's
// filters, sort and page (alias r) to the query.
func ListRevisions(ctx context.Context, db bun.IDB, siteID uuid.UUID, page func(*bun.SelectQuery) *bun.SelectQuery) ([]*Revision, int64, error) {
	var revs []*Revision
	total, err := page(db.NewSelect().Model(&revs).Where("r.site_id = ?", siteID)).ScanAndCount(ctx)
	return revs, int64(total), err
}

// ListVersions lists a revision's versions; page as for ListRevisions
// (alias v).
func ListVersions(ctx context.Context, db bun.IDB, revisionID uuid.UUID, page func(*bun.SelectQuery) *bun.SelectQuery) ([]*Version, int64, error) {
	var vs []*Version
	total, err := page(db.NewSelect().Model(&vs).Where("v.revision_id = ?", revisionID)).ScanAndCount(ctx)
	return vs, int64(total), err
}

// VersionsOf returns a revision's versions in the order they took effect
// (at most limit).
func VersionsOf(ctx context.Context, db bun.IDB, revisionID uuid.UUID, limit int64) ([]*Version, error) {
	var vs []*Version
	err := db.NewSelect().Model(&vs).Where("revision_id = ?", revisionID).Order("created_at", "id").Limit(limit).Scan(ctx)
	return vs, err
}

// notScheduled is the 409 of a change to a revision that is no longer
// scheduled.
func notScheduled(rev *Revision) error { return NotScheduled(rev.Status) }

// NotScheduled is the 409 of a change to a revision whose status is no
// longer scheduled.
func NotScheduled(status string) error {
	return &models.Error{Kind: models.ErrConflict, Code: "revision_not_scheduled",
		Detail: fmt.Sprintf("The revision is %s; only a scheduled revision can be moved or cancelled.", status)}
}

// FindScheduled reads a scheduled revision of the site, unlocked: 404 for
// none, 409 once it is publishing, published, failed or cancelled. A move
// checks it before it asks the workflow, which alone writes the new time
// (RecordPublishAt).
func FindScheduled(ctx context.Context, db bun.IDB, siteID, id uuid.UUID) (*Revision, error) {
	return findScheduled(ctx, db.NewSelect(), siteID, id)
}

// LockScheduled locks a scheduled revision of the site for its
// cancellation, as FindScheduled otherwise. The publish itself locks the
// same row first (Publish), so a revision found scheduled here cannot fire
// until the caller's transaction ends.
func LockScheduled(ctx context.Context, tx bun.Tx, siteID, id uuid.UUID) (*Revision, error) {
	return findScheduled(ctx, tx.NewSelect().For("UPDATE"), siteID, id)
}

func findScheduled(ctx context.Context, q *bun.SelectQuery, siteID, id uuid.UUID) (*Revision, error) {
	rev := new(Revision)
	err := q.Model(rev).Where("id = ? AND site_id = ?", id, siteID).Scan(ctx)
	if models.IsNoRows(err) {
		return nil, models.NotFound("revision")
	}
	if err != nil {
		return nil, fmt.Errorf("read revision: %w", err)
	}
	if rev.Status != Scheduled {
		return nil, notScheduled(rev)
	}
	return rev, nil
}

// RecordPublishAt records a scheduled revision's time, and reports false
// when the revision is no longer scheduled (cancelled, publishing or
// over). Its one caller is the revision's workflow, which runs its moves
// one at a time, so publish_at always ends at the time the workflow fires
// at; writing the same time again changes nothing. One statement, no lock
// held beyond it.
func RecordPublishAt(ctx context.Context, db bun.IDB, id uuid.UUID, at time.Time) (bool, error) {
	res, err := db.NewUpdate().Model((*Revision)(nil)).Set("publish_at = ?", at.UTC()).Set("updated_at = ?", time.Now().UTC()).
		Where("id = ? AND status = ?", id, Scheduled).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("record publish-at: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// Cancel cancels a scheduled revision (LockScheduled locked it in tx) and
// releases its drafts. Its workflow, if it fires anyway, finds it cancelled
// and publishes nothing (Publish).
func Cancel(ctx context.Context, tx bun.Tx, rev *Revision) error {
	if rev.Status != Scheduled {
		return notScheduled(rev)
	}
	rev.Status, rev.UpdatedAt = Cancelled, time.Now().UTC()
	if _, err := tx.NewUpdate().Model(rev).Column("status", "updated_at").WherePK().Exec(ctx); err != nil {
		return fmt.Errorf("cancel revision: %w", err)
	}
	if _, err := tx.NewUpdate().Model((*Draft)(nil)).Set("revision_id = NULL").Where("revision_id = ?", rev.ID).Exec(ctx); err != nil {
		return fmt.Errorf("release drafts: %w", err)
	}
	// A release a cancelled revision was to publish is open again.
	if err := releaseFollows(ctx, tx, rev, ReleaseOpen); err != nil {
		return err
	}
	// The webhook event commits with the cancellation (docs/webhooks.md).
	return models.RecordEvent(ctx, tx, models.Event{SiteID: rev.SiteID, Type: webhooks.RevisionCancelled, SubjectType: "revisions", SubjectID: rev.ID})
}

// heldEditable refuses a write to a draft held by a revision, unless that
// revision is scheduled: what a scheduled revision publishes is its drafts'
// state when it fires. (The publish locks the drafts, so a write and the
// publish take turns.)
func heldEditable(ctx context.Context, tx bun.IDB, d *Draft) error {
	if d == nil || d.RevisionID == nil {
		return nil
	}
	status, err := revisionStatus(ctx, tx, *d.RevisionID)
	if err != nil {
		return err
	}
	if status == Scheduled {
		return nil
	}
	return ErrInFlight
}

func revisionStatus(ctx context.Context, db bun.IDB, id uuid.UUID) (string, error) {
	var status string
	if err := db.NewSelect().Model((*Revision)(nil)).Column("status").Where("id = ?", id).Scan(ctx, &status); err != nil {
		return "", fmt.Errorf("status of the holding revision: %w", err)
	}
	return status, nil
}

// versionRow is the row of rev's i-th version: a microsecond after the one
// before, so that created_at keeps the order they took effect in.
func versionRow(rev *Revision, now time.Time, i int) models.SiteRow {
	return models.SiteRow{ID: uuid.New(), SiteID: rev.SiteID, CreatedAt: now.Add(time.Duration(i) * time.Microsecond)}
}

// recordPublished makes rev published with its versions, in tx: the one
// place a revision becomes published (Publish, Revert). insert records a
// revision that was never stored (a revert); otherwise the stored one is
// updated.
func recordPublished(ctx context.Context, tx bun.Tx, rev *Revision, versions []Version, insert bool) error {
	now := time.Now().UTC()
	rev.Status, rev.VersionsCount, rev.UpdatedAt = Published, len(versions), now
	if insert {
		if rev.CreatedAt.IsZero() {
			rev.CreatedAt = now
		}
		if _, err := tx.NewInsert().Model(rev).Exec(ctx); err != nil {
			return fmt.Errorf("insert revision: %w", err)
		}
	} else if _, err := tx.NewUpdate().Model(rev).Column("status", "versions_count", "updated_at").WherePK().Exec(ctx); err != nil {
		return err
	}
	if len(versions) > 0 {
		if err := fillStates(ctx, tx, versions); err != nil {
			return err
		}
		if _, err := tx.NewInsert().Model(&versions).Exec(ctx); err != nil {
			return fmt.Errorf("record versions: %w", err)
		}
		if err := tx.NewRaw(`UPDATE revisions r SET locales = ARRAY(
    SELECT DISTINCT CASE WHEN v.locale = '' THEN s.base_locale ELSE v.locale END FROM versions v WHERE v.revision_id = r.id ORDER BY 1)
  FROM sites s WHERE s.id = r.site_id AND r.id = ? RETURNING r.locales`, rev.ID).Scan(ctx, pgdialect.Array(&rev.Locales)); err != nil {
			return fmt.Errorf("record the revision's locales: %w", err)
		}
	}
	// The webhook event commits with the publication, a revert's too
	// (docs/webhooks.md).
	return models.RecordEvent(ctx, tx, models.Event{SiteID: rev.SiteID, Type: webhooks.RevisionPublished, SubjectType: "revisions", SubjectID: rev.ID})
}
