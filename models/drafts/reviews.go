package drafts

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
)

// Review before publishing (issue 30 §1, docs/releases.md "Review"). A
// release's reviews are requests and verdicts. An approval records the
// meta.version of every draft publishing the release would publish when it
// was given (Drafts): the staged drafts and the drafts their publication
// closure pulls in. It lapses (stale) when one of those drafts changed or
// is gone, or a staged draft is not among them, compared when read
// (reviewLapsed), so any edit, by whatever code path, lapses it in the
// edit's own transaction; staging and unstaging set Stale in their
// transaction. The publish checks the closure it locked against the
// approvals once more (approvalHolds), so a draft pulled in after the
// approval cannot slip through either.
// A site's release_approvals is how many valid approvals, by distinct
// people, a release needs before it may be published.

// Review verdicts.
const (
	VerdictRequested        = "requested"
	VerdictApproved         = "approved"
	VerdictChangesRequested = "changes-requested"
)

// Release statuses of the review step: in-review is stored (a review was
// requested); approved is shown for an in-review release whose valid
// approvals reach the site's requirement (ShownStatus).
const (
	ReleaseInReview = "in-review"
	ReleaseApproved = "approved"
)

// MaxReviewsPerRelease bounds a release's reviews (every one is listed by
// GET /releases/:id/reviews).
const MaxReviewsPerRelease = 500

// ReleaseReview is a row of release_reviews.
type ReleaseReview struct {
	bun.BaseModel `bun:"table:release_reviews,alias:rr"`

	models.SiteRecord
	ReleaseID uuid.UUID      `bun:"release_id,type:uuid,notnull"`
	UserID    *uuid.UUID     `bun:"user_id,type:uuid"`
	Verdict   string         `bun:"verdict,notnull"`
	Comment   *string        `bun:"comment"`
	Drafts    map[string]int `bun:"drafts,type:jsonb,notnull"`
	Stale     bool           `bun:"stale,notnull"`
	// NotifiedAt is when the release's review workflow accepted the review
	// (started.go); nil until then.
	NotifiedAt *time.Time `bun:"notified_at"`
	// Lapsed is Stale, or the drafts changed since (read only).
	Lapsed bool `bun:"lapsed,scanonly"`
}

// reviewLapsed is true for a review (alias rr) that no longer holds: marked
// stale, one of its recorded drafts changed or gone (each read by its
// primary key), or a draft staged in the release that it did not record.
const reviewLapsed = `(rr.stale
  OR EXISTS (SELECT 1 FROM jsonb_each_text(rr.drafts) j LEFT JOIN drafts d ON d.id = j.key::uuid
    WHERE d.version IS DISTINCT FROM j.value::int)
  OR EXISTS (SELECT 1 FROM drafts d WHERE d.release_id = rr.release_id AND rr.drafts -> d.id::text IS NULL))`

// latestApprovals selects each person's latest approval of the releases
// that where (a condition on release_reviews rr) matches, with lapsed: the
// approvals that count. ReviewStates, the releases list's shown status
// and approvalsCovering all count through it, so they cannot disagree on
// which approval holds.
func latestApprovals(where string) string {
	return `SELECT rr.*, ` + reviewLapsed + ` AS lapsed
  FROM (SELECT DISTINCT ON (rr.release_id, rr.user_id) rr.* FROM release_reviews rr
        WHERE rr.verdict = 'approved' AND ` + where + `
        ORDER BY rr.release_id, rr.user_id, rr.created_at DESC) rr`
}

// ReviewState is where a release's review stands.
type ReviewState struct {
	Approvals int  // valid approvals, by distinct people
	Required  int  // the site's release_approvals
	Requested bool // a review was requested (the release is in review)
}

// Approved tells whether the state lets the release be published.
func (s ReviewState) Approved() bool {
	return s.Required == 0 || (s.Requested && s.Approvals >= s.Required)
}

// ShownStatus is the status a release shows: approved for an in-review
// release with enough valid approvals.
func ShownStatus(r *Release, s ReviewState) string {
	if r.Status == ReleaseInReview && s.Requested && s.Approvals >= s.Required {
		return ReleaseApproved
	}
	return r.Status
}

// SiteApprovals is the site's release_approvals.
func SiteApprovals(ctx context.Context, db bun.IDB, siteID uuid.UUID) (int, error) {
	var n int
	if err := db.NewSelect().Table("sites").Column("release_approvals").Where("id = ?", siteID).Scan(ctx, &n); err != nil {
		return 0, fmt.Errorf("site approvals: %w", err)
	}
	return n, nil
}

