package drafts

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
)

// Reserve records rev (status publishing) and reserves its drafts
// (rev.DraftIDs) for it, in the caller's transaction, beside Publish and
// MarkFailed that later apply or release them. Each draft must be a draft
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
	if _, err := tx.NewInsert().Model(rev).Exec(ctx); err != nil {
		return fmt.Errorf("insert revision: %w", err)
	}
	if _, err := tx.NewUpdate().Model((*Draft)(nil)).Set("revision_id = ?", rev.ID).
		Where("site_id = ? AND id IN (?)", rev.SiteID, bun.In(rev.DraftIDs)).Exec(ctx); err != nil {
		return fmt.Errorf("reserve drafts: %w", err)
	}
	return nil
}
