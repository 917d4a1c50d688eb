package models

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// The store of assets, their images, and the uploads that make them
// (docs/assets.md). Every query is scoped by site.

// ListAssets loads one page of the site's assets.
func ListAssets(ctx context.Context, db bun.IDB, siteID uuid.UUID, page Page) ([]Asset, int64, error) {
	return List[Asset](ctx, db, page, "site_id = ?", siteID)
}

// RecordSignature stores an upload signature issued to a site.
func RecordSignature(ctx context.Context, db bun.IDB, sig *UploadSignature) error {
	_, err := inserted(ctx, db, sig, "record signature")
	return err
}

// SignatureByKey finds the signature issued to the site for an object key
// (sql.ErrNoRows when none was).
func SignatureByKey(ctx context.Context, db bun.IDB, siteID uuid.UUID, key string) (*UploadSignature, error) {
	sig := new(UploadSignature)
	return sig, db.NewSelect().Model(sig).Where("key = ? AND site_id = ?", key, siteID).Scan(ctx)
}

// UploadByKey finds the site's upload of an object key (sql.ErrNoRows
// when there is none), FOR UPDATE when lock is set.
func UploadByKey(ctx context.Context, db bun.IDB, siteID uuid.UUID, key string, lock bool) (*AssetUpload, error) {
	up := new(AssetUpload)
	sel := db.NewSelect().Model(up).Where("key = ? AND site_id = ?", key, siteID)
	if lock {
		sel = sel.For("UPDATE")
	}
	return up, sel.Scan(ctx)
}

// ProcessingUploads counts the site's uploads being processed, under a
// per-site lock held to the end of the caller's transaction, so a limit
// judged on the count holds across API replicas.
func ProcessingUploads(ctx context.Context, tx bun.Tx, siteID uuid.UUID) (int, error) {
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", "asset-uploads:"+siteID.String()); err != nil {
		return 0, fmt.Errorf("lock site uploads: %w", err)
	}
	n, err := tx.NewSelect().Model((*AssetUpload)(nil)).Where("site_id = ? AND status = ?", siteID, UploadProcessing).Count(ctx)
	if err != nil {
		return 0, fmt.Errorf("count processing uploads: %w", err)
	}
	return int(n), nil
}

// SaveUpload inserts an upload, or writes a new attempt of one over it.
func SaveUpload(ctx context.Context, db bun.IDB, up *AssetUpload) error {
	if _, err := db.NewInsert().Model(up).On("CONFLICT (id) DO UPDATE").
		Set("file_name = EXCLUDED.file_name, content_type = EXCLUDED.content_type, file_size = EXCLUDED.file_size").
		Set("user_agent = EXCLUDED.user_agent, status = EXCLUDED.status, error_message = NULL, attempt = EXCLUDED.attempt, updated_at = EXCLUDED.updated_at").
		Exec(ctx); err != nil {
		return fmt.Errorf("record upload: %w", err)
	}
	return nil
}
