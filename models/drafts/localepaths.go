package drafts

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

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
// a recursive walk, each locale's slug resolved along its chain (the base
// locale's slug is the column; the base answers last when the chain does
// not name it).
//
// roots: nil re-derives the whole site from its root pages and drops the
// rows of locales the site no longer has (a locale added, removed or
// re-chained: PATCH /site). Otherwise only the subtrees of roots (pages
// created, moved, or given a slug in a locale) are walked, each root from
// its parent's row in the same locale: their size is the cost. On a site
// with one locale the statement finds no locale and writes nothing.
func refreshLocalePaths(ctx context.Context, tx bun.IDB, siteID uuid.UUID, roots []uuid.UUID) error {
	if roots == nil {
		return refreshSiteLocalePaths(ctx, tx, siteID)
	}
	if len(roots) == 0 {
		return nil
	}
	_, err := tx.NewRaw(`
WITH RECURSIVE `+localeChainsCTE+`,
tree (id, tag, parent_id, slug, path, live, depth) AS (
    SELECT p.id, loc.tag, p.parent_id, `+resolvedSlugSQL("p")+`,
           CASE WHEN p.parent_id IS NULL THEN '' ELSE rtrim(coalesce(pp.path, pq.path), '/') END || '/' || `+resolvedSlugSQL("p")+`,
           p.published_at IS NOT NULL, 1
    FROM pages p CROSS JOIN loc
    LEFT JOIN page_locale_paths pp ON pp.page_id = p.parent_id AND pp.locale = loc.tag
    LEFT JOIN pages pq ON pq.id = p.parent_id
    WHERE p.site_id = ?0 AND p.id IN (?1)
  UNION ALL
    SELECT c.id, t.tag, c.parent_id, `+resolvedSlugSQL("c")+`, rtrim(t.path, '/') || '/' || `+resolvedSlugSQL("c")+`,
           c.published_at IS NOT NULL, t.depth + 1
    FROM tree t JOIN loc ON loc.tag = t.tag JOIN pages c ON c.parent_id = t.id AND c.site_id = ?0
    WHERE t.depth < 64
),
-- A root under another root is reached twice: the longer walk starts from
-- the topmost one and is the right one (as refreshPaths).
best AS (SELECT DISTINCT ON (id, tag) * FROM tree ORDER BY id, tag, depth DESC)
INSERT INTO page_locale_paths (site_id, page_id, locale, parent_id, slug, path, live)
SELECT ?0, id, tag, parent_id, slug, path, live FROM best
`+upsertLocalePath, siteID, bun.In(roots)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("derive page paths per locale: %w", err)
	}
	return nil
}

// localeChainsCTE defines, for the site ?0, loc (tag, chain, base): each
// locale but the base with its chain.
const localeChainsCTE = `s AS (SELECT locales, base_locale AS base, locale_chains AS chains FROM sites WHERE id = ?0),
loc AS (
    SELECT l.tag, ARRAY(SELECT jsonb_array_elements_text(s.chains -> l.tag)) AS chain, s.base
    FROM s, unnest(s.locales) AS l(tag) WHERE l.tag <> s.base)`

// upsertLocalePath ends the statements that write page_locale_paths: a
// row that is already right is not written again.
const upsertLocalePath = `ON CONFLICT (page_id, locale) DO UPDATE SET parent_id = EXCLUDED.parent_id, slug = EXCLUDED.slug, path = EXCLUDED.path, live = EXCLUDED.live
    WHERE (page_locale_paths.parent_id, page_locale_paths.slug, page_locale_paths.path, page_locale_paths.live)
          IS DISTINCT FROM (EXCLUDED.parent_id, EXCLUDED.slug, EXCLUDED.path, EXCLUDED.live)`

