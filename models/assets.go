package models

import (
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// UploadSignature is an S3 POST policy issued for exactly one key.
type UploadSignature struct {
	bun.BaseModel `bun:"table:upload_signatures"`

	SiteRow
	Key         string     `bun:"key,notnull"`
	Filename    string     `bun:"filename,notnull"`
	ContentType string     `bun:"content_type,notnull"`
	MaxBytes    int64      `bun:"max_bytes,notnull"`
	ExpiresAt   time.Time  `bun:"expires_at,notnull"`
	ConfirmedAt *time.Time `bun:"confirmed_at"`
}

// Upload statuses.
const (
	UploadProcessing = "processing"
	UploadFinished   = "finished"
	UploadError      = "error"
)

// AssetUpload is a client's notice that a file is in the uploads bucket,
// and the state of its processing.
type AssetUpload struct {
	bun.BaseModel `bun:"table:asset_uploads"`

	SiteRecord
	UserID       *uuid.UUID `bun:"user_id,type:uuid"`
	SignatureID  uuid.UUID  `bun:"signature_id,type:uuid,notnull"`
	FileName     string     `bun:"file_name,notnull"`
	Key          string     `bun:"key,notnull"`
	ContentType  string     `bun:"content_type,notnull"`
	FileSize     int64      `bun:"file_size,notnull"`
	UserAgent    string     `bun:"user_agent,notnull"`
	Status       string     `bun:"status,notnull"`
	ErrorMessage *string    `bun:"error_message"`
	Attempt      int        `bun:"attempt,notnull"`
	AssetID      *uuid.UUID `bun:"asset_id,type:uuid"`
	AssetImageID *uuid.UUID `bun:"asset_image_id,type:uuid"`
	// QueuedAt orders this attempt among its site's uploads waiting for a
	// processing slot; DispatchedAt is when it took one (nil while it
	// waits). Both matter only while the upload is processing
	// (uploadqueue.go).
	QueuedAt     time.Time  `bun:"queued_at,nullzero,notnull,default:current_timestamp"`
	DispatchedAt *time.Time `bun:"dispatched_at"`
	// ETag is the version of the object the attempt's notice named (the
	// ingestion reads only that version); StartedAt is when the attempt's
	// ingestion was started, after its notice committed (nil: not yet, the
	// worker's commit sweep starts it; docs/architecture.md, "From a
	// commit to a workflow").
	ETag      string     `bun:"etag,notnull"`
	StartedAt *time.Time `bun:"started_at"`
}

// Asset is a published file of a site.
type Asset struct {
	bun.BaseModel `bun:"table:assets"`

	SiteRecord
	Title       string  `bun:"title,notnull"`
	ContentType string  `bun:"content_type,notnull"`
	AssetType   string  `bun:"asset_type,notnull"`
	SubType     string  `bun:"sub_type,notnull"`
	ThemePath   *string `bun:"theme_path"`
}

// ImageProperties describe how an image is encoded.
type ImageProperties struct {
	Format      string `json:"format"`
	Orientation int    `json:"orientation"`
	HasAlpha    bool   `json:"has-alpha"`
	ColourSpace string `json:"colour-space"`
}

// ImageVariant is one resized rendition of an image.
type ImageVariant struct {
	StorageKey  string `json:"key"`    // in the assets bucket
	Width       int    `json:"width"`  // pixels
	Height      int    `json:"height"` // pixels
	ContentType string `json:"content-type"`
	Size        int64  `json:"size"` // bytes
}

// AssetImage is the image file of an asset: the original and its variants.
type AssetImage struct {
	bun.BaseModel `bun:"table:asset_images"`

	SiteRecord
	AssetID     uuid.UUID `bun:"asset_id,type:uuid,notnull"` // an asset has one image at most (a unique column)
	StorageKey  string    `bun:"storage_key,notnull"`        // the original's, in the assets bucket: <site>/<asset>/original.<ext>
	FileName    string    `bun:"file_name,notnull"`          // the uploaded file's base name
	ContentType string    `bun:"content_type,notnull"`
	FileSize    int64     `bun:"file_size,notnull"` // bytes of the original
	// Width and Height are in pixels as the image is shown: an EXIF
	// orientation of 5 to 8 (a quarter turn) swaps the stored ones.
	Width           int             `bun:"width,notnull"`
	Height          int             `bun:"height,notnull"`
	ImageProperties ImageProperties `bun:"image_properties,type:jsonb,notnull"`
	Fingerprint     string          `bun:"fingerprint,notnull"` // hex SHA-256 of the original's bytes
	// Variants are keyed by name: thumb, small, medium and large (long
	// edge 256, 640, 1280, 2048 pixels, never upscaled) in the original's
	// format, and each again in WebP as <name>-webp.
	Variants map[string]ImageVariant `bun:"variants,type:jsonb,notnull"`
}

// AssetID is the id of the asset an upload makes, derived from the upload's
// so that a retried ingestion cannot make a second one.
func AssetID(uploadID uuid.UUID) uuid.UUID {
	return uuid.NewSHA1(uploadID, []byte("asset"))
}

// ImageID is the asset image's id, derived from the asset's for the same
// reason.
func ImageID(assetID uuid.UUID) uuid.UUID {
	return uuid.NewSHA1(assetID, []byte("asset-image"))
}
