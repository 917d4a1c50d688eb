package api

import (
	"context"
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/uptrace/bun"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/models/drafts"
	"github.com/pressroom/pressroom/workflows"
)

// maxScheduleAhead bounds how far ahead a revision may be scheduled.
const maxScheduleAhead = 366 * 24 * time.Hour

// parsePublishAt reads a publish-at: an RFC 3339 time at least 1 s and at
// most 366 days ahead.
func parsePublishAt(s string) (time.Time, error) {
	bad := func(detail string) error {
		return jsonapi.Unprocessable("invalid_publish_at", detail).AtPointer("/data/attributes/publish-at")
	}
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, bad("publish-at must be an RFC 3339 timestamp, such as 2026-12-01T09:00:00Z.")
	}
	ahead := time.Until(at)
	if ahead < time.Second || ahead > maxScheduleAhead {
		return time.Time{}, bad("publish-at must be at least 1 second and at most 366 days in the future.")
	}
	return at.UTC().Truncate(time.Microsecond), nil // what Postgres keeps
}

type revisionPatch struct {
	PublishAt *string `json:"publish-at" oas:"date-time,required"`
}

// update serves PATCH /revisions/:id: a scheduled revision's publish-at
// moves. The move is sent to the workflow as a Temporal Update and the
// answer waits for its acknowledgement, which comes once the workflow has
// recorded the time in the database; 409 once the revision is publishing,
// published, failed or cancelled.
func (h revisionsHandler) update(c *fiber.Ctx) error {
	q, err := parseQuery(c, QuerySpec{Fields: []string{"revisions"}})
	if err != nil {
		return err
	}
	req, err := decodePatch[revisionPatch](c, "revision", "revisions")
	if err != nil {
		return err
	}
	if req.data.Attributes.PublishAt == nil {
		return jsonapi.Unprocessable("required", "publish-at is the attribute a revision's PATCH changes.").AtPointer("/data/attributes/publish-at")
	}
	at, err := parsePublishAt(*req.data.Attributes.PublishAt)
	if err != nil {
		return err
	}
	// A short read answers 404/409 early; the workflow then records the
	// time itself before it acknowledges (workflows: move-publish-at), so
	// no transaction or row lock is held while Temporal answers, and
	// concurrent moves end with the database and the timer on the same one.
	rev, err := drafts.FindScheduled(c.UserContext(), h.db, siteOf(c), req.id)
	if err != nil {
		return err
	}
	// A section's editor moves only a revision whose closure lies in the
	// section (as POST /revisions checks it, with its drafts locked: a
	// transaction of its own that writes nothing, so no audit event).
	if err := h.db.RunInTx(c.UserContext(), nil, func(ctx context.Context, tx bun.Tx) error {
		return h.engine.CheckPublishable(ctx, tx, rev.SiteID, sectionOf(oauth.PrincipalOf(c)), rev.DraftIDs)
	}); err != nil {
		return err
	}
	if err := h.updateWorkflow(c.UserContext(), rev, workflows.MovePublishAtUpdate, at); err != nil {
		return err
	}
	rev.PublishAt = &at
	return h.respondRevision(c, q, rev, fiber.StatusOK)
}

// cancel serves DELETE /revisions/:id: a scheduled revision is cancelled
// and its drafts released (204); 409 once it is publishing, published,
// failed or cancelled. The cancellation is committed before the workflow
// hears of it: a timer that fires meanwhile finds the revision cancelled
// and publishes nothing, and a workflow that cannot be told ends the same
// way when its time comes.
func (h revisionsHandler) cancel(c *fiber.Ctx) error {
	if _, err := queryParams(c); err != nil {
		return err
	}
	id, err := idParam(c, "revision")
	if err != nil {
		return err
	}
	var rev *drafts.Revision
	err = runTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
		if rev, err = drafts.LockScheduled(ctx, tx, siteOf(c), id); err != nil {
			return err
		}
		// A section's editor cancels only a revision whose closure lies
		// in the section.
		if err := h.engine.CheckPublishable(ctx, tx, rev.SiteID, sectionOf(oauth.PrincipalOf(c)), rev.DraftIDs); err != nil {
			return err
		}
		return drafts.Cancel(ctx, tx, rev)
	})
	if err != nil {
		return err
	}
	if err := h.updateWorkflow(c.UserContext(), rev, workflows.CancelUpdate); err != nil {
		h.log.WarnContext(c.UserContext(), "cancelled revision's workflow not told; it ends when its timer fires",
			"revision_id", rev.ID, "error", err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// updateWorkflow sends a Temporal Update to a scheduled revision's
// workflow and waits for the workflow to complete it. One the workflow
// refuses because its timer has fired (or that finds it ended) is the 409
// of a revision no longer scheduled.
func (h revisionsHandler) updateWorkflow(ctx context.Context, rev *drafts.Revision, name string, args ...any) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	handle, err := h.temporal.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: workflows.PublishRevisionID(rev.ID.String()), UpdateName: name, Args: args,
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = handle.Get(ctx, nil)
	}
	var app *temporal.ApplicationError
	var gone *serviceerror.NotFound
	switch {
	case err == nil:
		return nil
	case errors.As(err, &app) && app.Type() == workflows.NotScheduledType, errors.As(err, &gone):
		return drafts.NotScheduled(drafts.Publishing)
	}
	return jsonapi.Unavailable("The publishing service did not acknowledge the change; nothing changed. Try again shortly.").WithHeader("Retry-After", "5")
}
