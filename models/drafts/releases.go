package drafts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/webhooks"
)

// Releases (docs/releases.md): a named set of drafts staged to be
// previewed (preview.go) and published as one. A draft is in at most one
// release (drafts.release_id). Every change of a release locks its row
// (FOR UPDATE) first, so a stage, an unstage, a cancel and a publish of
// one release run one after another, and a release that is not open
// refuses them all.

// Release is a row of releases.
type Release struct {
	bun.BaseModel `bun:"table:releases,alias:rl"`

	models.SiteRecord
	Title       string     `bun:"title,notnull"`
	Description *string    `bun:"description"`
	Status      string     `bun:"status,notnull"`
	UserID      *uuid.UUID `bun:"user_id,type:uuid"`
	RevisionID  *uuid.UUID `bun:"revision_id,type:uuid"`
	Version     int        `bun:"version,notnull"`
}

// Release statuses (the review step adds in-review and approved).
const (
	ReleaseOpen       = "open"
	ReleasePublishing = "publishing"
	ReleasePublished  = "published"
	ReleaseFailed     = "failed"
	ReleaseCancelled  = "cancelled"
)

// ReleaseStatuses are the statuses filter[status] takes.
var ReleaseStatuses = []string{ReleaseOpen, "in-review", "approved", ReleasePublishing, ReleasePublished, ReleaseFailed, ReleaseCancelled}

// CreateRelease records a new open release.
func CreateRelease(ctx context.Context, db bun.IDB, r *Release) error {
	r.Status, r.Version = ReleaseOpen, 1
	if _, err := db.NewInsert().Model(r).Exec(ctx); err != nil {
		return fmt.Errorf("insert release: %w", err)
	}
	return nil
}

// FindRelease is the site's release id; NotFound("release") without it.
func FindRelease(ctx context.Context, db bun.IDB, siteID, id uuid.UUID) (*Release, error) {
	return models.Find[Release](ctx, db, siteID, id, "release", false)
}

// ReleasesByIDs are the site's releases among ids.
func ReleasesByIDs(ctx context.Context, db bun.IDB, siteID uuid.UUID, ids []uuid.UUID) ([]Release, error) {
	var out []Release
	err := db.NewSelect().Model(&out).Where("site_id = ? AND id IN (?)", siteID, bun.In(ids)).Scan(ctx)
	return out, err
}

// ListReleases is one page of the site's releases.
func ListReleases(ctx context.Context, db bun.IDB, siteID uuid.UUID, page models.Page) ([]Release, int64, error) {
	var rows []Release
	total, err := page(db.NewSelect().Model(&rows).ModelTableExpr("(SELECT rl.*, "+shownStatusSQL+" AS shown_status FROM releases rl WHERE rl.site_id = ?) AS rl", siteID)).
		ScanAndCount(ctx)
	return rows, total, err
}

// shownStatusSQL is ShownStatus over a release rl, for filter[status]: an
// in-review release whose valid approvals (each person's latest, not
// lapsed) reach its site's requirement shows approved. Postgres computes
// it only for the rows a filter on it reads.
var shownStatusSQL = `CASE WHEN rl.status = 'in-review' AND (SELECT count(*) FROM (` +
	latestApprovals("rr.release_id = rl.id") + `) a WHERE NOT a.lapsed)
  >= (SELECT s.release_approvals FROM sites s WHERE s.id = rl.site_id) THEN 'approved' ELSE rl.status END`

// errNotOpen is the refusal of any change to a release that is not open.
func errNotOpen(r *Release) *models.Error {
	return &models.Error{Kind: models.ErrConflict, Code: "release_not_open",
		Detail: fmt.Sprintf("The release is %s: only an open release (or one in review) can change.", r.Status)}
}

// Changeable tells whether a release in status may change: open, or in
// review (the review step, reviews.go).
func Changeable(status string) bool { return status == ReleaseOpen || status == ReleaseInReview }

// CheckOpen refuses a change of a release that is not open or in review
// (409 release_not_open).
func CheckOpen(r *Release) error {
	if !Changeable(r.Status) {
		return errNotOpen(r)
	}
	return nil
}

// LockOpenRelease locks the site's release id (FOR UPDATE) and checks it
// is open: NotFound("release"), or a 409 release_not_open.
func LockOpenRelease(ctx context.Context, tx bun.IDB, siteID, id uuid.UUID) (*Release, error) {
	r, err := models.Find[Release](ctx, tx, siteID, id, "release", true)
	if err != nil {
		return nil, err
	}
	if !Changeable(r.Status) {
		return nil, errNotOpen(r)
	}
	return r, nil
}

// touchRelease moves the release's version and updated_at on (its row is
// locked by the caller).
func touchRelease(ctx context.Context, tx bun.IDB, r *Release, status string) error {
	r.Status, r.Version, r.UpdatedAt = status, r.Version+1, time.Now().UTC()
	_, err := tx.NewUpdate().Model(r).Column("title", "description", "status", "revision_id", "version", "updated_at").WherePK().Exec(ctx)
	if err != nil {
		return fmt.Errorf("update release: %w", err)
	}
	return nil
}

