package models

import (
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// The theme family's store: themes, layouts and theme assets of a site
// (docs/themes.md). Every query is scoped by site; another site's record is
// not found.

// PageCounter counts, per layout, the live pages that use it. ids absent
// from the result count as zero.
type PageCounter func(ctx context.Context, siteID uuid.UUID, layoutIDs []uuid.UUID) (map[uuid.UUID]int, error)

// LivePagesPerLayout counts the live pages of a site using each layout,
// in one query for all the layouts of a response.
func LivePagesPerLayout(db *bun.DB) PageCounter {
	return func(ctx context.Context, siteID uuid.UUID, layoutIDs []uuid.UUID) (map[uuid.UUID]int, error) {
		out := map[uuid.UUID]int{}
		if len(layoutIDs) == 0 {
			return out, nil
		}
		var rows []struct {
			LayoutID uuid.UUID `bun:"layout_id"`
			N        int       `bun:"n"`
		}
		err := db.NewSelect().Table("pages").Column("layout_id").ColumnExpr("count(*) AS n").
			Where("site_id = ? AND published_at IS NOT NULL AND layout_id IN (?)", siteID, bun.In(layoutIDs)).
			Group("layout_id").Scan(ctx, &rows)
		for _, r := range rows {
			out[r.LayoutID] = r.N
		}
		return out, err
	}
}

// FindTheme finds a theme of the site; another site's theme is not found.
func FindTheme(ctx context.Context, db bun.IDB, siteID, id uuid.UUID) (*Theme, error) {
	t := new(Theme)
	err := db.NewSelect().Model(t).Where("id = ? AND site_id = ?", id, siteID).Scan(ctx)
	if IsNoRows(err) {
		return nil, NotFound("theme")
	}
	return t, err
}

// ThemesByID loads the site's themes with the given ids.
func ThemesByID(ctx context.Context, db bun.IDB, siteID uuid.UUID, themeIDs []uuid.UUID) ([]Theme, error) {
	var ts []Theme
	if len(themeIDs) == 0 {
		return ts, nil
	}
	err := db.NewSelect().Model(&ts).Where("site_id = ? AND id IN (?)", siteID, bun.In(Unique(themeIDs))).OrderExpr("created_at, id").Scan(ctx)
	return ts, err
}

// Unique is in without repeats, in its order.
func Unique(in []uuid.UUID) []uuid.UUID {
	seen := map[uuid.UUID]bool{}
	out := make([]uuid.UUID, 0, len(in))
	for _, id := range in {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// CopyTheme copies the layouts and theme assets of theme from into theme
// to, with new ids, in the caller's transaction.
func CopyTheme(ctx context.Context, tx bun.Tx, siteID, from, to uuid.UUID) error {
	if _, err := tx.NewRaw(`INSERT INTO layouts (id, site_id, theme_id, title, file_name, description, is_unique, content, version, created_at, updated_at)
		SELECT gen_random_uuid(), site_id, ?, title, file_name, description, is_unique, content, 1, now(), now()
		FROM layouts WHERE site_id = ? AND theme_id = ?`, to, siteID, from).Exec(ctx); err != nil {
		return err
	}
	var assetIDs []uuid.UUID
	if err := tx.NewRaw(`SELECT DISTINCT asset_id FROM theme_assets WHERE site_id = ? AND theme_id = ?`, siteID, from).Scan(ctx, &assetIDs); err != nil {
		return err
	}
	if len(assetIDs) == 0 {
		return nil
	}
	if err := LockAssets(ctx, tx, siteID, assetIDs); err != nil {
		return err
	}
	if _, err := tx.NewRaw(`INSERT INTO theme_assets (id, site_id, theme_id, asset_id, path, version, created_at, updated_at)
		SELECT gen_random_uuid(), site_id, ?, asset_id, path, 1, now(), now()
		FROM theme_assets WHERE site_id = ? AND theme_id = ?`, to, siteID, from).Exec(ctx); err != nil {
		return err
	}
	return SyncThemePaths(ctx, tx, siteID, assetIDs)
}

func FindLayout(ctx context.Context, db bun.IDB, siteID, id uuid.UUID) (*Layout, error) {
	l := new(Layout)
	err := db.NewSelect().Model(l).Where("id = ? AND site_id = ?", id, siteID).Scan(ctx)
	if IsNoRows(err) {
		return nil, NotFound("layout")
	}
	return l, err
}

func FindThemeAsset(ctx context.Context, db bun.IDB, siteID, id uuid.UUID, lock bool) (*ThemeAsset, error) {
	ta := new(ThemeAsset)
	sel := db.NewSelect().Model(ta).Where("id = ? AND site_id = ?", id, siteID)
	if lock {
		sel = sel.For("UPDATE")
	}
	if err := sel.Scan(ctx); IsNoRows(err) {
		return nil, NotFound("theme asset")
	} else if err != nil {
		return nil, err
	}
	return ta, nil
}

// LockAssets locks the site's assets with the given ids, in id order (so
// concurrent writers cannot deadlock), while their theme paths change.
func LockAssets(ctx context.Context, db bun.IDB, siteID uuid.UUID, assetIDs []uuid.UUID) error {
	var locked []uuid.UUID
	return db.NewRaw(`SELECT id FROM assets WHERE site_id = ? AND id IN (?) ORDER BY id FOR UPDATE`, siteID, bun.In(assetIDs)).Scan(ctx, &locked)
}

// SyncThemePaths sets each asset's theme_path to the path of its newest
// theme asset, or NULL when no theme links it any more.
func SyncThemePaths(ctx context.Context, db bun.IDB, siteID uuid.UUID, assetIDs []uuid.UUID) error {
	_, err := db.NewRaw(`UPDATE assets AS a SET theme_path = latest.path, updated_at = now()
		FROM (SELECT x.id, (SELECT ta.path FROM theme_assets AS ta WHERE ta.site_id = x.site_id AND ta.asset_id = x.id
		                    ORDER BY ta.created_at DESC, ta.path LIMIT 1) AS path
		      FROM assets AS x WHERE x.site_id = ? AND x.id IN (?)) AS latest
		WHERE a.id = latest.id AND a.theme_path IS DISTINCT FROM latest.path`, siteID, bun.In(assetIDs)).Exec(ctx)
	return err
}

// LayoutsOfThemes loads the layouts of the site's themes, by file name;
// columns limits what is read (none: every column).
func LayoutsOfThemes(ctx context.Context, db bun.IDB, siteID uuid.UUID, themeIDs []uuid.UUID, columns ...string) ([]Layout, error) {
	var ls []Layout
	err := db.NewSelect().Model(&ls).Column(columns...).Where("site_id = ? AND theme_id IN (?)", siteID, bun.In(themeIDs)).
		OrderExpr("lower(file_name), id").Scan(ctx)
	return ls, err
}

// ThemeAssetsOfThemes loads the theme assets of the site's themes, by
// path; columns limits what is read (none: every column).
func ThemeAssetsOfThemes(ctx context.Context, db bun.IDB, siteID uuid.UUID, themeIDs []uuid.UUID, columns ...string) ([]ThemeAsset, error) {
	var tas []ThemeAsset
	err := db.NewSelect().Model(&tas).Column(columns...).Where("site_id = ? AND theme_id IN (?)", siteID, bun.In(themeIDs)).
		OrderExpr("lower(path), id").Scan(ctx)
	return tas, err
}

// UsersByID loads the site's users with the given ids, oldest first.
func UsersByID(ctx context.Context, db bun.IDB, siteID uuid.UUID, userIDs []uuid.UUID) ([]User, error) {
	var us []User
	err := db.NewSelect().Model(&us).Where("site_id = ? AND id IN (?)", siteID, bun.In(Unique(userIDs))).OrderExpr("created_at, id").Scan(ctx)
	return us, err
}

// AssetsByID loads the site's assets with the given ids, oldest first.
func AssetsByID(ctx context.Context, db bun.IDB, siteID uuid.UUID, assetIDs []uuid.UUID) ([]Asset, error) {
	var as []Asset
	err := db.NewSelect().Model(&as).Where("site_id = ? AND id IN (?)", siteID, bun.In(Unique(assetIDs))).OrderExpr("created_at, id").Scan(ctx)
	return as, err
}

// UpdateVersioned writes the columns of model m (a row of the site's with
// the given id), and updated_at, as version + 1, only while the stored row
// is still at version read, and reads the row back into m. A row that
// moved on (or is gone) is ErrStaleVersion.
func UpdateVersioned(ctx context.Context, db bun.IDB, m any, siteID, id uuid.UUID, read int, columns ...string) error {
	err := db.NewUpdate().Model(m).Column(append(columns, "updated_at")...).Set("version = version + 1").
		Where("id = ? AND site_id = ? AND version = ?", id, siteID, read).Returning("*").Scan(ctx)
	if IsNoRows(err) {
		return Stale(0)
	}
	return err
}
