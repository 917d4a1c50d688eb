package activities

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/workflows"
)

// The queue's activities (docs/assets.md, "The queue"), run as local
// activities by IngestUpload since the queue. Both are safe to run twice.

// ClaimSlot checks the attempt is still to be processed (Claim), then takes one
// of the site's processing slots if the upload's turn has come
// (models.TakeUploadSlot; an upload that holds one keeps it). Claimed is
// false when the attempt is no longer processing.
func (a *Uploads) ClaimSlot(ctx context.Context, u workflows.Upload) (models.UploadTurn, error) {
	claimed, err := a.Claim(ctx, u)
	if err != nil || !claimed {
		return models.UploadTurn{}, err
	}
	uploadID, siteID, err := uploadAndSite(u)
	if err != nil {
		return models.UploadTurn{}, err
	}
	turn, err := models.TakeUploadSlot(ctx, a.DB, uploadID, siteID, u.Attempt, a.siteLimit())
	if err != nil {
		return models.UploadTurn{}, fmt.Errorf("take a processing slot: %w", err)
	}
	return turn, nil
}

// ReleaseSlot runs after the upload ended (Record or Fail), which gave its
// slot back: it names the site's waiting uploads whose turn has come, for
// the workflow to wake.
func (a *Uploads) ReleaseSlot(ctx context.Context, u workflows.Upload) ([]string, error) {
	_, siteID, err := uploadAndSite(u)
	if err != nil {
		return nil, err
	}
	ids, err := models.NextWaitingUploads(ctx, a.DB, siteID, a.siteLimit())
	if err != nil {
		return nil, err
	}
	next := make([]string, len(ids))
	for i, id := range ids {
		next[i] = id.String()
	}
	return next, nil
}

// siteLimit is the processing slots of a site (PRESSROOM_SITE_UPLOAD_LIMIT).
func (a *Uploads) siteLimit() int { return max(a.SiteLimit, 1) }

// uploadAndSite parses the upload's ids; the API wrote them, so a bad one
// is a rejection, not something to retry.
func uploadAndSite(u workflows.Upload) (uuid.UUID, uuid.UUID, error) {
	uploadID, err := uuid.Parse(u.UploadID)
	if err != nil {
		return uuid.Nil, uuid.Nil, reject("the upload id %q is not valid", u.UploadID)
	}
	siteID, err := uuid.Parse(u.SiteID)
	if err != nil {
		return uuid.Nil, uuid.Nil, reject("the site id %q is not valid", u.SiteID)
	}
	return uploadID, siteID, nil
}