// UpdateRelease saves r's title and description (r locked and open).
func UpdateRelease(ctx context.Context, tx bun.IDB, r *Release) error {
	return touchRelease(ctx, tx, r, r.Status)
}

// CancelRelease cancels the open release id: its drafts stay as they are,
// only unstaged; the event release.cancelled commits with it.
func CancelRelease(ctx context.Context, tx bun.IDB, siteID, id uuid.UUID) error {
	r, err := LockOpenRelease(ctx, tx, siteID, id)
	if err != nil {
		return err
	}
	if _, err := tx.NewUpdate().Model((*Draft)(nil)).Set("release_id = NULL").Where("release_id = ?", r.ID).Exec(ctx); err != nil {
		return fmt.Errorf("unstage drafts: %w", err)
	}
	if err := touchRelease(ctx, tx, r, ReleaseCancelled); err != nil {
		return err
	}
	return models.RecordEvent(ctx, tx, models.Event{SiteID: siteID, Type: webhooks.ReleaseCancelled, SubjectType: "releases", SubjectID: r.ID})
}

// StageDrafts stages the site's drafts ids in the open release id, in
// request order. A draft the site does not have is a 404 at its item; one
// staged in another release a 409 (staged_elsewhere) at its item, naming
// that release. Staging a draft already in the release changes nothing.
func StageDrafts(ctx context.Context, tx bun.IDB, siteID, id uuid.UUID, ids []uuid.UUID) error {
	r, err := LockOpenRelease(ctx, tx, siteID, id)
	if err != nil {
		return err
	}
	ds, err := Drafts(ctx, tx, siteID, ids, true)
	if err != nil {
		return err
	}
	byID := make(map[uuid.UUID]*Draft, len(ds))
	for _, d := range ds {
		byID[d.ID] = d
	}
	for i, did := range ids {
		d := byID[did]
		if d == nil {
			return &models.Error{Kind: models.ErrNotFound, At: models.RelItem("drafts", i, models.PartID), Detail: "No draft with that id."}
		}
		if d.ReleaseID != nil && *d.ReleaseID != r.ID {
			return &models.Error{Kind: models.ErrConflict, Code: "staged_elsewhere", At: models.RelItem("drafts", i, models.PartData),
				Detail: fmt.Sprintf("The draft is staged in release %s; unstage it there first.", d.ReleaseID),
				Meta:   map[string]any{"release": map[string]any{"type": "releases", "id": d.ReleaseID.String()}}}
		}
	}
	if _, err := tx.NewUpdate().Model((*Draft)(nil)).Set("release_id = ?", r.ID).
		Where("site_id = ? AND id IN (?)", siteID, bun.In(ids)).Exec(ctx); err != nil {
		return fmt.Errorf("stage drafts: %w", err)
	}
	if err := lapseReviews(ctx, tx, r.ID); err != nil {
		return err
	}
	return touchRelease(ctx, tx, r, r.Status)
}

// UnstageDrafts takes the drafts ids out of the open release id; a draft
// of the site not in it is left as it is; one the site does not have is a
// 404 at its item.
func UnstageDrafts(ctx context.Context, tx bun.IDB, siteID, id uuid.UUID, ids []uuid.UUID) error {
	r, err := LockOpenRelease(ctx, tx, siteID, id)
	if err != nil {
		return err
	}
	ds, err := Drafts(ctx, tx, siteID, ids, true)
	if err != nil {
		return err
	}
	found := make(map[uuid.UUID]bool, len(ds))
	for _, d := range ds {
		found[d.ID] = true
	}
	for i, did := range ids {
		if !found[did] {
			return &models.Error{Kind: models.ErrNotFound, At: models.RelItem("drafts", i, models.PartID), Detail: "No draft with that id."}
		}
	}
	if _, err := tx.NewUpdate().Model((*Draft)(nil)).Set("release_id = NULL").
		Where("site_id = ? AND release_id = ? AND id IN (?)", siteID, r.ID, bun.In(ids)).Exec(ctx); err != nil {
		return fmt.Errorf("unstage drafts: %w", err)
	}
	if err := lapseReviews(ctx, tx, r.ID); err != nil {
		return err
	}
	return touchRelease(ctx, tx, r, r.Status)
}

// StagedDrafts are the drafts staged in the release id, by id.
func StagedDrafts(ctx context.Context, db bun.IDB, siteID, id uuid.UUID, lock bool) ([]*Draft, error) {
	var ds []*Draft
	q := db.NewSelect().Model(&ds).Where("site_id = ? AND release_id = ?", siteID, id).Order("id")
	if lock {
		q = q.For("UPDATE")
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("staged drafts: %w", err)
	}
	return ds, nil
}

