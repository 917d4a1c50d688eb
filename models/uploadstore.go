package models

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/webhooks"
)

// The upload store: what an ingestion run reads and writes of its upload
// (Claim, Finish, and with FailUpload in uploadqueue.go, Fail), and the
// sweep of signatures that never got a notice.

// UploadClaim reads the status and attempt of the upload uploadID, for its
// run's first look; sql.ErrNoRows (IsNoRows) when there is none (a run
// that an API before the commit-first start began inside the notice's
// transaction, and that got ahead of the commit).
func UploadClaim(ctx context.Context, db bun.IDB, uploadID string) (AssetUpload, error) {
	var up AssetUpload
	err := db.NewSelect().Model(&up).Column("status", "attempt").Where("id = ?", uploadID).Scan(ctx)
	return up, err
}

// MarkUploadStarted records that the ingestion of the upload's attempt was
// started: the API's start after the notice committed, or the commit
// sweep's. A start that Temporal refused is not marked, so the sweep tries
// it again.
func MarkUploadStarted(ctx context.Context, db bun.IDB, uploadID uuid.UUID, attempt int) error {
	if _, err := db.NewUpdate().Model((*AssetUpload)(nil)).Set("started_at = now()").
		Where("id = ? AND attempt = ? AND started_at IS NULL", uploadID, attempt).Exec(ctx); err != nil {
		return fmt.Errorf("mark the upload's ingestion started: %w", err)
	}
	return nil
}

// UnstartedUploads locks, in tx and skipping rows another sweep holds, at
// most limit processing uploads whose attempt was noticed before before and
// whose ingestion was never started (its API died between the commit and
// the start, or Temporal refused the start): the commit sweep starts them.
func UnstartedUploads(ctx context.Context, tx bun.Tx, before time.Time, limit int) ([]AssetUpload, error) {
	var ups []AssetUpload
	err := tx.NewSelect().Model(&ups).
		Where("status = ? AND started_at IS NULL AND queued_at < ?", UploadProcessing, before).
		OrderExpr("queued_at").Limit(int64(limit)).For("UPDATE SKIP LOCKED").Scan(ctx)
	if err != nil && !IsNoRows(err) {
		return nil, fmt.Errorf("find unstarted uploads: %w", err)
	}
	return ups, nil
}

// UploadExists tells whether the upload uploadID is visible.
func UploadExists(ctx context.Context, db bun.IDB, uploadID string) (bool, error) {
	return db.NewSelect().Model((*AssetUpload)(nil)).Where("id = ?", uploadID).Exists(ctx)
}

// FinishUpload records the processed upload uploadID in tx: its asset and
// image (each kept if a run recorded it already), the upload finished with
// them, its signature confirmed, and the asset.upload.finished event. An
// upload finished already is left as it is. False means the upload is gone
// (its site was deleted).
func FinishUpload(ctx context.Context, tx bun.IDB, uploadID uuid.UUID, asset *Asset, img *AssetImage) (bool, error) {
	up := new(AssetUpload)
	if err := tx.NewSelect().Model(up).Where("id = ?", uploadID).For("UPDATE").Scan(ctx); err != nil {
		if IsNoRows(err) {
			return false, nil
		}
		return false, err
	}
	if up.Status == UploadFinished {
		return true, nil
	}
	if _, err := tx.NewInsert().Model(asset).On("CONFLICT (id) DO NOTHING").Exec(ctx); err != nil {
		return false, fmt.Errorf("record asset: %w", err)
	}
	if _, err := tx.NewInsert().Model(img).On("CONFLICT (id) DO NOTHING").Exec(ctx); err != nil {
		return false, fmt.Errorf("record asset image: %w", err)
	}
	if _, err := tx.NewUpdate().Model(up).
		Set("status = ?, error_message = NULL, asset_id = ?, asset_image_id = ?, updated_at = now()", UploadFinished, asset.ID, img.ID).
		WherePK().Exec(ctx); err != nil {
		return false, fmt.Errorf("finish upload: %w", err)
	}
	if _, err := tx.NewUpdate().Model((*UploadSignature)(nil)).Set("confirmed_at = now()").
		Where("id = ? AND confirmed_at IS NULL", up.SignatureID).Exec(ctx); err != nil {
		return false, err
	}
	// The webhook event commits with the upload's end (docs/webhooks.md).
	return true, RecordEvent(ctx, tx, Event{SiteID: asset.SiteID, Type: webhooks.AssetUploadFinished, SubjectType: "asset-uploads", SubjectID: uploadID})
}

// StaleSignatures returns at most limit signatures that expired before
// expiredBefore without an upload notice.
func StaleSignatures(ctx context.Context, db bun.IDB, expiredBefore time.Time, limit int) ([]UploadSignature, error) {
	var stale []UploadSignature
	err := db.NewSelect().Model(&stale).
		Where("confirmed_at IS NULL AND expires_at < ?", expiredBefore).
		Where("NOT EXISTS (SELECT 1 FROM asset_uploads u WHERE u.signature_id = upload_signature.id)").
		Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("find stale signatures: %w", err)
	}
	return stale, nil
}

// DeleteSignature deletes the signature sig.
func DeleteSignature(ctx context.Context, db bun.IDB, sig *UploadSignature) error {
	if _, err := db.NewDelete().Model(sig).WherePK().Exec(ctx); err != nil {
		return fmt.Errorf("delete signature: %w", err)
	}
	return nil
}
