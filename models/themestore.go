package models

import (
	"context"
	"errors"
	"time"

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

// UpdateVersioned writes the columns of model m (a row of the site's with
// the given id), and updated_at (now), as version + 1, only while the
// stored row is still at version read, and reads the row back into m. A
// row that moved on (or is gone) is ErrStaleVersion.
func UpdateVersioned(ctx context.Context, db bun.IDB, m any, siteID, id uuid.UUID, read int, columns ...string) error {
	err := db.NewUpdate().Model(m).Column(columns...).Set("updated_at = ?", time.Now().UTC()).Set("version = version + 1").
		Where("id = ? AND site_id = ? AND version = ?", id, siteID, read).Returning("*").Scan(ctx)
	if IsNoRows(err) {
		return Stale(0)
	}
	return err
}

// ListThemes loads one page of the site's themes.
func ListThemes(ctx context.Context, db bun.IDB, siteID uuid.UUID, page Page) ([]Theme, int64, error) {
	return List[Theme](ctx, db, page, "site_id = ?", siteID)
}

// ListLayouts loads one page of the layouts of a theme of the site.
func ListLayouts(ctx context.Context, db bun.IDB, siteID, themeID uuid.UUID, page Page) ([]Layout, int64, error) {
	return List[Layout](ctx, db, page, "site_id = ? AND theme_id = ?", siteID, themeID)
}

// ListLiveLayouts loads one page of the layouts of the site's latest
// published theme (the greatest published_at): none while none is published.
func ListLiveLayouts(ctx context.Context, db bun.IDB, siteID uuid.UUID, page Page) ([]Layout, int64, error) {
	return List[Layout](ctx, db, page, `site_id = ?0 AND theme_id = (SELECT t.id FROM themes AS t WHERE t.site_id = ?0 AND t.published_at IS NOT NULL
			ORDER BY t.published_at DESC, t.id DESC LIMIT 1)`, siteID)
}

// ListThemeAssets loads one page of the theme assets of a theme of the site.
func ListThemeAssets(ctx context.Context, db bun.IDB, siteID, themeID uuid.UUID, page Page) ([]ThemeAsset, int64, error) {
	return List[ThemeAsset](ctx, db, page, "site_id = ? AND theme_id = ?", siteID, themeID)
}

// CheckTheme is RefNotFound at the relationship rel unless the site has the
// theme. Themes are never deleted, so the answer holds for the caller's
// transaction.
func CheckTheme(ctx context.Context, db bun.IDB, siteID, themeID uuid.UUID, rel string) error {
	if _, err := FindTheme(ctx, db, siteID, themeID); errors.Is(err, ErrNotFound) {
		return RefNotFound(rel, "theme")
	} else if err != nil {
		return err
	}
	return nil
}

// CreateTheme inserts t and, with a source, copies the layouts and theme
// assets of that theme of the site into it, in the caller's transaction;
// each copy statement reads one consistent snapshot of the source.
func CreateTheme(ctx context.Context, tx bun.Tx, t *Theme, source *uuid.UUID) error {
	if source != nil {
		if err := CheckTheme(ctx, tx, t.SiteID, *source, "source"); err != nil {
			return err
		}
	}
	if _, err := tx.NewInsert().Model(t).Exec(ctx); err != nil {
		return err
	}
	if source == nil {
		return nil
	}
	return CopyTheme(ctx, tx, t.SiteID, *source, t.ID)
}

// LayoutFileNameTaken is the error of a second layout of a theme with the
// same file name.
func LayoutFileNameTaken() *Error {
	return Invalid("file-name", "taken", "This theme already has a layout with that file-name (compared without regard to case).")
}

// CreateLayout inserts l into a theme of its site.
func CreateLayout(ctx context.Context, db bun.IDB, l *Layout) error {
	if err := CheckTheme(ctx, db, l.SiteID, l.ThemeID, "theme"); err != nil {
		return err
	}
	if _, err := db.NewInsert().Model(l).Exec(ctx); IsConflict(err) {
		return LayoutFileNameTaken()
	} else if err != nil {
		return err
	}
	return nil
}

// CreateThemeAsset links an asset of the site to a theme of the site at
// ta's path, and sets the asset's theme_path, in the caller's transaction.
// The asset is locked first, as CopyTheme and DeleteThemeAsset lock it.
func CreateThemeAsset(ctx context.Context, tx bun.Tx, ta *ThemeAsset) error {
	if err := CheckTheme(ctx, tx, ta.SiteID, ta.ThemeID, "theme"); err != nil {
		return err
	}
	var locked []uuid.UUID
	if err := tx.NewRaw(`SELECT id FROM assets WHERE id = ? AND site_id = ? FOR UPDATE`, ta.AssetID, ta.SiteID).Scan(ctx, &locked); err != nil {
		return err
	}
	if len(locked) == 0 {
		return RefNotFound("asset", "asset")
	}
	// Stamped by the database, like the copies CopyTheme makes, so "the
	// newest link of an asset" compares one clock.
	if _, err := tx.NewInsert().Model(ta).Value("created_at", "now()").Value("updated_at", "now()").Returning("*").Exec(ctx); IsConflict(err) {
		return Invalid("path", "taken", "This theme already has an asset at that path (compared without regard to case).")
	} else if err != nil {
		return err
	}
	return SyncThemePaths(ctx, tx, ta.SiteID, []uuid.UUID{ta.AssetID})
}

// DeleteThemeAsset unlinks the theme asset read as read from its theme
// (the asset itself stays) and updates the asset's theme_path, in the
// caller's transaction: the asset is locked first, then the row, which
// check judges (the caller's preconditions) before it is deleted.
func DeleteThemeAsset(ctx context.Context, tx bun.Tx, read *ThemeAsset, check func(*ThemeAsset) error) error {
	if err := LockAssets(ctx, tx, read.SiteID, []uuid.UUID{read.AssetID}); err != nil {
		return err
	}
	ta, err := Find[ThemeAsset](ctx, tx, read.SiteID, read.ID, "theme asset", true)
	if err != nil {
		return err
	}
	if err := check(ta); err != nil {
		return err
	}
	if _, err := tx.NewDelete().Model(ta).Where("id = ? AND site_id = ?", ta.ID, ta.SiteID).Exec(ctx); err != nil {
		return err
	}
	return SyncThemePaths(ctx, tx, ta.SiteID, []uuid.UUID{ta.AssetID})
}
