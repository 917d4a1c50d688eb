package drafts

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
)

// Per-locale paths (docs/plans/locales.md §2.5). The page tree is shared;
// only slugs are localized. page_locale_paths holds, for every page and
// every locale of its site but the base, the page's resolved slug (its
// own in that locale, or its chain's first) and the path those make,
// derived as pages.path is; the base path stays pages.path. Its deferred
// exclusion constraint keeps one live page per path and locale.

// RefreshSiteLocalePaths re-derives every page's paths in every locale of
// the site but the base, and drops the rows of locales the site no longer
// has: PATCH /site runs it in its transaction when the locales or their
// fallbacks change, then localePathsFree. A site with one locale has no
// rows, so its PATCH costs one statement that finds no page to walk.
func RefreshSiteLocalePaths(ctx context.Context, tx bun.Tx, siteID uuid.UUID) error {
	if err := refreshLocalePaths(ctx, tx, siteID, nil); err != nil {
		return err
	}
	return localePathsFree(ctx, tx, siteID, nil)
}

// refreshLocalePaths re-derives page_locale_paths of the site's pages in
// every non-base locale from the rows as they are (slugs, translations,
// parents, published_at, and the site's locale chains), in one statement:
// a recursive walk from the roots, each locale's slug resolved along its
// chain (the base locale's slug is the column; the base answers last when
// the chain does not name it).
//
// roots: nil re-derives the whole site (a locale added, removed or
// re-chained). Otherwise the walk is the whole site too for now: part 3
// of the plan narrows it to the subtrees of roots (pages moved, created,
// or given a slug in a locale) for the engine's writes.
func refreshLocalePaths(ctx context.Context, tx bun.IDB, siteID uuid.UUID, roots []uuid.UUID) error {
	_ = roots
	_, err := tx.NewRaw(`
WITH RECURSIVE s AS (SELECT locales, base_locale AS base, locale_chains AS chains FROM sites WHERE id = ?0),
loc AS (
    SELECT l.tag, ARRAY(SELECT jsonb_array_elements_text(s.chains -> l.tag)) AS chain, s.base
    FROM s, unnest(s.locales) AS l(tag) WHERE l.tag <> s.base),
res AS (
    SELECT p.id, p.parent_id, p.published_at IS NOT NULL AS live, loc.tag,
           coalesce((SELECT CASE WHEN u.c = loc.base THEN p.slug ELSE p.translations ->> ('slug@' || u.c) END
                       FROM unnest(loc.chain) WITH ORDINALITY AS u(c, i)
                      WHERE CASE WHEN u.c = loc.base THEN p.slug IS NOT NULL
                                 ELSE p.translations ->> ('slug@' || u.c) IS NOT NULL END
                      ORDER BY u.i LIMIT 1), p.slug) AS slug
    FROM pages p CROSS JOIN loc WHERE p.site_id = ?0),
tree (id, tag, parent_id, slug, path, live, depth) AS (
    SELECT r.id, r.tag, r.parent_id, r.slug, '/' || r.slug, r.live, 1 FROM res r WHERE r.parent_id IS NULL
  UNION ALL
    SELECT r.id, r.tag, r.parent_id, r.slug, rtrim(t.path, '/') || '/' || r.slug, r.live, t.depth + 1
    FROM res r JOIN tree t ON r.parent_id = t.id AND r.tag = t.tag WHERE t.depth < 64),
gone AS (
    DELETE FROM page_locale_paths a WHERE a.site_id = ?0 AND NOT EXISTS (SELECT 1 FROM loc WHERE loc.tag = a.locale))
INSERT INTO page_locale_paths (site_id, page_id, locale, parent_id, slug, path, live)
SELECT ?0, id, tag, parent_id, slug, path, live FROM tree
ON CONFLICT (page_id, locale) DO UPDATE SET parent_id = EXCLUDED.parent_id, slug = EXCLUDED.slug, path = EXCLUDED.path, live = EXCLUDED.live
    WHERE (page_locale_paths.parent_id, page_locale_paths.slug, page_locale_paths.path, page_locale_paths.live)
          IS DISTINCT FROM (EXCLUDED.parent_id, EXCLUDED.slug, EXCLUDED.path, EXCLUDED.live)`, siteID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("derive page paths per locale: %w", err)
	}
	return nil
}

// localePathsFree is livePathsFree per locale: a PublishError PathTaken
// when a live page of pages (nil: any of the site's) has the path, in
// some locale, of another live page; meta names the locale, the path and
// both pages. Checked before commit, so the deferred exclusion constraint
// never answers a write with a 500.
func localePathsFree(ctx context.Context, tx bun.IDB, siteID uuid.UUID, pages []uuid.UUID) error {
	var clash []struct {
		ID     uuid.UUID `bun:"page_id"`
		Locale string    `bun:"locale"`
		Path   string    `bun:"path"`
		Other  uuid.UUID `bun:"other"`
	}
	q := tx.NewSelect().TableExpr("page_locale_paths AS a").
		ColumnExpr("a.page_id, a.locale, a.path, b.page_id AS other").
		Join("JOIN page_locale_paths AS b ON b.site_id = a.site_id AND b.locale = a.locale AND b.path = a.path AND b.page_id <> a.page_id AND b.live").
		Where("a.site_id = ? AND a.live", siteID).OrderExpr("a.locale, a.path, a.page_id").Limit(1)
	if pages != nil {
		q = q.Where("a.page_id IN (?)", bun.In(pages))
	}
	if err := q.Scan(ctx, &clash); err != nil && !models.IsNoRows(err) {
		return fmt.Errorf("check live page paths per locale: %w", err)
	}
	if len(clash) == 0 {
		return nil
	}
	c := clash[0]
	return &PublishError{Code: PathTaken,
		Message: fmt.Sprintf("page %s would be live at %s in %s, the path of live page %s", c.ID, c.Path, c.Locale, c.Other),
		Meta: map[string]any{"locale": c.Locale, "path": c.Path, "page": map[string]any{"type": "pages", "id": c.Other.String()},
			"published-page": map[string]any{"type": "pages", "id": c.ID.String()}}}
}

// pageAtLocale is pageAt in locale tag: the page other than self whose
// resolved drafted slug in tag, under parent, is slug (nil when the place
// is free). Part 3 of the plan builds it (candidates from
// page_locale_paths_sibling_idx and the drafts' slug@tag, resolved in Go);
// until then no write puts a slug in a locale, so the base check
// (pageAt) is the whole check.
//
// Its parameters: ctx, db (the caller's transaction), siteID, self,
// parent, tag, slug.
func pageAtLocale(_ context.Context, _ bun.IDB, _ uuid.UUID, _, _ *uuid.UUID, _, _ string) (*uuid.UUID, error) {
	return nil, nil
}