// ListInLocale is one page of the site's drafts (GET /drafts), with
// locale only those of that locale ("" the shared ones).
func ListInLocale(ctx context.Context, db bun.IDB, siteID uuid.UUID, locale *string, page models.Page) ([]*Draft, int64, error) {
	if locale == nil {
		return List(ctx, db, siteID, page)
	}
	return models.List[*Draft](ctx, db, page, "d.site_id = ? AND d.locale = ?", siteID, *locale)
}

// StagedPages ranks the drafts staged in each release (the releases'
// to-many relationship drafts), by draft id; with locale, only that
// locale's drafts ("" the shared ones).
func StagedPages(ctx context.Context, db bun.IDB, siteID uuid.UUID, releases []uuid.UUID, locale *string, w models.Window) ([]Ranked, error) {
	if locale != nil {
		return rankPages(ctx, db, `WITH b AS (SELECT d.id, d.release_id AS parent, d.id::text AS pos FROM drafts d
  WHERE d.site_id = ?0 AND d.release_id IN (?1) AND d.locale = ?4)`, siteID, releases, w, *locale)
	}
	return rankPages(ctx, db, `WITH b AS (SELECT d.id, d.release_id AS parent, d.id::text AS pos FROM drafts d
  WHERE d.site_id = ?0 AND d.release_id IN (?1))`, siteID, releases, w)
}

// ReleaseDrafts locks the open release relID of rev's site and makes its
// staged drafts rev's listed drafts (none staged is a 422 at the
// relationship release): a revision that publishes a release lists them,
// and Reserve and Publish treat it as any other. ReleasePublishing, in the
// same transaction after Reserve, marks the release.
func ReleaseDrafts(ctx context.Context, tx bun.Tx, rev *Revision, relID uuid.UUID) (*Release, error) {
	r, err := LockOpenRelease(ctx, tx, rev.SiteID, relID)
	if err != nil {
		var me *models.Error
		if errors.As(err, &me) && errors.Is(err, models.ErrNotFound) {
			me.At = models.Rel("release", models.PartID) // the request's relationship names it
		}
		return nil, err
	}
	staged, err := StagedDrafts(ctx, tx, rev.SiteID, r.ID, false)
	if err != nil {
		return nil, err
	}
	if len(staged) == 0 {
		return nil, &models.Error{Kind: models.ErrInvalid, Code: "release_empty", At: models.Rel("release", models.PartData),
			Detail: "The release has no drafts staged: nothing to publish."}
	}
	// The review step (reviews.go): while the site requires approvals,
	// only an approved release publishes or is scheduled.
	if err := CheckApproved(ctx, tx, rev.SiteID, r.ID); err != nil {
		return nil, err
	}
	rev.DraftIDs, rev.ReleaseID = draftIDs(staged), &r.ID
	return r, nil
}

// MarkReleasePublishing marks the release r (locked by ReleaseDrafts)
// publishing, by the revision rev.
func MarkReleasePublishing(ctx context.Context, tx bun.Tx, r *Release, rev *Revision) error {
	r.RevisionID = &rev.ID
	return touchRelease(ctx, tx, r, ReleasePublishing)
}

// StagedIDs are the ids of the drafts staged in the site's release id
// (NotFound at the relationship release without it), for a publish plan.
func StagedIDs(ctx context.Context, db bun.IDB, siteID, id uuid.UUID) ([]uuid.UUID, error) {
	if _, err := FindRelease(ctx, db, siteID, id); err != nil {
		var me *models.Error
		if errors.As(err, &me) && errors.Is(err, models.ErrNotFound) {
			me.At = models.Rel("release", models.PartID)
		}
		return nil, err
	}
	staged, err := StagedDrafts(ctx, db, siteID, id, false)
	if err != nil {
		return nil, err
	}
	return draftIDs(staged), nil
}

// releaseFollows sets the status of rev's release (if any) after rev
// published (published, with the event release.published), failed or was
// cancelled (open again, with its drafts; in review if it was reviewed).
func releaseFollows(ctx context.Context, tx bun.IDB, rev *Revision, status string) error {
	if rev.ReleaseID == nil {
		return nil
	}
	r, err := models.Find[Release](ctx, tx, rev.SiteID, *rev.ReleaseID, "release", true)
	if err != nil {
		return err
	}
	if r.Status != ReleasePublishing {
		return nil
	}
	if status == ReleaseOpen {
		r.RevisionID = nil
		// A release that was reviewed goes back in review, not open.
		reviewed, err := reviewedSince(ctx, tx, r.ID)
		if err != nil {
			return err
		}
		if reviewed {
			status = ReleaseInReview
		}
	}
	if err := touchRelease(ctx, tx, r, status); err != nil {
		return err
	}
	if status == ReleasePublished {
		return models.RecordEvent(ctx, tx, models.Event{SiteID: rev.SiteID, Type: webhooks.ReleasePublished, SubjectType: "releases", SubjectID: r.ID})
	}
	return nil
}
