package activities

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/minio/minio-go/v7"
	"github.com/uptrace/bun"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/pressroom/pressroom/activities/images"
	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
)

// RejectedType is the application error type of failures retrying cannot
// fix: the workflow marks the upload "error" with the message.
const RejectedType = "Rejected"

// reject wraps a message a person can act on as a non-retryable error.
func reject(format string, args ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, args...), RejectedType, nil)
}

// Uploads are the activities of the asset-upload workflow.
type Uploads struct {
	DB         *bun.DB
	Storage    *minio.Client
	Buckets    config.Storage
	AssetTypes models.AssetTypes
	Limits     images.Limits
	// WaitForObject bounds how long Inspect waits for the file to arrive.
	WaitForObject time.Duration
	// Memory bounds the image work held in memory at once (nil: unbounded).
	Memory *MemoryBudget
	Log    *slog.Logger
}

// Upload names an upload and what its client declared. It travels through
// workflow history, so it holds keys and sizes, never file bytes.
type Upload struct {
	UploadID string
	// Attempt is the upload's attempt this run processes (a failed upload
	// posted again is the same upload, one attempt later).
	Attempt     int
	SiteID      string
	AssetID     string
	Key         string
	FileName    string
	ContentType string
	FileSize    int64
}

// ClaimWait bounds how long Claim waits for the upload notice to commit.
const ClaimWait = 30 * time.Second