// ReviewStates is the review state of each of the site's releases ids.
func ReviewStates(ctx context.Context, db bun.IDB, siteID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]ReviewState, error) {
	required, err := SiteApprovals(ctx, db, siteID)
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID]ReviewState, len(ids))
	for _, id := range ids {
		out[id] = ReviewState{Required: required}
	}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		ReleaseID uuid.UUID `bun:"release_id"`
		Approvals int       `bun:"approvals"`
		Requests  int       `bun:"requests"`
	}
	err = db.NewRaw(`SELECT v.release_id,
  count(DISTINCT v.user_id) FILTER (WHERE v.verdict = 'approved' AND NOT v.lapsed) AS approvals,
  count(*) FILTER (WHERE v.verdict = 'requested') AS requests
FROM (SELECT a.release_id, a.user_id, a.verdict, a.lapsed FROM (`+latestApprovals("rr.site_id = ?0 AND rr.release_id IN (?1)")+`) a
      UNION ALL
      SELECT rr.release_id, rr.user_id, rr.verdict, false FROM release_reviews rr
      WHERE rr.site_id = ?0 AND rr.release_id IN (?1) AND rr.verdict = 'requested') v
GROUP BY v.release_id`, siteID, bun.In(ids)).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("review states: %w", err)
	}
	for _, r := range rows {
		out[r.ReleaseID] = ReviewState{Approvals: r.Approvals, Required: required, Requested: r.Requests > 0}
	}
	return out, nil
}

// approvalsCovering counts the people whose latest approval of release
// holds and recorded every draft of ordered at its version: the approvals
// that cover what a publish of the release applies.
func approvalsCovering(ctx context.Context, tx bun.IDB, release uuid.UUID, ordered []*Draft) (int, error) {
	var latest []ReleaseReview
	err := tx.NewRaw(latestApprovals("rr.release_id = ?"), release).Scan(ctx, &latest)
	if err != nil {
		return 0, fmt.Errorf("approvals of release: %w", err)
	}
	n := 0
	for _, rv := range latest {
		if !rv.Lapsed && covers(rv.Drafts, ordered) {
			n++
		}
	}
	return n, nil
}

// covers tells whether an approval's recorded drafts hold each of ds at
// its version.
func covers(recorded map[string]int, ds []*Draft) bool {
	for _, d := range ds {
		if v, ok := recorded[d.ID.String()]; !ok || v != d.Version {
			return false
		}
	}
	return true
}

// FindReview is the site's review id; NotFound("review") without it.
func FindReview(ctx context.Context, db bun.IDB, siteID, id uuid.UUID) (*ReleaseReview, error) {
	rows, err := ReviewsByIDs(ctx, db, siteID, []uuid.UUID{id})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, models.NotFound("review")
	}
	return &rows[0], nil
}

// ReviewsByIDs are the site's reviews among ids.
func ReviewsByIDs(ctx context.Context, db bun.IDB, siteID uuid.UUID, ids []uuid.UUID) ([]ReleaseReview, error) {
	var out []ReleaseReview
	err := db.NewSelect().Model(&out).ColumnExpr("rr.*").ColumnExpr(reviewLapsed+" AS lapsed").
		Where("rr.site_id = ? AND rr.id IN (?)", siteID, bun.In(ids)).Scan(ctx)
	return out, err
}

// Reviewer is who gives a review: the user (nil for an integration
// client), whether their role may publish, and the section their rights
// are narrowed to (nil: the whole site).
type Reviewer struct {
	UserID     *uuid.UUID
	CanPublish bool
	Section    *string
}

// CreateReview records a request or a verdict on the site's release id
// (locked, open or in review). A request puts the release in review; a
// verdict needs publish, a person, and none of the release's drafts last
// changed by them (four eyes); an approval records the drafts' versions.
func (e *Engine) CreateReview(ctx context.Context, tx bun.Tx, siteID, id uuid.UUID, by Reviewer, verdict string, comment *string) (*ReleaseReview, error) {
	r, err := LockOpenRelease(ctx, tx, siteID, id)
	if err != nil {
		return nil, err
	}
	staged, err := StagedDrafts(ctx, tx, siteID, r.ID, true)
	if err != nil {
		return nil, err
	}
	// What an approval covers, and whose edits four eyes judges:
	// everything the release's publish would publish, not only what is
	// staged (the drafts its closure pulls in, locked too).
	covered := staged
	if verdict == VerdictApproved && len(staged) > 0 {
		if covered, err = Closure(ctx, tx, siteID, staged, Publication, true); err != nil {
			return nil, err
		}
	}
	if err := checkReviewer(covered, by, verdict); err != nil {
		return nil, err
	}
	if err := e.checkReviewerSection(ctx, tx, siteID, by, verdict, covered); err != nil {
		return nil, err
	}
	n, err := tx.NewSelect().Model((*ReleaseReview)(nil)).Where("release_id = ?", r.ID).Count(ctx)
	if err != nil {
		return nil, fmt.Errorf("count reviews: %w", err)
	}
	if n >= MaxReviewsPerRelease {
		return nil, &models.Error{Kind: models.ErrConflict, Code: "too_many_reviews",
			Detail: fmt.Sprintf("A release has at most %d reviews.", MaxReviewsPerRelease)}
	}
	rv := &ReleaseReview{SiteRecord: models.NewSiteRecord(siteID), ReleaseID: r.ID, UserID: by.UserID, Verdict: verdict, Comment: comment,
		Drafts: make(map[string]int, len(covered))}
	for _, d := range covered {
		rv.Drafts[d.ID.String()] = d.Version
	}
	if _, err := tx.NewInsert().Model(rv).Exec(ctx); err != nil {
		return nil, fmt.Errorf("insert review: %w", err)
	}
	status := r.Status
	if verdict == VerdictRequested {
		status = ReleaseInReview
	}
	return rv, touchRelease(ctx, tx, r, status)
}

