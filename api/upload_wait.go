package api

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/workflows"
)

// maxUploadWait bounds GET /asset-uploads/:id?wait=: below the request
// deadline (PRESSROOM_REQUEST_TIMEOUT, 30 s by default) and the timeouts
// of common proxies.
const maxUploadWait = 20 * time.Second

// parseUploadWait reads ?wait=: a duration ("5s", "1500ms") or a number of
// seconds ("5"), more than 0 and at most maxUploadWait.
func parseUploadWait(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		s, serr := strconv.ParseFloat(v, 64)
		if serr != nil || s != s { // not a number, or NaN
			d = -1
		} else {
			d = time.Duration(s * float64(time.Second))
		}
	}
	if d <= 0 || d > maxUploadWait {
		return 0, jsonapi.BadRequest("invalid_parameter",
			"wait must be a duration such as 5s or 1500ms (or a number of seconds), more than 0 and at most "+maxUploadWait.String()+".").AtParameter("wait")
	}
	return d, nil
}

// waitForUpload serves ?wait=: while the upload is processing, it waits
// until its ingestion workflow run closes (the run marks the upload
// finished or error as its last steps) or the wait passes, whichever comes
// first, then reads the upload again. The wait is a long poll of the run's
// history on the Temporal server (the SDK's WorkflowRun.Get), not a loop
// over the database; the request deadline cuts it short too.
func (h uploadsHandler) waitForUpload(c *fiber.Ctx, up *models.AssetUpload, raw string) (*models.AssetUpload, error) {
	d, err := parseUploadWait(raw)
	if err != nil {
		return nil, err
	}
	if up.Status != models.UploadProcessing {
		return up, nil
	}
	ctx := c.UserContext()
	if deadline, ok := ctx.Deadline(); ok {
		// Leave time to read the upload again and answer.
		d = min(d, time.Until(deadline)-time.Second)
	}
	if d > 0 {
		wctx, cancel := context.WithTimeout(ctx, d)
		err := h.temporal.GetWorkflow(wctx, workflows.AssetUploadID(up.ID.String()), "").Get(wctx, nil)
		cancel()
		// The run's own failure (a rejection) is a change of state like
		// its success; the end of the wait is no error either.
		if err != nil && ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, ctx.Err() // the client went away
		}
	}
	return h.loadUpload(c)
}