// resolvedSlugSQL is page p's slug in locale loc.tag: the first locale of
// loc.chain with a slug of its own, the base slug (the column) last.
func resolvedSlugSQL(p string) string {
	return `coalesce((SELECT CASE WHEN u.c = loc.base THEN ` + p + `.slug ELSE ` + p + `.translations ->> ('slug@' || u.c) END
                       FROM unnest(loc.chain) WITH ORDINALITY AS u(c, i)
                      WHERE CASE WHEN u.c = loc.base THEN ` + p + `.slug IS NOT NULL
                                 ELSE ` + p + `.translations ->> ('slug@' || u.c) IS NOT NULL END
                      ORDER BY u.i LIMIT 1), ` + p + `.slug)`
}

// refreshSiteLocalePaths is refreshLocalePaths of the whole site.
func refreshSiteLocalePaths(ctx context.Context, tx bun.IDB, siteID uuid.UUID) error {
	_, err := tx.NewRaw(`
WITH RECURSIVE `+localeChainsCTE+`,
res AS (
    SELECT p.id, p.parent_id, p.published_at IS NOT NULL AS live, loc.tag, `+resolvedSlugSQL("p")+` AS slug
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
`+upsertLocalePath, siteID).Exec(ctx)
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

// siteLocales are a site's locales as a path writer reads them, under
// lockSiteLocales: the list, the base, and each locale's chain.
type siteLocales struct {
	Locales []string            `bun:"locales,array"`
	Base    string              `bun:"base_locale"`
	Chains  map[string][]string `bun:"locale_chains,type:jsonb"`
}

// locale is l's Locale of tag, for Pick.
func (l siteLocales) locale(tag string) Locale {
	return Locale{Tag: tag, Base: l.Base, Chain: l.Chains[tag]}
}

// lockSiteLocales reads the site's locales FOR SHARE: PATCH /site, which
// re-derives every path when they change, locks the row FOR UPDATE, so a
// locale cannot be added or re-chained while a write derives a path (its
// re-derivation would miss the write's page, or the write its locale).
func lockSiteLocales(ctx context.Context, db bun.IDB, siteID uuid.UUID) (siteLocales, error) {
	var l siteLocales
	err := db.NewRaw("SELECT locales, base_locale, locale_chains FROM sites WHERE id = ? FOR SHARE", siteID).Scan(ctx, &l)
	if err != nil {
		return l, fmt.Errorf("lock the site's locales: %w", err)
	}
	return l, nil
}

// slugField is pages' slug field (localized).
var slugField = func() Field {
	f, _ := Pages.fieldByColumn("slug")
	return f
}()

// slugIn is a flat page row's slug in locale tag of the site l: its own,
// or its chain's first, or the base slug.
func slugIn(l siteLocales, r Row, tag string) string {
	v, _ := l.locale(tag).Pick(r, slugField)
	return str(v)
}

// placeCheck is one place a write asks for: the slug under the written
// parent in locale tag ("": the base locale, pages.slug and pageAt).
type placeCheck struct {
	tag, slug string
}

// placesToCheck are the places a page's write takes, in the base locale
// and in every other locale of the site whose resolved slug the write
// changes (all of them when the parent changes). prev nil is a create. A
// write that changes no slug in any locale and not the parent checks
// nothing and reads nothing; otherwise the site's locales are read (and
// share-locked: lockSiteLocales).
func placesToCheck(ctx context.Context, db bun.IDB, siteID uuid.UUID, state, prev Row) ([]placeCheck, siteLocales, error) {
	moved := prev == nil || str(prev["parent_id"]) != str(state["parent_id"])
	if !moved && !slugsChanged(state, prev) {
		return nil, siteLocales{}, nil
	}
	var out []placeCheck
	if moved || str(prev["slug"]) != str(state["slug"]) {
		out = append(out, placeCheck{slug: str(state["slug"])})
	}
	l, err := lockSiteLocales(ctx, db, siteID)
	if err != nil {
		return nil, l, err
	}
	for _, tag := range l.Locales {
		if tag == l.Base {
			continue
		}
		slug := slugIn(l, state, tag)
		if moved || slug != slugIn(l, prev, tag) {
			out = append(out, placeCheck{tag: tag, slug: slug})
		}
	}
	return out, l, nil
}

// changesLocaleSlug tells whether a change writes a page's slug in a
// locale other than the base ("slug@de"), or its translations whole.
func changesLocaleSlug(c Change) bool {
	for k := range c {
		if col, tag := SplitKey(k); col == "slug" && tag != "" || k == translationsColumn {
			return true
		}
	}
	return false
}

// slugsChanged tells whether a slug of any locale differs between prev
// and state (flat rows: "slug", "slug@de", ...).
func slugsChanged(state, prev Row) bool {
	for _, r := range []Row{state, prev} {
		for k := range r {
			if c, _ := SplitKey(k); c == "slug" && str(state[k]) != str(prev[k]) {
				return true
			}
		}
	}
	return false
}

// lockSlugs takes the per-site, per-slug path lock (pageAt's) of every
// slug the checks ask for, in one order for every writer: two writers
// that need the same two slugs wait for each other instead of
// deadlocking. pageAt's own lock is then taken again, which does not wait.
func lockSlugs(ctx context.Context, db bun.IDB, siteID uuid.UUID, checks []placeCheck) error {
	var slugs []string
	for _, c := range checks {
		slugs = append(slugs, c.slug)
	}
	slices.Sort(slugs)
	for _, slug := range slices.Compact(slugs) {
		if _, err := db.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('pressroom.page_paths:' || ?::text || '/' || ?, 0))", siteID, slug); err != nil {
			return fmt.Errorf("lock page paths: %w", err)
		}
	}
	return nil
}

