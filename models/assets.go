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
	StorageKey  string `json:"key"`
	Width       int    `json:"width"`
	Height      int    `json:"height"`
	ContentType string `json:"content-type"`
	Size        int64  `json:"size"`
}

// AssetImage is the image file of an asset: the original and its variants.
type AssetImage struct {
	bun.BaseModel `bun:"table:asset_images"`

	SiteRecord
	AssetID         uuid.UUID               `bun:"asset_id,type:uuid,notnull"`
	StorageKey      string                  `bun:"storage_key,notnull"`
	FileName        string                  `bun:"file_name,notnull"`
	ContentType     string                  `bun:"content_type,notnull"`
	FileSize        int64                   `bun:"file_size,notnull"`
	Width           int                     `bun:"width,notnull"`
	Height          int                     `bun:"height,notnull"`
	ImageProperties ImageProperties         `bun:"image_properties,type:jsonb,notnull"`
	Fingerprint     string                  `bun:"fingerprint,notnull"`
	Variants        map[string]ImageVariant `bun:"variants,type:jsonb,notnull"`
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
