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
// it (nil: any). A refusal is a domain error at the draft's place in the
// request: item i of the relationship drafts.
func Reserve(ctx context.Context, tx bun.Tx, rev *Revision, want map[uuid.UUID]*int) error {
	ds, err := Drafts(ctx, tx, rev.SiteID, rev.DraftIDs, true)
	if err != nil {
		return err
	}
	if refusals := listedRefusals(rev.DraftIDs, ds, want); len(refusals) > 0 {
		return refusals[0]
	}
	held := rev.DraftIDs
	if rev.Status == Scheduled || severalLocales(ctx) {
		// A site with several locales may require a title in its default
		// locale: judged over the closure, as Plan and Publish judge it
		// (a site with one locale has its base title, which every create
		// requires, so it costs nothing there).
		all, err := Closure(ctx, tx, rev.SiteID, ds, Publication, true)
		if err != nil {
			return err
		}
		refusal, err := defaultLocaleMissing(ctx, tx, rev.SiteID, all)
		if err != nil {
			return err
		}
		if refusal != nil {
			return DefaultLocaleError(refusal)
		}
		if rev.Status == Scheduled {
			held = draftIDs(all)
			if refusals := heldDependencies(all, rev.ID, rev.DraftIDs); len(refusals) > 0 {
				return refusals[0]
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

// listedRefusals are the reasons the drafts ids (as a request lists them,
// found among ds) cannot be published, one per draft at most, in request
// order: not a draft of the site (404 at item i's id of the relationship
// drafts), held by a revision (409, at the item), or not at the version
// want gives it (412, at the item's meta.version). Reserve answers the first;
// Engine.Plan answers a 404 and lists the rest as its conflicts.
func listedRefusals(ids []uuid.UUID, ds []*Draft, want map[uuid.UUID]*int) models.Errors {
	found := map[uuid.UUID]*Draft{}
	for _, d := range ds {
		found[d.ID] = d
	}
	var out models.Errors
	for i, id := range ids {
		d := found[id]
		switch {
		case d == nil:
			out = append(out, &models.Error{Kind: models.ErrNotFound, At: models.RelItem("drafts", i, models.PartID), Detail: "No draft with that id (reverted or already published?)."})
		case d.RevisionID != nil:
			out = append(out, &models.Error{Kind: models.ErrInFlight, At: models.RelItem("drafts", i, models.PartData), Meta: itemMeta(d.ItemType, d.ItemID),
				Detail: fmt.Sprintf("Draft %s is already being published by revision %s.", id, d.RevisionID)})
		case want[id] != nil && *want[id] != d.Version:
			out = append(out, &models.Error{Kind: models.ErrStaleVersion, At: models.RelItem("drafts", i, models.PartVersion), Version: d.Version, Meta: itemMeta(d.ItemType, d.ItemID)})
		}
	}
	return out
}

// heldDependencies are the drafts of a publication closure, other than the
// listed ones, that a revision other than revID holds: a revision
// publishes only drafts it holds or no one does. Reserve refuses a
// scheduled revision for the first (409); Publish fails on it (heldElsewhere);
// Engine.Plan lists them all as conflicts.
func heldDependencies(closure []*Draft, revID uuid.UUID, listed []uuid.UUID) models.Errors {
	skip := map[uuid.UUID]bool{}
	for _, id := range listed {
		skip[id] = true
	}
	var out models.Errors
	for _, d := range heldElsewhere(closure, revID) {
		if !skip[d.ID] {
			out = append(out, &models.Error{Kind: models.ErrInFlight, At: models.Rel("drafts", models.PartMember), Meta: itemMeta(d.ItemType, d.ItemID),
				Detail: fmt.Sprintf("Draft %s, a dependency of the listed drafts, is held by revision %s.", d.ID, d.RevisionID)})
		}
	}
	return out
}

// heldElsewhere are the drafts of ds held by a revision other than revID.
func heldElsewhere(ds []*Draft, revID uuid.UUID) []*Draft {
	var out []*Draft
	for _, d := range ds {
		if d.RevisionID != nil && *d.RevisionID != revID {
			out = append(out, d)
		}
	}
	return out
}

// itemMeta names the record a refusal is about (meta of its error object,
// item of a plan's conflict).
func itemMeta(typ string, id uuid.UUID) map[string]any {
	return map[string]any{"type": typ, "id": id.String()}
}
