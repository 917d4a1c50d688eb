package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
	"github.com/pressroom/pressroom/workflows"
)

// Review before publishing (issue 30 §1, docs/releases.md "Review"): POST
// /release-reviews requests a review of a release or gives a verdict on
// it; GET /releases/:id/reviews lists a release's reviews, oldest first
// (the related endpoint of its to-many reviews). The rules (who may give
// a verdict, four eyes, approvals that lapse) are the store's
// (models/drafts/reviews.go).

type releaseReviewAttributes struct {
	Verdict   string  `json:"verdict" oas:"enum:review-verdict"`
	Comment   *string `json:"comment"`
	Stale     bool    `json:"stale"`
	CreatedAt string  `json:"created-at" oas:"date-time"`
}

// releaseReviewRequest is what POST /release-reviews accepts.
type releaseReviewRequest struct {
	Verdict *string `json:"verdict" oas:"required,enum:review-verdict"`
	Comment *string `json:"comment" oas:"nullable"`
	// Read-only, accepted only to be refused with a pointer at them.
	Stale any `json:"stale"`
	readOnlyTimestamps
}

// releaseReviewFields are the validated attributes of a request.
type releaseReviewFields struct {
	verdict string
	comment *string
}

// reviewVerdicts are the verdicts a review may carry.
var reviewVerdicts = []string{drafts.VerdictRequested, drafts.VerdictApproved, drafts.VerdictChangesRequested}

// maxReviewComment bounds a review's comment (the column's check).
const maxReviewComment = 10000

func (r releaseReviewRequest) validate(sent map[string]bool, _ bool) (f releaseReviewFields, err error) {
	if err = checkReadOnly(sent, "stale"); err != nil {
		return f, err
	}
	if r.Verdict == nil || !slices.Contains(reviewVerdicts, *r.Verdict) {
		return f, invalidAttr("verdict", "invalid_verdict", "verdict is requested, approved or changes-requested.")
	}
	f.verdict = *r.Verdict
	if r.Comment != nil {
		s := cleanText(*r.Comment)
		if utf8.RuneCountInString(s) > maxReviewComment {
			return f, invalidAttr("comment", "invalid_comment", fmt.Sprintf("comment is at most %d characters.", maxReviewComment))
		}
		f.comment = &s
	}
	return f, nil
}

func releaseReviewSpec() QuerySpec {
	return QuerySpec{Fields: fieldsOf("release-reviews"), Includes: includesOf("release-reviews")}
}

type releaseReviewsHandler struct {
	db       *bun.DB
	engine   *drafts.Engine
	links    links
	rows     rowRenderer[drafts.ReleaseReview]
	notifier reviewNotifier
}

// reviewNotifier sends committed reviews, and releases' ends, to the
// releases' review workflows (workflows.ReleaseReview; docs/releases.md,
// "Durable review").
type reviewNotifier struct {
	db       *bun.DB
	temporal client.Client
	cfg      config.Config
	log      *slog.Logger
}

// notify sends the committed review rv to its release's review workflow
// (starting it if need be) and marks it notified (docs/architecture.md,
// "From a commit to a workflow"). One Temporal did not accept within
// workflows.ReviewNoticeWait stays unnotified: the review is recorded and
// answered all the same, and the worker's commit sweep sends it.
func (n reviewNotifier) notify(ctx context.Context, rv *drafts.ReleaseReview) {
	err := workflows.NotifyReview(ctx, n.temporal, n.cfg.Webhooks.TaskQueue, rv.SiteID.String(), rv.ReleaseID.String(),
		n.cfg.ReviewReminder, workflows.ReviewNotice{ReviewID: rv.ID.String(), Verdict: rv.Verdict})
	if err == nil {
		err = drafts.MarkReviewNotified(ctx, n.db, rv.ID)
	}
	if err != nil {
		n.log.WarnContext(ctx, "review recorded, its workflow not notified: the commit sweep sends it", "review", rv.ID, "error", err)
	}
}

// cancel serves DELETE /releases/:id: the cancel commits (deleteRow), then
// the release's review, if it has one, is told to end. A signal that does
// not get through only delays the end: the review finds the release
// cancelled in the database at its next look.
func (n reviewNotifier) cancel() fiber.Handler {
	del := deleteRow(n.db, "release", drafts.CancelRelease)
	return func(c *fiber.Ctx) error {
		if err := del(c); err != nil {
			return err
		}
		id, err := idParam(c, "release")
		if err != nil {
			return err
		}
		if err := workflows.EndReview(c.UserContext(), n.temporal, id.String()); err != nil {
			n.log.WarnContext(c.UserContext(), "release cancelled, its review not told: it ends at its next look", "release", id, "error", err)
		}
		return nil
	}
}

