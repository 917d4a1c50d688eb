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
	"golang.org/x/sync/errgroup"

	"github.com/pressroom/pressroom/activities/images"
	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/workflows"
)

// Uploads are the activities of the asset-upload workflow.
type Uploads struct {
	DB         *bun.DB
	Storage    *minio.Client
	Buckets    config.Storage
	AssetTypes models.AssetTypes
	Limits     images.Limits
	// WaitForObject bounds how long Inspect's retries wait for the file to
	// become visible (the API already saw it when it took the notice).
	WaitForObject time.Duration
	// Memory bounds the image work held in memory at once (nil: unbounded).
	Memory *MemoryBudget
	// SiteLimit is how many of one site's uploads are processed at once
	// (PRESSROOM_SITE_UPLOAD_LIMIT; the API gives slots by the same number).
	SiteLimit int
	Log       *slog.Logger
}

// matching returns read options that only match the noticed version.
func matching(u workflows.Upload) minio.GetObjectOptions {
	o := minio.GetObjectOptions{}
	if u.ETag != "" {
		_ = o.SetMatchETag(u.ETag) // never fails for a non-empty tag
	}
	return o
}

// changedMessage is the rejection of a file replaced after its notice.
const changedMessage = "the file in storage changed after the upload notice; request a new upload signature and upload the file again"

// storageRejection turns storage's answers a retry cannot change into rejections.
func storageRejection(err error) error {
	switch minio.ToErrorResponse(err).Code {
	case "PreconditionFailed":
		return reject(changedMessage)
	case "NoSuchKey":
		return reject("the uploaded file disappeared from storage before it was processed; upload it again")
	}
	return nil
}