// pageAtLocale is pageAt in locale tag of the site l: another page than
// self (nil on a create) whose drafted slug in tag, resolved along tag's
// chain, is slug, under the drafted parent (nil: at the root); nil when
// the place is free. The candidates come from indexes: page_locale_paths
// by sibling and resolved slug (the rows' own state: live pages, and
// unpublished ones as written), shared drafts that move a page under
// parent or give it slug as its base slug, and locale drafts of tag's
// chain that give it slug. Go then resolves each candidate as drafted
// (View.Drafted with every locale's draft) and keeps those really there;
// one drafted for deletion does not count, as in pageAt. The caller holds
// the slug's lock (lockSlugs).
func pageAtLocale(ctx context.Context, db bun.IDB, siteID uuid.UUID, self, parent *uuid.UUID, l siteLocales, tag, slug string) (*uuid.UUID, error) {
	except := uuid.Nil
	if self != nil {
		except = *self
	}
	liveParent, draftedParent := "a.parent_id IS NULL", "d.drafted_parent IS NULL"
	args := []any{siteID, tag, slug, except, pgdialect.Array(l.Chains[tag])}
	if parent != nil {
		liveParent, draftedParent = "a.parent_id = ?5", "d.drafted_parent = ?5"
		args = append(args, *parent)
	}
	var ids []uuid.UUID
	err := db.NewRaw(`SELECT a.page_id FROM page_locale_paths a
  WHERE a.site_id = ?0 AND a.locale = ?1 AND `+liveParent+` AND a.slug = ?2 AND a.page_id <> ?3
UNION
SELECT d.item_id FROM drafts d JOIN pages p ON p.id = d.item_id
  WHERE d.site_id = ?0 AND d.item_type = 'pages' AND d.locale = '' AND d.event <> 'delete' AND d.item_id <> ?3
    AND `+draftedParent+` AND (d.drafted ->> 'slug' = ?2 OR p.parent_id IS DISTINCT FROM d.drafted_parent)
UNION
SELECT d.item_id FROM drafts d
  WHERE d.site_id = ?0 AND d.item_type = 'pages' AND d.locale = ANY(?4::text[]) AND d.item_id <> ?3
    AND d.drafted ->> ('slug@' || d.locale) = ?2
LIMIT 1000`, args...).Scan(ctx, &ids)
	if err != nil && !models.IsNoRows(err) {
		return nil, fmt.Errorf("find a page at the drafted path in %s: %w", tag, err)
	}
	views, err := pageViews(ctx, db, siteID, ids)
	if err != nil {
		return nil, err
	}
	want := ""
	if parent != nil {
		want = parent.String()
	}
	for _, v := range views {
		if v.Draft != nil && v.Draft.Event == EventDelete {
			continue
		}
		r := v.Drafted()
		if str(r["parent_id"]) == want && slugIn(l, r, tag) == slug {
			id := v.Row.ID()
			return &id, nil
		}
	}
	return nil, nil
}