// Claim waits until the upload notice that started this run is committed:
// the API starts the workflow inside the transaction that records the
// notice (so a notice never exists without its workflow), so a worker can
// get here first. It returns false when the notice never commits (the API
// rolled back): there is nothing to process.
func (a *Uploads) Claim(ctx context.Context, u Upload) (bool, error) {
	deadline := time.Now().Add(ClaimWait)
	for {
		var up models.AssetUpload
		err := a.DB.NewSelect().Model(&up).Column("status", "attempt").Where("id = ?", u.UploadID).Scan(ctx)
		switch {
		case err == nil && up.Attempt > u.Attempt:
			return false, nil // a later attempt took over
		case err == nil && up.Attempt == u.Attempt:
			return up.Status == models.UploadProcessing, nil
		case err != nil && !models.IsNoRows(err):
			return false, fmt.Errorf("read the upload notice: %w", err)
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		activity.RecordHeartbeat(ctx, "waiting for the upload notice to commit")
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Inspect checks the object is there (waiting for it briefly), has the
// declared size, and starts with the declared type's magic bytes.
func (a *Uploads) Inspect(ctx context.Context, u Upload) error {
	kind, ok := a.AssetTypes.Lookup(u.ContentType)
	if !ok {
		return reject("%s files are not accepted", u.ContentType)
	}
	deadline := time.Now().Add(a.WaitForObject)
	var info minio.ObjectInfo
	for {
		var err error
		info, err = a.Storage.StatObject(ctx, a.Buckets.UploadsBucket, u.Key, minio.StatObjectOptions{})
		if err == nil {
			break
		}
		if minio.ToErrorResponse(err).Code != "NoSuchKey" {
			return fmt.Errorf("look for the uploaded file: %w", err) // storage trouble: retried
		}
		if time.Now().After(deadline) {
			return reject("the file never arrived in storage: upload it with the signature's form fields before notifying the service")
		}
		activity.RecordHeartbeat(ctx, "waiting for the file to arrive")
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	if info.Size != u.FileSize {
		return reject("the file is %d bytes, but file-size says %d", info.Size, u.FileSize)
	}
	obj, err := a.Storage.GetObject(ctx, a.Buckets.UploadsBucket, u.Key, rangeOpts(0, 15))
	if err != nil {
		return fmt.Errorf("read the file's first bytes: %w", err)
	}
	defer obj.Close()
	head, err := io.ReadAll(io.LimitReader(obj, 16))
	if err != nil {
		return fmt.Errorf("read the file's first bytes: %w", err)
	}
	for _, magic := range kind.Magic {
		if bytes.HasPrefix(head, magic) {
			return nil
		}
	}
	return reject("the file is not a %s image", strings.ToUpper(kind.Format))
}

func rangeOpts(start, end int64) minio.GetObjectOptions {
	o := minio.GetObjectOptions{}
	_ = o.SetRange(start, end) // valid by construction
	return o
}

// Processed is what Process made: dimensions, properties and the stored
// objects' keys (no pixels).
type Processed struct {
	Width, Height int
	Properties    models.ImageProperties
	Fingerprint   string
	OriginalKey   string
	OriginalSize  int64
	Variants      map[string]models.ImageVariant
}

// Process downloads the file to a temporary file, checks its header against
// the pixel limit before decoding anything, makes the variants, and writes
// the original and the variants under <site>/<asset>/ in the assets bucket.
// Running it twice overwrites the same keys.
func (a *Uploads) Process(ctx context.Context, u Upload) (*Processed, error) {
	kind, ok := a.AssetTypes.Lookup(u.ContentType)
	if !ok {
		return nil, reject("%s files are not accepted", u.ContentType)
	}
	tmp, err := os.CreateTemp("", "pressroom-upload-*")
	if err != nil {
		return nil, fmt.Errorf("temporary file: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()

	obj, err := a.Storage.GetObject(ctx, a.Buckets.UploadsBucket, u.Key, minio.GetObjectOptions{})
	if err != nil {
		return nil, fmt.Errorf("download the upload: %w", err)
	}
	hash := sha256.New()
	// One byte more than declared tells a file that grew since Inspect.
	n, err := io.Copy(io.MultiWriter(tmp, hash), io.LimitReader(obj, u.FileSize+1))
	obj.Close()
	if err != nil {
		if minio.ToErrorResponse(err).Code == "NoSuchKey" {
			return nil, reject("the uploaded file disappeared from storage before it was processed; upload it again")
		}
		return nil, fmt.Errorf("download the upload: %w", err)
	}
	if n != u.FileSize {
		return nil, reject("the file is %d bytes, but file-size says %d", n, u.FileSize)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	hdr, err := images.ReadHeader(tmp, a.Limits)
	if err != nil {
		return nil, asRejection(err)
	}
	if hdr.Format != kind.Format {
		return nil, reject("the file is not a %s image (it is %s)", strings.ToUpper(kind.Format), strings.ToUpper(hdr.Format))
	}
	release, err := a.Memory.Reserve(ctx, int64(hdr.Width)*int64(hdr.Height))
	if err != nil {
		return nil, err
	}
	activity.RecordHeartbeat(ctx, "decoding")
	res, err := images.Process(tmp.Name(), a.Limits, func() { activity.RecordHeartbeat(ctx, "encoding variants") })
	release()
	if err != nil {
		return nil, asRejection(err)
	}

	prefix := u.SiteID + "/" + u.AssetID + "/"
	out := &Processed{
		Width: res.Width, Height: res.Height, Fingerprint: hex.EncodeToString(hash.Sum(nil)),
		Properties:  models.ImageProperties{Format: res.Format, Orientation: res.Orientation, HasAlpha: res.HasAlpha, ColourSpace: res.ColourSpace},
		OriginalKey: prefix + "original." + kind.Extensions[0], OriginalSize: n,
		Variants: make(map[string]models.ImageVariant, len(res.Outputs)),
	}
	// The original is copied inside storage: its bytes need not pass through here again.
	if _, err := a.Storage.CopyObject(ctx,
		minio.CopyDestOptions{Bucket: a.Buckets.AssetsBucket, Object: out.OriginalKey, ReplaceMetadata: true, ContentType: kind.ContentTypes[0]},
		minio.CopySrcOptions{Bucket: a.Buckets.UploadsBucket, Object: u.Key}); err != nil {
		return nil, fmt.Errorf("store the original: %w", err)
	}
	for _, o := range res.Outputs {
		name := o.Name
		if o.Format == "webp" {
			name += "-webp"
		}
		ext := o.Format
		if ext == "jpeg" {
			ext = "jpg"
		}
		key := prefix + name + "." + ext
		if _, err := a.Storage.PutObject(ctx, a.Buckets.AssetsBucket, key, bytes.NewReader(o.Data), int64(len(o.Data)),
			minio.PutObjectOptions{ContentType: o.ContentType, CacheControl: "public, max-age=31536000, immutable"}); err != nil {
			return nil, fmt.Errorf("store variant %s: %w", name, err)
		}
		out.Variants[name] = models.ImageVariant{StorageKey: key, Width: o.Width, Height: o.Height, ContentType: o.ContentType, Size: int64(len(o.Data))}
		activity.RecordHeartbeat(ctx, "stored "+name)
	}
	return out, nil
}

func asRejection(err error) error {
	var r *images.Rejection
	if errors.As(err, &r) {
		return reject("%s", r.Message)
	}
	return err
}

// Record writes the asset and its image and marks the upload finished, in
// one transaction. Run twice, the second run finds the upload finished and
// does nothing.
func (a *Uploads) Record(ctx context.Context, u Upload, p *Processed) error {
	uploadID, assetID, siteID := uuid.MustParse(u.UploadID), uuid.MustParse(u.AssetID), uuid.MustParse(u.SiteID)
	kind, _ := a.AssetTypes.Lookup(u.ContentType)
	return a.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		up := new(models.AssetUpload)
		if err := tx.NewSelect().Model(up).Where("id = ?", uploadID).For("UPDATE").Scan(ctx); err != nil {
			if models.IsNoRows(err) {
				return reject("the upload record is gone (its site was deleted?)")
			}
			return err
		}
		if up.Status == models.UploadFinished {
			return nil
		}
		now := time.Now().UTC()
		title := strings.TrimSuffix(path.Base(u.FileName), path.Ext(u.FileName))
		asset := &models.Asset{ID: assetID, SiteID: siteID, Title: title, ContentType: kind.ContentTypes[0],
			AssetType: kind.Type, SubType: kind.SubType, CreatedAt: now, UpdatedAt: now}
		if _, err := tx.NewInsert().Model(asset).On("CONFLICT (id) DO NOTHING").Exec(ctx); err != nil {
			return fmt.Errorf("record asset: %w", err)
		}
		img := &models.AssetImage{ID: ImageID(assetID), SiteID: siteID, AssetID: assetID, StorageKey: p.OriginalKey,
			FileName: path.Base(u.FileName), ContentType: kind.ContentTypes[0], FileSize: p.OriginalSize,
			Width: p.Width, Height: p.Height, ImageProperties: p.Properties, Fingerprint: p.Fingerprint, Variants: p.Variants,
			CreatedAt: now, UpdatedAt: now}
		if _, err := tx.NewInsert().Model(img).On("CONFLICT (id) DO NOTHING").Exec(ctx); err != nil {
			return fmt.Errorf("record asset image: %w", err)
		}
		if _, err := tx.NewUpdate().Model(up).
			Set("status = ?, error_message = NULL, asset_id = ?, asset_image_id = ?, updated_at = now()", models.UploadFinished, assetID, img.ID).
			WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("finish upload: %w", err)
		}
		_, err := tx.NewUpdate().Model((*models.UploadSignature)(nil)).Set("confirmed_at = now()").
			Where("id = ? AND confirmed_at IS NULL", up.SignatureID).Exec(ctx)
		return err
	})
}

// ImageID is the asset image's id, derived from the asset's so that a
// retried Record cannot make a second one.
func ImageID(assetID uuid.UUID) uuid.UUID {
	return uuid.NewSHA1(assetID, []byte("asset-image"))
}

// AssetID is the asset's id, derived from the upload's for the same reason.
func AssetID(uploadID uuid.UUID) uuid.UUID {
	return uuid.NewSHA1(uploadID, []byte("asset"))
}

// DeleteTemporary removes the uploaded object once it is recorded.
func (a *Uploads) DeleteTemporary(ctx context.Context, u Upload) error {
	err := a.Storage.RemoveObject(ctx, a.Buckets.UploadsBucket, u.Key, minio.RemoveObjectOptions{})
	if err != nil && minio.ToErrorResponse(err).Code != "NoSuchKey" {
		return fmt.Errorf("delete the temporary upload: %w", err)
	}
	return nil
}

// Fail marks the upload "error" with a message and removes any objects a
// partial run stored for it.
func (a *Uploads) Fail(ctx context.Context, u Upload, message string) error {
	prefix := u.SiteID + "/" + u.AssetID + "/"
	for obj := range a.Storage.ListObjects(ctx, a.Buckets.AssetsBucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			return fmt.Errorf("list partial objects: %w", obj.Err)
		}
		if err := a.Storage.RemoveObject(ctx, a.Buckets.AssetsBucket, obj.Key, minio.RemoveObjectOptions{}); err != nil {
			return fmt.Errorf("remove partial object %s: %w", obj.Key, err)
		}
	}
	res, err := a.DB.NewUpdate().Model((*models.AssetUpload)(nil)).
		Set("status = ?, error_message = ?, updated_at = now()", models.UploadError, message).
		Where("id = ? AND status = ?", u.UploadID, models.UploadProcessing).Exec(ctx)
	if err != nil {
		return fmt.Errorf("mark upload failed: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		// Already marked (a repeated run) is fine; a notice not yet visible
		// must not be left "processing": retry until it is.
		exists, err := a.DB.NewSelect().Model((*models.AssetUpload)(nil)).Where("id = ?", u.UploadID).Exists(ctx)
		if err != nil {
			return err
		}
		if !exists {
			return fmt.Errorf("upload %s not visible yet", u.UploadID)
		}
	}
	return nil
}
