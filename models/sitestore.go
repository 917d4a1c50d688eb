package models

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/webhooks"
)

// FindSite loads the site with its version and live theme, FOR UPDATE when
// lock is set.
func FindSite(ctx context.Context, db bun.IDB, siteID uuid.UUID, lock bool) (*ThemedSite, error) {
	s := new(ThemedSite)
	sel := db.NewSelect().Model(s).Where("id = ?", siteID)
	if lock {
		sel = sel.For("UPDATE")
	}
	return s, sel.Scan(ctx)
}

// SiteChange is a change of a site; nil members stay as they are.
type SiteChange struct {
	Title, Slug *string
	// ReleaseApprovals, when set, is the site's release-approvals (0–5).
	ReleaseApprovals *int
	// Theme, when set, is the theme to publish (an unknown one is
	// RefNotFound at the relationship theme).
	Theme *uuid.UUID
}

// UpdateSite applies change in the caller's transaction with the site row
// locked: check judges the caller's preconditions against the locked
// version, and the write bumps it, so two editors never both land.
//
// Publishing a theme sets its published_at to the database's clock, but
// always later than any published_at of the site's themes, so "the theme
// with the greatest published_at" and sites.theme_id never disagree, even
// across API replicas with skewed clocks. Naming the theme that is already
// live changes nothing.
func UpdateSite(ctx context.Context, tx bun.Tx, siteID uuid.UUID, change SiteChange, check func(*ThemedSite) error) (*ThemedSite, error) {
	s, err := FindSite(ctx, tx, siteID, true)
	if err != nil {
		return nil, err
	}
	if err := check(s); err != nil {
		return nil, err
	}
	var cols []string
	if change.Title != nil {
		s.Title = *change.Title
		cols = append(cols, "title")
	}
	if change.Slug != nil {
		s.SubdomainSlug = *change.Slug
		cols = append(cols, "subdomain_slug")
	}
	if change.ReleaseApprovals != nil {
		s.ReleaseApprovals = *change.ReleaseApprovals
		cols = append(cols, "release_approvals")
	}
	if change.Theme != nil && (s.ThemeID == nil || *s.ThemeID != *change.Theme) {
		res, err := tx.NewRaw(`UPDATE themes SET
				published_at = GREATEST(clock_timestamp(), (SELECT max(published_at) FROM themes WHERE site_id = ?) + interval '1 millisecond'),
				updated_at = clock_timestamp(), version = version + 1
				WHERE id = ? AND site_id = ?`, siteID, *change.Theme, siteID).Exec(ctx)
		if err != nil {
			return nil, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, err
		} else if n == 0 {
			return nil, RefNotFound("theme", "theme")
		}
		s.ThemeID = change.Theme
		cols = append(cols, "theme_id")
		// The webhook event commits with the publication (docs/webhooks.md).
		if err := RecordEvent(ctx, tx, Event{SiteID: siteID, Type: webhooks.ThemePublished, SubjectType: "themes", SubjectID: *change.Theme}); err != nil {
			return nil, err
		}
	}
	if len(cols) == 0 {
		return s, nil
	}
	s.UpdatedAt = time.Now().UTC()
	err = tx.NewUpdate().Model(s).Column(append(cols, "updated_at")...).Set("version = version + 1").
		Where("id = ? AND version = ?", s.ID, s.Version).Returning("*").Scan(ctx)
	if IsConflict(err) {
		return nil, Invalid("subdomain-slug", "taken", "That subdomain-slug is taken.")
	}
	return s, err
}
