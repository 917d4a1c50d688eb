package models

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

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
	// Locales, Fallbacks and RequireDefault, when set, are the site's
	// locale settings (docs/locales.md), already well-formed: canonical
	// tags, no duplicates, acyclic fallbacks (CheckFallbacks). Force strips
	// the content of locales Locales removes instead of refusing.
	Locales        *[]string
	Fallbacks      *map[string]string
	RequireDefault *bool
	Force          bool
}

// LocalesChanged tells whether the change moves the site's locales or
// their chains (the caller then re-derives the per-locale paths in the
// same transaction: drafts.RefreshSiteLocalePaths).
func (c SiteChange) LocalesChanged() bool { return c.Locales != nil || c.Fallbacks != nil }

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
	if change.RequireDefault != nil {
		s.RequireDefaultLocale = *change.RequireDefault
		cols = append(cols, "require_default_locale")
	}
	if change.LocalesChanged() {
		if err := changeLocales(ctx, tx, s, change); err != nil {
			return nil, err
		}
		cols = append(cols, "locales", "base_locale", "locale_fallbacks", "locale_chains")
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

// changeLocales applies change's locales and fallbacks to s (locked):
// while the site has one locale and is given one, that one becomes the
// base too (a relabel: nothing moves). Otherwise the base must stay listed
// (409 base_locale), and a removed locale with content (a record's value
// in it, or a draft of it) is 409 locale_in_use, one error per locale,
// unless change.Force: then its values and drafts are deleted here
// (versions keep their history). The chains are derived anew.
func changeLocales(ctx context.Context, tx bun.Tx, s *ThemedSite, change SiteChange) error {
	locales, fallbacks := s.Locales, s.LocaleFallbacks
	if change.Locales != nil {
		locales = *change.Locales
	}
	if change.Fallbacks != nil {
		fallbacks = *change.Fallbacks
	}
	if len(s.Locales) == 1 && len(locales) == 1 {
		s.BaseLocale = locales[0]
	} else if !slices.Contains(locales, s.BaseLocale) {
		return &Error{Kind: ErrConflict, Code: "base_locale", At: Attr("locales"), Meta: map[string]any{"locale": s.BaseLocale},
			Detail: fmt.Sprintf("%s is the base locale, whose values are the records' own: it cannot be removed while the site has other locales.", s.BaseLocale)}
	}
	var removed []string
	for _, l := range s.Locales {
		if !slices.Contains(locales, l) && l != s.BaseLocale {
			removed = append(removed, l)
		}
	}
	if err := removeLocales(ctx, tx, s.ID, removed, change.Force); err != nil {
		return err
	}
	s.Locales, s.LocaleFallbacks, s.LocaleChains = locales, fallbacks, ChainsOf(locales, fallbacks)
	return nil
}

// localizedColumns are the columns with a value per locale, by table
// (drafts.Field.Localized declares them; a test checks the two agree).
var localizedColumns = map[string][]string{
	"pages":          {"slug", "title", "description", "keywords"},
	"contents":       {"title"},
	"content_blocks": {"body"},
}

// LocalizedColumns are the localized columns of table (a copy).
func LocalizedColumns(table string) []string { return slices.Clone(localizedColumns[table]) }

// removeLocales refuses (force false) or strips (force true) the content
// of each removed locale of the site: records' translations keys
// ("title@de") and its drafts, and its per-locale paths either way.
func removeLocales(ctx context.Context, tx bun.Tx, siteID uuid.UUID, removed []string, force bool) error {
	var inUse Errors
	for _, tag := range removed {
		records := 0
		for _, table := range []string{"pages", "contents", "content_blocks"} {
			keys := translationKeys(table, tag)
			if force {
				if _, err := tx.NewRaw("UPDATE ? SET translations = translations - ?::text[] WHERE site_id = ? AND jsonb_exists_any(translations, ?::text[])",
					bun.Ident(table), pgdialect.Array(keys), siteID, pgdialect.Array(keys)).Exec(ctx); err != nil {
					return fmt.Errorf("strip locale %s from %s: %w", tag, table, err)
				}
				continue
			}
			n, err := tx.NewSelect().TableExpr("? AS t", bun.Ident(table)).
				Where("t.site_id = ? AND jsonb_exists_any(t.translations, ?::text[])", siteID, pgdialect.Array(keys)).Count(ctx)
			if err != nil {
				return fmt.Errorf("content of locale %s in %s: %w", tag, table, err)
			}
			records += int(n)
		}
		var drafts int
		if force {
			if _, err := tx.NewRaw("DELETE FROM drafts WHERE site_id = ? AND locale = ?", siteID, tag).Exec(ctx); err != nil {
				return fmt.Errorf("drop drafts of locale %s: %w", tag, err)
			}
		} else {
			n, err := tx.NewSelect().TableExpr("drafts AS d").Where("d.site_id = ? AND d.locale = ?", siteID, tag).Count(ctx)
			if err != nil {
				return fmt.Errorf("drafts of locale %s: %w", tag, err)
			}
			drafts = int(n)
		}
		if records+drafts > 0 {
			inUse = append(inUse, &Error{Kind: ErrConflict, Code: "locale_in_use", At: Attr("locales"),
				Meta:   map[string]any{"locale": tag, "records": records, "drafts": drafts},
				Detail: fmt.Sprintf("Locale %s has content (%d records, %d drafts): removing it would delete that content. Send meta.force true to remove it anyway.", tag, records, drafts)})
		}
	}
	if len(inUse) > 0 {
		return inUse
	}
	return nil
}

// translationKeys are the flat keys of table's localized columns in tag.
func translationKeys(table, tag string) []string {
	cols := localizedColumns[table]
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c + "@" + tag
	}
	return out
}