// pageViews loads pages of the site by id with their drafts of every
// locale (the shared one as View.Draft), ordered by id.
func pageViews(ctx context.Context, db bun.IDB, siteID uuid.UUID, ids []uuid.UUID) ([]*View, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := loadRows(ctx, db, Pages, siteID, ids, false)
	if err != nil {
		return nil, err
	}
	var ds []*Draft
	if err := db.NewSelect().Model(&ds).Where("site_id = ? AND item_type = 'pages' AND item_id IN (?) /* every locale */", siteID, bun.In(ids)).
		Scan(ctx); err != nil {
		return nil, fmt.Errorf("load drafts of pages: %w", err)
	}
	byID := make(map[uuid.UUID]*View, len(rows))
	for id, r := range rows {
		byID[id] = &View{Kind: Pages, Row: r}
	}
	for _, d := range ds {
		v := byID[d.ItemID]
		switch {
		case v == nil:
		case d.Locale == "":
			v.Draft = d
		default:
			if v.LocaleDrafts == nil {
				v.LocaleDrafts = map[string]*Draft{}
			}
			v.LocaleDrafts[d.Locale] = d
		}
	}
	out := make([]*View, 0, len(byID))
	for _, v := range byID {
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b *View) int { return strings.Compare(a.Row.ID().String(), b.Row.ID().String()) })
	return out, nil
}

// --- reads ---------------------------------------------------------------------

type siteLocalesKey struct{}

// WithSiteLocales returns ctx carrying the locales of the request's site
// when it has several (api/locale.go): what a page's meta.alternates
// lists, and the chains its drafted paths are resolved with.
func WithSiteLocales(ctx context.Context, s models.SiteLocales) context.Context {
	return context.WithValue(ctx, siteLocalesKey{}, s)
}

// SiteLocalesOf is the site's locales ctx carries (none: the zero value,
// for a site with one locale).
func SiteLocalesOf(ctx context.Context) models.SiteLocales {
	s, _ := ctx.Value(siteLocalesKey{}).(models.SiteLocales)
	return s
}

// LocalePaths are the stored paths of pages (of the site) in every
// locale but the base (whose path is pages.path): page -> locale -> path,
// one index lookup per page. Stored paths are the rows' own: live pages'
// live paths, unpublished pages' as written.
func LocalePaths(ctx context.Context, db bun.IDB, siteID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]map[string]string, error) {
	out := make(map[uuid.UUID]map[string]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		Page   uuid.UUID `bun:"page_id"`
		Locale string    `bun:"locale"`
		Path   string    `bun:"path"`
	}
	if err := db.NewSelect().TableExpr("page_locale_paths").Column("page_id", "locale", "path").
		Where("site_id = ? AND page_id IN (?)", siteID, bun.In(ids)).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("page paths per locale: %w", err)
	}
	for _, r := range rows {
		if out[r.Page] == nil {
			out[r.Page] = map[string]string{}
		}
		out[r.Page][r.Locale] = r.Path
	}
	return out, nil
}