// Claim reports whether the run's attempt of the upload is still to be
// processed: its notice is there, processing, and no later attempt took
// over. The API starts the run after the notice commits, so the first
// look finds it; a run that an API before that change started inside the
// notice's transaction may get ahead of the commit, find nothing and end,
// and the worker's commit sweep starts the committed notice again
// (docs/architecture.md, "From a commit to a workflow").
func (a *Uploads) Claim(ctx context.Context, u workflows.Upload) (bool, error) {
	up, err := models.UploadClaim(ctx, a.DB, u.UploadID)
	switch {
	case models.IsNoRows(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read the upload notice: %w", err)
	}
	return up.Attempt == u.Attempt && up.Status == models.UploadProcessing, nil
}

// Inspect checks the object is there, has the declared size, and starts
// with the declared type's magic bytes. A file not visible yet fails the
// attempt (retried with backoff by the workflow's retry policy, holding no
// worker slot in between) until WaitForObject after the first attempt; then
// the upload is rejected.
func (a *Uploads) Inspect(ctx context.Context, u workflows.Upload) error {
	kind, ok := a.AssetTypes.Lookup(u.ContentType)
	if !ok {
		return reject("%s files are not accepted", u.ContentType)
	}
	info, err := a.Storage.StatObject(ctx, a.Buckets.UploadsBucket, u.Key, matching(u))
	switch {
	case err != nil && minio.ToErrorResponse(err).Code == "PreconditionFailed":
		return reject(changedMessage)
	case err != nil && minio.ToErrorResponse(err).Code == "NoSuchKey":
		if activity.IsActivity(ctx) && time.Since(activity.GetInfo(ctx).ScheduledTime) < a.WaitForObject {
			return fmt.Errorf("the uploaded file %s is not in storage yet", u.Key) // retried
		}
		return reject("the file never arrived in storage: upload it with the signature's form fields before notifying the service")
	case err != nil:
		return fmt.Errorf("look for the uploaded file: %w", err) // storage trouble: retried
	}
	if info.Size != u.FileSize {
		return reject("the file is %d bytes, but file-size says %d", info.Size, u.FileSize)
	}
	o := matching(u)
	_ = o.SetRange(0, 15) // valid by construction
	obj, err := a.Storage.GetObject(ctx, a.Buckets.UploadsBucket, u.Key, o)
	if err != nil {
		return fmt.Errorf("read the file's first bytes: %w", err)
	}
	defer obj.Close()
	head, err := io.ReadAll(io.LimitReader(obj, 16))
	if err != nil {
		if r := storageRejection(err); r != nil {
			return r
		}
		return fmt.Errorf("read the file's first bytes: %w", err)
	}
	for _, magic := range kind.Magic {
		if bytes.HasPrefix(head, magic) {
			return nil
		}
	}
	return reject("the file is not a %s image", strings.ToUpper(kind.Format))
}

// Process downloads the file to a temporary file, checks its header against
// the pixel limit before decoding anything, makes the variants, and writes
// the original and the variants under <site>/<asset>/ in the assets bucket.
// Running it twice overwrites the same keys. Its phases are download,
// decodeImage and storeOutputs.
func (a *Uploads) Process(ctx context.Context, u workflows.Upload) (*workflows.Processed, error) {
	kind, ok := a.AssetTypes.Lookup(u.ContentType)
	if !ok {
		return nil, reject("%s files are not accepted", u.ContentType)
	}
	progress, err := decodeProgress(ctx)
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp("", "pressroom-upload-*")
	if err != nil {
		return nil, fmt.Errorf("temporary file: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	fingerprint, err := a.download(ctx, u, tmp)
	if err != nil {
		return nil, err
	}
	res, err := a.decodeImage(ctx, tmp, kind, &progress)
	if err != nil {
		return nil, err
	}
	out := &workflows.Processed{
		Width: res.Width, Height: res.Height, Fingerprint: fingerprint,
		Properties:  models.ImageProperties{Format: res.Format, Orientation: res.Orientation, HasAlpha: res.HasAlpha, ColourSpace: res.ColourSpace},
		OriginalKey: u.SiteID + "/" + u.AssetID + "/original." + kind.Extensions[0], OriginalSize: u.FileSize,
		Variants: make(map[string]models.ImageVariant, len(res.Outputs)),
	}
	if err := a.storeOutputs(ctx, u, tmp, kind, res, out, progress); err != nil {
		return nil, err
	}
	return out, nil
}

// download copies the version of the upload the notice named into tmp and
// returns its SHA-256: the bytes checked and decoded later are the bytes
// stored as the original (from this temporary file, not copied from the
// still-writable upload key). A size other than the notice's is a rejection.
func (a *Uploads) download(ctx context.Context, u workflows.Upload, tmp *os.File) (string, error) {
	obj, err := a.Storage.GetObject(ctx, a.Buckets.UploadsBucket, u.Key, matching(u))
	if err != nil {
		return "", fmt.Errorf("download the upload: %w", err)
	}
	hash := sha256.New()
	// One byte more than declared tells a file that grew since Inspect.
	n, err := io.Copy(io.MultiWriter(tmp, hash), io.LimitReader(obj, u.FileSize+1))
	obj.Close()
	if err != nil {
		if r := storageRejection(err); r != nil {
			return "", r
		}
		return "", fmt.Errorf("download the upload: %w", err)
	}
	if n != u.FileSize {
		return "", reject("the file is %d bytes, but file-size says %d", n, u.FileSize)
	}
	return hex.EncodeToString(hash.Sum(nil)), nil
}

// decodeImage checks tmp's header (format, pixel limit) before decoding
// anything, reserves the decode's memory, and makes the variants.
func (a *Uploads) decodeImage(ctx context.Context, tmp *os.File, kind models.AssetKind, progress *ProcessProgress) (images.Result, error) {
	var none images.Result
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return none, err
	}
	hdr, err := images.ReadHeader(tmp, a.Limits)
	if err != nil {
		return none, asRejection(err)
	}
	if hdr.Format != kind.Format {
		return none, reject("the file is not a %s image (it is %s)", strings.ToUpper(kind.Format), strings.ToUpper(hdr.Format))
	}
	release, err := a.Memory.Reserve(ctx, int64(hdr.Width)*int64(hdr.Height), *progress)
	if err != nil {
		return none, err
	}
	// libvips does not return to Go while it decodes: a goroutine keeps
	// heartbeating meanwhile, recording that this attempt is decoding. If
	// the attempt then times out, the next one finds that in its heartbeat
	// details and counts it (decodeProgress).
	progress.Phase = phaseDecoding
	activity.RecordHeartbeat(ctx, *progress)
	stop := heartbeat(ctx, decodeHeartbeat, *progress)
	res, err := processImage(tmp.Name(), a.Limits, nil)
	stop()
	release()
	progress.Phase = phaseStoring
	activity.RecordHeartbeat(ctx, *progress)
	if err != nil {
		return none, asRejection(err)
	}
	return res, nil
}

// storeOutputs stores the original and the variants under out's keys and
// records each variant in out.
func (a *Uploads) storeOutputs(ctx context.Context, u workflows.Upload, tmp *os.File, kind models.AssetKind, res images.Result,
	out *workflows.Processed, progress ProcessProgress) error {
	prefix := u.SiteID + "/" + u.AssetID + "/"
	n := u.FileSize
	// The original is the checked temporary file itself, so the stored
	// bytes are the ones fingerprinted, sized and decoded above. It and the
	// variants are stored storePuts at a time: each put is mostly a round
	// trip to storage, so the upload finishes sooner for the same CPU. A
	// goroutine heartbeats meanwhile; the first failure cancels the rest
	// and the attempt is retried (the keys are the same each time).
	puts := []objectPut{{key: out.OriginalKey, contentType: kind.ContentTypes[0], size: n,
		body: func() (io.Reader, error) {
			if _, err := tmp.Seek(0, io.SeekStart); err != nil {
				return nil, err
			}
			return io.LimitReader(tmp, n), nil
		}, what: "the original"}}
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
		data := o.Data
		puts = append(puts, objectPut{key: key, contentType: o.ContentType, size: int64(len(data)), immutable: true,
			body: func() (io.Reader, error) { return bytes.NewReader(data), nil }, what: "variant " + name})
		out.Variants[name] = models.ImageVariant{StorageKey: key, Width: o.Width, Height: o.Height, ContentType: o.ContentType, Size: int64(len(data))}
	}
	stop := heartbeat(ctx, decodeHeartbeat, progress)
	err := a.putObjects(ctx, puts)
	stop()
	return err
}

// storePuts is how many objects Process stores at once.
const storePuts = 4

// objectPut is one object Process stores in the assets bucket. body is
// called once, when the put starts.
type objectPut struct {
	key, contentType, what string
	size                   int64
	immutable              bool // a variant: cached for a year by readers
	body                   func() (io.Reader, error)
}

// putObjects stores puts in the assets bucket, storePuts at a time, and
// returns the first error (it cancels the puts still running). The
// original's body reads the temporary file, so only one put may use it: it
// is the first.
func (a *Uploads) putObjects(ctx context.Context, puts []objectPut) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(storePuts)
	for _, p := range puts {
		g.Go(func() error {
			body, err := p.body()
			if err == nil {
				opts := minio.PutObjectOptions{ContentType: p.contentType}
				if p.immutable {
					opts.CacheControl = "public, max-age=31536000, immutable"
				}
				_, err = a.Storage.PutObject(ctx, a.Buckets.AssetsBucket, p.key, body, p.size, opts)
			}
			if err != nil {
				return fmt.Errorf("store %s: %w", p.what, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// Ingest is Inspect then Process in one activity task: the single-step
// workflow path runs it instead of the two, saving a task round trip
// through the Temporal server. Both halves are idempotent and either
// rejects (not retried) or fails (retried with the workflow's policy), as
// they do on their own.
func (a *Uploads) Ingest(ctx context.Context, u workflows.Upload) (*workflows.Processed, error) {
	if err := a.Inspect(ctx, u); err != nil {
		return nil, err
	}
	return a.Process(ctx, u)
}

// MaxDecodeTimeouts is how many attempts of Process may die while decoding
// (timed out, or their worker stopped) before the upload is rejected.
const MaxDecodeTimeouts = 3

// decodeHeartbeat is how often Process heartbeats while libvips decodes.
var decodeHeartbeat = 5 * time.Second

// processImage is the decode-and-encode step (a seam for tests).
var processImage = images.Process

const (
	phaseDecoding = "decoding"
	phaseStoring  = "storing"
)

// ProcessProgress is Process's heartbeat detail: the phase it is in and how
// many earlier attempts died while decoding the same file.
type ProcessProgress struct {
	Phase          string
	DecodeTimeouts int
}

// decodeProgress reads the last heartbeat of the previous attempt: one
// that ended while decoding counts as a decode timeout. After
// MaxDecodeTimeouts of them the file is rejected rather than retried for
// ever.
func decodeProgress(ctx context.Context) (ProcessProgress, error) {
	var p ProcessProgress
	if !activity.IsActivity(ctx) || !activity.HasHeartbeatDetails(ctx) {
		return p, nil
	}
	if err := activity.GetHeartbeatDetails(ctx, &p); err != nil {
		return ProcessProgress{}, nil // details of an older version: start counting afresh
	}
	if p.Phase == phaseDecoding {
		p.DecodeTimeouts++
	}
	p.Phase = ""
	activity.RecordHeartbeat(ctx, p) // this attempt has not started decoding yet
	if p.DecodeTimeouts >= MaxDecodeTimeouts {
		return p, reject("processing the image timed out %d times; the file may be too complex to process (try a smaller or simpler image, for example re-saved as a baseline JPEG or a PNG without interlacing)", p.DecodeTimeouts)
	}
	return p, nil
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
func (a *Uploads) Record(ctx context.Context, u workflows.Upload, p *workflows.Processed) error {
	uploadID, assetID, siteID := uuid.MustParse(u.UploadID), uuid.MustParse(u.AssetID), uuid.MustParse(u.SiteID)
	kind, _ := a.AssetTypes.Lookup(u.ContentType)
	return a.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		now := time.Now().UTC()
		title := strings.TrimSuffix(path.Base(u.FileName), path.Ext(u.FileName))
		asset := &models.Asset{SiteRecord: models.SiteRecordOf(assetID, siteID, now), Title: title, ContentType: kind.ContentTypes[0],
			AssetType: kind.Type, SubType: kind.SubType}
		img := &models.AssetImage{SiteRecord: models.SiteRecordOf(models.ImageID(assetID), siteID, now), AssetID: assetID,
			StorageKey: p.OriginalKey, FileName: path.Base(u.FileName), ContentType: kind.ContentTypes[0], FileSize: p.OriginalSize,
			Width: p.Width, Height: p.Height, ImageProperties: p.Properties, Fingerprint: p.Fingerprint, Variants: p.Variants}
		found, err := models.FinishUpload(ctx, tx, uploadID, asset, img)
		if err == nil && !found {
			return reject("the upload record is gone (its site was deleted?)")
		}
		return err
	})
}

// DeleteTemporary removes the uploaded object once it is recorded.
func (a *Uploads) DeleteTemporary(ctx context.Context, u workflows.Upload) error {
	err := a.Storage.RemoveObject(ctx, a.Buckets.UploadsBucket, u.Key, minio.RemoveObjectOptions{})
	if err != nil && minio.ToErrorResponse(err).Code != "NoSuchKey" {
		return fmt.Errorf("delete the temporary upload: %w", err)
	}
	return nil
}

// removePartialObjects removes every object under prefix (an asset's) from
// bucket: what a run that did not finish may have stored.
func removePartialObjects(ctx context.Context, mc *minio.Client, bucket, prefix string) error {
	for obj := range mc.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			return fmt.Errorf("list partial objects: %w", obj.Err)
		}
		if err := mc.RemoveObject(ctx, bucket, obj.Key, minio.RemoveObjectOptions{}); err != nil {
			return fmt.Errorf("remove partial object %s: %w", obj.Key, err)
		}
	}
	return nil
}

// Fail marks the upload "error" with a message and removes any objects a
// partial run stored for it.
func (a *Uploads) Fail(ctx context.Context, u workflows.Upload, message string) error {
	if err := removePartialObjects(ctx, a.Storage, a.Buckets.AssetsBucket, u.SiteID+"/"+u.AssetID+"/"); err != nil {
		return err
	}
	uploadID, siteID, err := uploadAndSite(u)
	if err != nil {
		return err
	}
	// Any attempt (0): runs recorded before attempts were counted carry none.
	changed, err := models.FailUpload(ctx, a.DB, uploadID, siteID, 0, message)
	if err != nil {
		return err
	}
	if !changed {
		// Already marked (a repeated run) is fine; a notice not yet visible
		// must not be left "processing": retry until it is.
		exists, err := models.UploadExists(ctx, a.DB, u.UploadID)
		if err != nil {
			return err
		}
		if !exists {
			return fmt.Errorf("upload %s not visible yet", u.UploadID)
		}
	}
	return nil
}
