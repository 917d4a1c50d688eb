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

// SaveUpload inserts an upload, or writes a new attempt of one over it
// (with its new place in the site's queue, uploadqueue.go).
func SaveUpload(ctx context.Context, db bun.IDB, up *AssetUpload) error {
	if _, err := db.NewInsert().Model(up).On("CONFLICT (id) DO UPDATE").
		Set("file_name = EXCLUDED.file_name, content_type = EXCLUDED.content_type, file_size = EXCLUDED.file_size").
		Set("user_agent = EXCLUDED.user_agent, status = EXCLUDED.status, error_message = NULL, attempt = EXCLUDED.attempt, updated_at = EXCLUDED.updated_at").
		Set("queued_at = EXCLUDED.queued_at, dispatched_at = EXCLUDED.dispatched_at, etag = EXCLUDED.etag, started_at = EXCLUDED.started_at").
		Exec(ctx); err != nil {
		return fmt.Errorf("record upload: %w", err)
	}
	return nil
}
