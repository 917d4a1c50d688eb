package drafts

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/webhooks"
)

// Reserve records rev (status publishing, or scheduled with a PublishAt)
// and reserves its drafts (rev.DraftIDs) for it, in the caller's
// transaction, beside Publish, MarkFailed and Cancel that later apply or
// release them. A scheduled revision also holds the publication closure
// of its drafts as it is now, so no other revision can take a dependency
// it will need (Publish computes the closure again when it fires). Each draft must be a draft
// of rev's site, held by no other revision, and at the version want gives
// it (nil: any). A refusal is a domain error pointed at the draft's place
// in the request, /data/relationships/drafts/data/<i>.
func Reserve(ctx context.Context, tx bun.Tx, rev *Revision, want map[uuid.UUID]*int) error {
	ds, err := Drafts(ctx, tx, rev.SiteID, rev.DraftIDs, true)
	if err != nil {
		return err
	}
	found := map[uuid.UUID]*Draft{}
	for _, d := range ds {
		found[d.ID] = d
	}
	for i, id := range rev.DraftIDs {
		d := found[id]
		ptr := fmt.Sprintf("/data/relationships/drafts/data/%d", i)
		switch {
		case d == nil:
			return &models.Error{Kind: models.ErrNotFound, Pointer: ptr + "/id", Detail: "No draft with that id (reverted or already published?)."}
		case d.RevisionID != nil:
			return &models.Error{Kind: models.ErrInFlight, Pointer: ptr, Detail: fmt.Sprintf("Draft %s is already being published by revision %s.", id, d.RevisionID)}
		case want[id] != nil && *want[id] != d.Version:
			return &models.Error{Kind: models.ErrStaleVersion, Pointer: ptr + "/meta/version", Version: d.Version}
		}
	}
	held := rev.DraftIDs
	if rev.Status == Scheduled {
		all, err := Closure(ctx, tx, rev.SiteID, ds, Publication, true)
		if err != nil {
			return err
		}
		held = draftIDs(all)
		for _, d := range all {
			if d.RevisionID != nil {
				return &models.Error{Kind: models.ErrInFlight, Pointer: "/data/relationships/drafts",
					Detail: fmt.Sprintf("Draft %s, a dependency of the listed drafts, is held by revision %s.", d.ID, d.RevisionID)}
			}
		}
	}
	if _, err := tx.NewInsert().Model(rev).Exec(ctx); err != nil {
		return fmt.Errorf("insert revision: %w", err)
	}
	if _, err := tx.NewUpdate().Model((*Draft)(nil)).Set("revision_id = ?", rev.ID).
		Where("site_id = ? AND id IN (?)", rev.SiteID, bun.In(held)).Exec(ctx); err != nil {
		return fmt.Errorf("reserve drafts: %w", err)
	}
	if rev.Status == Scheduled {
		// The webhook event commits with the scheduling (docs/webhooks.md).
		return models.RecordEvent(ctx, tx, models.Event{SiteID: rev.SiteID, Type: webhooks.RevisionScheduled, SubjectType: "revisions", SubjectID: rev.ID})
	}
	return nil
}