// resource renders rv.
func (h releaseReviewsHandler) resource(rv *drafts.ReleaseReview) *jsonapi.Resource {
	p := "/release-reviews/" + rv.ID.String()
	release := rv.ReleaseID.String()
	return &jsonapi.Resource{Type: "release-reviews", ID: rv.ID.String(), Links: h.links.self(p),
		Attributes: releaseReviewAttributes{Verdict: rv.Verdict, Comment: rv.Comment, Stale: rv.Lapsed, CreatedAt: timestamp(rv.CreatedAt)},
		Relationships: map[string]*jsonapi.Relationship{
			"release": h.links.relationship(p, "release", jsonapi.ToOne("releases", &release)),
			"user":    h.links.relationship(p, "user", jsonapi.ToOne("users", optionalID(rv.UserID))),
		}}
}

// create serves POST /release-reviews: 201 with the review.
func (h releaseReviewsHandler) create(c *fiber.Ctx) error {
	req, err := readCreate[releaseReviewRequest, releaseReviewFields](c, releaseReviewSpec(), "release-reviews",
		relNames{writable: []string{"release"}, readOnly: []string{"user"}})
	if err != nil {
		return err
	}
	release, err := readRequiredToOne(req.data.Relationships, "release", "releases", "release", "the release reviewed")
	if err != nil {
		return err
	}
	pr := oauth.PrincipalOf(c)
	by := drafts.Reviewer{UserID: models.Person(pr.UserID), CanPublish: pr.Can(models.PermPublish), Section: sectionOf(pr)}
	var rv *drafts.ReleaseReview
	if err := runTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
		var err error
		rv, err = h.engine.CreateReview(ctx, tx, pr.SiteID, release, by, req.fields.verdict, req.fields.comment)
		if err == nil {
			auditItem(ctx, rv.ID)
		}
		return err
	}); err != nil {
		return atReleaseRelationship(err)
	}
	h.notifier.notify(c.UserContext(), rv)
	c.Set(fiber.HeaderLocation, h.links.base+"/release-reviews/"+rv.ID.String())
	return h.rows.respondOne(c, req.q, fiber.StatusCreated, rv)
}

// atReleaseRelationship points a missing release's 404 at the request's
// relationship release.
func atReleaseRelationship(err error) error {
	var me *models.Error
	if errors.As(err, &me) && me.Kind == models.ErrNotFound && me.At.Relationship == "" && me.At.Attribute == "" {
		me.At = models.Rel("release", models.PartID)
	}
	return err
}

// reviewsOf pages through the releases' reviews, oldest first.
func reviewsOf(db bun.IDB) manyFunc {
	return func(ctx context.Context, siteID uuid.UUID, parents []uuid.UUID, _ bool, w models.Window) (map[uuid.UUID]idPage, error) {
		rows, err := models.ChildPages(ctx, db, "release_reviews", "release_id", models.OrderOldest, siteID, parents, w)
		if err != nil {
			return nil, err
		}
		return idPages(rows, parents, w), nil
	}
}

// registerReleaseReviewRoutes registers /release-reviews. Anyone who may
// edit requests a review; a verdict needs publish (checked by the store,
// which knows which it is).
func registerReleaseReviewRoutes(r routes, engine *drafts.Engine) {
	h := releaseReviewsHandler{db: r.deps.DB, engine: engine, links: r.links, notifier: newReviewNotifier(r.deps)}
	h.rows = rowRenderer[drafts.ReleaseReview]{cat: r.cat, render: renderEach(h.resource)}
	r.cat.add(&resourceType{typ: "release-reviews", what: "review",
		fetch: fetchRows(h.db, drafts.ReviewsByIDs, renderEach(h.resource))})
	r.post("/release-reviews", models.PermEdit, h.create)
	r.get("/release-reviews/:id", models.PermRead, h.rows.get(releaseReviewSpec(), func(c *fiber.Ctx) (*drafts.ReleaseReview, error) {
		return loadByID(c, h.db, "review", drafts.FindReview)
	}))
}

// newReviewNotifier is the notifier of d's API.
func newReviewNotifier(d Deps) reviewNotifier {
	log := d.Log
	if log == nil {
		log = slog.Default()
	}
	return reviewNotifier{db: d.DB, temporal: d.Temporal, cfg: d.Config, log: log}
}