// DraftedLocalePaths are the paths pages would have in every locale of
// the site (the base's included) under their drafted parents and slugs:
// page -> locale -> path, for a batch in one statement. The walk
// (draftedSlugWalk) is draftedPathWalk's, answering each ancestor's slug
// material (its drafted base slug, its translations and its locale
// drafts' slugs) instead of one path, and Go resolves every locale's
// slugs along its chain (slugIn), so no locale costs a query of its own.
// Under a release's preview only the set's drafts count. A page whose
// drafted parents loop is left out.
func (e *Engine) DraftedLocalePaths(ctx context.Context, db bun.IDB, siteID uuid.UUID, site models.SiteLocales, ids []uuid.UUID) (map[uuid.UUID]map[string]string, error) {
	out := make(map[uuid.UUID]map[string]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	dCond, pdCond, xCond := "", "", ""
	args := []any{siteID, bun.In(ids)}
	if p := previewOf(ctx); p != nil {
		dCond, pdCond, xCond = " AND "+inSet("d", "?2", "?3"), " AND "+inSet("pd", "?2", "?3"), " AND "+inSet("x", "?2", "?3")
		args = append(args, p.setArgs()...)
	}
	rows, err := db.QueryContext(ctx, `SELECT p.id, (WITH RECURSIVE `+draftedSlugWalk(pdCond, xCond)+` SELECT mat FROM up WHERE cur IS NULL LIMIT 1)
FROM pages p LEFT JOIN drafts d ON d.item_type = 'pages' AND d.item_id = p.id AND d.locale = ''`+dCond+`
WHERE p.site_id = ?0 AND p.id IN (?1)`, args...)
	if err != nil {
		return nil, fmt.Errorf("drafted page paths per locale: %w", err)
	}
	defer rows.Close()
	l := siteLocales{Locales: site.Locales, Base: site.Base, Chains: site.Chains}
	for rows.Next() {
		var id uuid.UUID
		var mat []byte // nil: the drafted parents loop
		if err := rows.Scan(&id, &mat); err != nil {
			return nil, fmt.Errorf("drafted page paths per locale: %w", err)
		}
		if mat == nil {
			continue
		}
		var steps []Row
		if err := json.Unmarshal(mat, &steps); err != nil {
			return nil, fmt.Errorf("drafted page paths per locale: %w", err)
		}
		out[id] = l.paths(steps)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("drafted page paths per locale: %w", err)
	}
	return out, nil
}

// paths are the path in each of l's locales of the page whose ancestors'
// slug material, root first, is steps: each slug resolved in the locale,
// joined as draftedPathWalk joins them (an empty slug, the home page's,
// adds nothing; nothing at all is "/").
func (l siteLocales) paths(steps []Row) map[string]string {
	out := make(map[string]string, len(l.Locales))
	for _, tag := range l.Locales {
		var b strings.Builder
		for _, r := range steps {
			if s := slugIn(l, r, tag); s != "" {
				b.WriteString("/" + s)
			}
		}
		out[tag] = cmp.Or(b.String(), "/")
	}
	return out
}

// draftedSlugWalk is the recursive CTE up (cur, mat, depth), correlated to
// the outer page p and its shared draft d, that walks p's drafted
// ancestors up to a root as draftedPathWalk does, gathering mat: a jsonb
// array, root first, of each page's slug material as a flat row ({"slug":
// drafted base slug, "slug@de": ..., ...}: its translations, with its
// locale drafts' values over them). pdCond and xCond narrow the
// ancestors' shared and locale drafts (a preview's set).
func draftedSlugWalk(pdCond, xCond string) string {
	mat := func(p, d string) string {
		return `jsonb_build_object('slug', coalesce(` + d + `.drafted ->> 'slug', ` + p + `.slug)) || ` + p + `.translations
           || coalesce((SELECT jsonb_object_agg(e.key, e.value) FROM drafts x, jsonb_each(x.drafted) AS e
                         WHERE x.locale <> '' AND x.item_type = 'pages' AND x.item_id = ` + p + `.id AND e.key LIKE 'slug@%'` + xCond + `), '{}')`
	}
	return `up (cur, mat, depth) AS (
    SELECT CASE WHEN d.id IS NULL THEN p.parent_id ELSE (d.drafted ->> 'parent_id')::uuid END,
           jsonb_build_array(` + mat("p", "d") + `), 1
  UNION ALL
    SELECT CASE WHEN pd.id IS NULL THEN a.parent_id ELSE (pd.drafted ->> 'parent_id')::uuid END,
           jsonb_build_array(` + mat("a", "pd") + `) || up.mat, up.depth + 1
    FROM up JOIN pages a ON a.id = up.cur AND a.site_id = ?0
    LEFT JOIN drafts pd ON pd.item_type = 'pages' AND pd.item_id = a.id AND pd.locale = ''` + pdCond + `
    WHERE up.depth < 64
)`
}