// checkReviewer refuses a verdict by someone who may not give it.
func checkReviewer(staged []*Draft, by Reviewer, verdict string) error {
	if verdict == VerdictRequested {
		return nil
	}
	if !by.CanPublish {
		return &models.Error{Kind: models.ErrForbidden, Detail: "Approving a release or requesting changes needs the permission publish."}
	}
	if by.UserID == nil {
		return &models.Error{Kind: models.ErrForbidden, Detail: "A verdict is a person's: an integration client's token cannot give one."}
	}
	if verdict != VerdictApproved {
		return nil
	}
	if len(staged) == 0 {
		return &models.Error{Kind: models.ErrInvalid, Code: "release_empty", At: models.Rel("release", models.PartData),
			Detail: "The release has no drafts staged: nothing to approve."}
	}
	for _, d := range staged {
		if d.UserID != nil && *d.UserID == *by.UserID {
			return &models.Error{Kind: models.ErrForbidden, Code: "own_approval",
				Detail: fmt.Sprintf("You last changed draft %s, which publishing this release publishes: someone else must approve it (four eyes).", d.ID)}
		}
	}
	return nil
}

// checkReviewerSection refuses a verdict by a section editor on a release
// whose publish would publish a draft outside their section: they could
// not publish it themselves, so they cannot vouch for it either.
func (e *Engine) checkReviewerSection(ctx context.Context, tx bun.IDB, siteID uuid.UUID, by Reviewer, verdict string, covered []*Draft) error {
	if verdict == VerdictRequested || by.Section == nil {
		return nil
	}
	d, path, err := e.FirstOutside(ctx, tx, siteID, by.Section, covered)
	if err != nil || d == nil {
		return err
	}
	return &models.Error{Kind: models.ErrForbidden,
		Detail: fmt.Sprintf("Draft %s of this release is at %s, outside your section %s: someone who may publish it must give the verdict.", d.ID, path, *by.Section)}
}

// lapseReviews marks every review of the release stale (a draft was
// staged or unstaged), in the staging transaction.
func lapseReviews(ctx context.Context, tx bun.IDB, releaseID uuid.UUID) error {
	if _, err := tx.NewUpdate().Model((*ReleaseReview)(nil)).Set("stale = true, updated_at = ?", time.Now().UTC()).
		Where("release_id = ? AND NOT stale", releaseID).Exec(ctx); err != nil {
		return fmt.Errorf("lapse reviews: %w", err)
	}
	return nil
}

// ErrApprovalRequired is the refusal of a publish the site's review step
// does not allow yet (409 approval_required, the counts in meta).
func ErrApprovalRequired(s ReviewState, detail string) *models.Error {
	return &models.Error{Kind: models.ErrConflict, Code: "approval_required", Detail: detail,
		Meta: map[string]any{"approvals-count": s.Approvals, "approvals-required": s.Required, "review-requested": s.Requested}}
}

// CheckApproved refuses (409 approval_required) publishing the site's
// release id while the site requires approvals it does not have.
func CheckApproved(ctx context.Context, db bun.IDB, siteID, id uuid.UUID) error {
	states, err := ReviewStates(ctx, db, siteID, []uuid.UUID{id})
	if err != nil {
		return err
	}
	if s := states[id]; !s.Approved() {
		return ErrApprovalRequired(s, fmt.Sprintf("The release has %d of the %d valid approvals the site requires (and a review must be requested).", s.Approvals, s.Required))
	}
	return nil
}

// reviewedSince tells whether the release has any review (a failed or
// cancelled publish of it goes back in review, not open).
func reviewedSince(ctx context.Context, db bun.IDB, releaseID uuid.UUID) (bool, error) {
	return db.NewSelect().Model((*ReleaseReview)(nil)).Where("release_id = ? AND verdict = ?", releaseID, VerdictRequested).Exists(ctx)
}

// CheckDirectPublish refuses (409 approval_required) a revision that
// lists drafts itself while the site requires approvals: drafts then go
// live only through an approved release (a rollback stays allowed).
func CheckDirectPublish(ctx context.Context, db bun.IDB, siteID uuid.UUID) error {
	required, err := SiteApprovals(ctx, db, siteID)
	if err != nil {
		return err
	}
	if required > 0 {
		e := ErrApprovalRequired(ReviewState{Required: required},
			fmt.Sprintf("The site requires %d approval(s) before publishing: stage the drafts in a release, have it approved, and publish the release.", required))
		e.At = models.Rel("drafts", models.PartData)
		return e
	}
	return nil
}
