package api

import (
	"context"
	"fmt"
	"log/slog"
	"path"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/minio/minio-go/v7"
	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/storage"
	"github.com/pressroom/pressroom/workflows"
)

type uploadsHandler struct {
	db       *bun.DB
	storage  *minio.Client
	temporal client.Client
	cfg      config.Config
	types    models.AssetTypes
	links    links
	log      *slog.Logger
	faults   Faults
}

type signatureRequest struct {
	Filename    string `json:"filename" oas:"required"`
	ContentType string `json:"content-type" oas:"required"`
}

type signatureAttributes struct {
	Filename    string `json:"filename"`
	Key         string `json:"key"`
	ACL         string `json:"acl"`
	ContentType string `json:"content-type"`
	Policy      string `json:"policy"`
	Endpoint    string `json:"endpoint" oas:"uri"`
	Credential  string `json:"x-storage-credential"`
	Algorithm   string `json:"x-storage-algorithm"`
	Date        string `json:"x-storage-date"`
	Signature   string `json:"x-storage-signature"`
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// sanitiseFilename keeps a file name safe as the last segment of an object
// key: no directories (so no traversal), no control or odd characters, no
// leading dots, at most 100 bytes, extension kept.
func sanitiseFilename(name string) string {
	name = strings.ReplaceAll(name, `\`, "/")
	name = path.Base(name)
	name = unsafeChars.ReplaceAllString(name, "-")
	name = strings.TrimLeft(name, ".-")
	if len(name) > 100 {
		ext := path.Ext(name)
		if len(ext) > 10 {
			ext = ""
		}
		name = name[:100-len(ext)] + ext
	}
	if name == "" || name == "." {
		name = "file"
	}
	return name
}

// createSignature serves POST /upload-signatures: an S3 POST policy for
// exactly one key, one content type and a bounded size, valid one hour.
func (h uploadsHandler) createSignature(c *fiber.Ctx) error {
	data, err := decodeCreate[signatureRequest](c, "upload-signatures")
	if err != nil {
		return err
	}
	attrs := data.Attributes
	attrs.Filename = cleanText(attrs.Filename)
	if strings.TrimSpace(attrs.Filename) == "" || utf8.RuneCountInString(attrs.Filename) > 255 {
		return jsonapi.Unprocessable("invalid_filename", "filename is required (at most 255 characters).").AtPointer("/data/attributes/filename")
	}
	if _, ok := h.types.Lookup(attrs.ContentType); !ok || strings.Contains(attrs.ContentType, ";") {
		return jsonapi.Unprocessable("unsupported_content_type", "content-type must be one of the types GET /asset-types lists.").AtPointer("/data/attributes/content-type")
	}
	contentType := strings.ToLower(strings.TrimSpace(attrs.ContentType))
	pr := oauth.PrincipalOf(c)
	sigID := uuid.New()
	key := pr.SiteID.String() + "/" + sigID.String() + "/" + sanitiseFilename(attrs.Filename)
	// Whole milliseconds, as stored: GET /upload-signatures/:id signs the
	// stored record again and must answer the same fields.
	now := time.Now().UTC().Truncate(time.Millisecond)
	sig := &models.UploadSignature{SiteRow: models.SiteRow{ID: sigID, SiteID: pr.SiteID, CreatedAt: now}, Key: key,
		Filename: attrs.Filename, ContentType: contentType, MaxBytes: h.cfg.MaxUploadBytes, ExpiresAt: now.Add(h.cfg.SignatureTTL)}
	res, err := h.signatureResource(sig)
	if err != nil {
		return err
	}
	err = runTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
		auditItem(ctx, sig.ID)
		return models.RecordSignature(ctx, tx, sig)
	})
	if err != nil {
		return err
	}
	return respond(c, fiber.StatusOK, jsonapi.Document{Data: res})
}

// signatureResource renders a signature with its POST policy, signed for
// its key, content type, size and times (the same fields each time).
func (h uploadsHandler) signatureResource(sig *models.UploadSignature) (*jsonapi.Resource, error) {
	pp, err := storage.SignPost(h.cfg.Storage, sig.Key, sig.ContentType, sig.MaxBytes, sig.CreatedAt, sig.ExpiresAt)
	if err != nil {
		return nil, err
	}
	return &jsonapi.Resource{Type: "upload-signatures", ID: sig.ID.String(), Links: h.links.self("/upload-signatures/" + sig.ID.String()),
		Attributes: signatureAttributes{
			Filename: sig.Filename, Key: sig.Key, ACL: pp.ACL, ContentType: sig.ContentType, Policy: pp.Policy, Endpoint: pp.Endpoint,
			Credential: pp.Credential, Algorithm: pp.Algorithm, Date: pp.Date, Signature: pp.Signature,
		}}, nil
}

// fetchSignatures renders the site's signatures with the given ids.
func (h uploadsHandler) fetchSignatures(ctx context.Context, siteID uuid.UUID, ids []uuid.UUID, _ bool) ([]*jsonapi.Resource, error) {
	sigs, err := models.ByIDs[models.UploadSignature](ctx, h.db, siteID, ids)
	if err != nil {
		return nil, err
	}
	out := make([]*jsonapi.Resource, len(sigs))
	for i := range sigs {
		if out[i], err = h.signatureResource(&sigs[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

type uploadRequest struct {
	FileName    string `json:"file-name" oas:"required"`
	Key         string `json:"key" oas:"required"`
	ContentType string `json:"content-type"`
	FileSize    *int64 `json:"file-size" oas:"required"`
	UserAgent   string `json:"user-agent"`
}

type uploadAttributes struct {
	FileName     string  `json:"file-name"`
	Key          string  `json:"key"`
	ContentType  string  `json:"content-type"`
	FileSize     int64   `json:"file-size"`
	UserAgent    string  `json:"user-agent"`
	Status       string  `json:"status" oas:"enum:upload-status"`
	ErrorMessage *string `json:"error-message"`
	timestamps
}

func (h uploadsHandler) resource(u *models.AssetUpload) *jsonapi.Resource {
	p := "/asset-uploads/" + u.ID.String()
	var assetID, imageID *string
	if u.Status == models.UploadFinished && u.AssetID != nil && u.AssetImageID != nil {
		a, i := u.AssetID.String(), u.AssetImageID.String()
		assetID, imageID = &a, &i
	}
	return &jsonapi.Resource{Type: "asset-uploads", ID: u.ID.String(), Links: h.links.self(p),
		Attributes: uploadAttributes{FileName: u.FileName, Key: u.Key, ContentType: u.ContentType, FileSize: u.FileSize,
			UserAgent: u.UserAgent, Status: u.Status, ErrorMessage: u.ErrorMessage, timestamps: timestampsOf(u.CreatedAt, u.UpdatedAt)},
		Relationships: map[string]*jsonapi.Relationship{
			"asset":      h.links.relationship(p, "asset", jsonapi.ToOne("assets", assetID)),
			"asset-file": h.links.relationship(p, "asset-file", jsonapi.ToOne("asset-images", imageID)),
		}}
}

// createUpload serves POST /asset-uploads: validates the notice, records it
// in its site's queue and starts the ingestion workflow; 202 with status
// "processing" (and meta.queue-position when it waits for its turn).
// Posting the same key again after an error starts a new attempt.
func (h uploadsHandler) createUpload(c *fiber.Ctx) error {
	data, err := decodeCreate[uploadRequest](c, "asset-uploads")
	if err != nil {
		return err
	}
	attrs := data.Attributes
	attrs.FileName, attrs.UserAgent = cleanText(attrs.FileName), cleanText(attrs.UserAgent)
	pr := oauth.PrincipalOf(c)
	ctx := c.UserContext()
	switch {
	case strings.TrimSpace(attrs.FileName) == "" || utf8.RuneCountInString(attrs.FileName) > 255:
		return invalidAttr("file-name", "invalid_file_name", "file-name is required (at most 255 characters).")
	case attrs.Key == "":
		return invalidAttr("key", "invalid_key", "key is required: the key of the upload signature.")
	case attrs.FileSize == nil || *attrs.FileSize < 1:
		return invalidAttr("file-size", "invalid_file_size", "file-size is required: the file's size in bytes.")
	case *attrs.FileSize > h.cfg.MaxUploadBytes:
		return invalidAttr("file-size", "file_too_large", fmt.Sprintf("The file is %d bytes; the limit is %d bytes.", *attrs.FileSize, h.cfg.MaxUploadBytes))
	case utf8.RuneCountInString(attrs.UserAgent) > 512:
		return invalidAttr("user-agent", "invalid_user_agent", "user-agent is at most 512 characters.")
	}
	if _, ok := h.types.Lookup(attrs.ContentType); !ok || strings.Contains(attrs.ContentType, ";") {
		return invalidAttr("content-type", "unsupported_content_type", "content-type must be one of the types GET /asset-types lists.")
	}
	sig, err := models.SignatureByKey(ctx, h.db, pr.SiteID, attrs.Key)
	if models.IsNoRows(err) {
		return invalidAttr("key", "unknown_key", "This key was not issued to your site by POST /upload-signatures.")
	} else if err != nil {
		return err
	}
	if !strings.EqualFold(sig.ContentType, strings.TrimSpace(attrs.ContentType)) {
		return invalidAttr("content-type", "content_type_mismatch", fmt.Sprintf("The signature was issued for %s.", sig.ContentType))
	}
	// The notice names the object as it is now: ingestion reads only this
	// version (its ETag), so bytes posted to the key later never reach an
	// asset. A notice without its file is refused here rather than waited
	// for by the worker.
	obj, err := h.storage.StatObject(ctx, h.cfg.Storage.UploadsBucket, attrs.Key, minio.StatObjectOptions{})
	if minio.ToErrorResponse(err).Code == "NoSuchKey" {
		// A finished upload's file is gone from the uploads bucket: say so.
		if existing, err := models.UploadByKey(ctx, h.db, pr.SiteID, attrs.Key, false); err == nil && existing.Status != models.UploadError {
			return h.alreadyUploaded(existing)
		}
		return invalidAttr("key", "file_missing", "No file is stored under this key yet: upload it with the signature's form fields, then notify.")
	} else if err != nil {
		return jsonapi.Unavailable("The file storage is unreachable; try again shortly.").WithHeader("Retry-After", "5")
	}

	up, position, err := h.recordNotice(ctx, pr, attrs, sig, obj.ETag)
	if err != nil {
		return err
	}
	if err := h.faults.afterCommit("asset-uploads", up.ID); err != nil {
		return err
	}
	h.startIngestion(ctx, up)
	c.Set(fiber.HeaderLocation, h.links.base+"/asset-uploads/"+up.ID.String())
	return respond(c, fiber.StatusAccepted, jsonapi.Document{Data: withQueuePosition(h.resource(up), position)})
}

// recordNotice records the notice in its site's queue, in one
// transaction: a new upload, or a new attempt of one that ended in error.
// Its ingestion is started after the commit (startIngestion). It returns
// the upload and its queue position (0 when it took a processing slot at
// once).
func (h uploadsHandler) recordNotice(ctx context.Context, pr *oauth.Principal, attrs uploadRequest, sig *models.UploadSignature, etag string) (*models.AssetUpload, int, error) {
	var up *models.AssetUpload
	var position int
	err := runTx(ctx, h.db, func(ctx context.Context, tx bun.Tx) error {
		queue, err := h.admit(ctx, tx, pr.SiteID)
		if err != nil {
			return err
		}
		existing, err := models.UploadByKey(ctx, tx, pr.SiteID, attrs.Key, true)
		now := time.Now().UTC()
		switch {
		case models.IsNoRows(err):
			up = &models.AssetUpload{SiteRecord: models.SiteRecordOf(uuid.New(), pr.SiteID, now), UserID: models.Person(pr.UserID), SignatureID: sig.ID, Attempt: 1}
		case err != nil:
			return err
		case existing.Status != models.UploadError:
			return h.alreadyUploaded(existing)
		default:
			up = existing
			up.Attempt++
		}
		up.FileName, up.Key, up.ContentType, up.FileSize, up.UserAgent = attrs.FileName, attrs.Key, sig.ContentType, *attrs.FileSize, attrs.UserAgent
		up.Status, up.ErrorMessage, up.UpdatedAt = models.UploadProcessing, nil, now
		up.QueuedAt, up.DispatchedAt, up.ETag, up.StartedAt, position = now, nil, etag, nil, queue.Waiting+1
		if queue.Waiting == 0 && queue.Running < h.cfg.SiteUploadLimit {
			// Nothing waits and a slot is free: this upload takes it now,
			// and its run starts the image work without waiting.
			up.DispatchedAt, position = &now, 0
		}
		if err := models.SaveUpload(ctx, tx, up); err != nil {
			return err
		}
		auditItem(ctx, up.ID)
		return h.faults.beforeCommit("asset-uploads", up.ID)
	})
	return up, position, err
}

// alreadyUploaded is the answer to a notice for a key whose upload is
// processing or finished: the signature is spent.
func (h uploadsHandler) alreadyUploaded(existing *models.AssetUpload) error {
	return jsonapi.Conflict("already_uploaded", fmt.Sprintf("An upload for this key is already %s: GET %s.", existing.Status, h.links.base+"/asset-uploads/"+existing.ID.String())).AtPointer("/data/attributes/key")
}

// admit counts the site's processing uploads under the site's upload lock
// (models.LockSiteUploads) and refuses the notice while
// cfg.SiteUploadBacklog of them wait for their turn: every other valid
// notice is accepted and waits in the site's queue (docs/assets.md).
func (h uploadsHandler) admit(ctx context.Context, tx bun.Tx, siteID uuid.UUID) (models.SiteUploads, error) {
	n, err := models.LockSiteUploads(ctx, tx, siteID)
	if err != nil {
		return n, err
	}
	if n.Waiting >= h.cfg.SiteUploadBacklog {
		return n, jsonapi.NewError(fiber.StatusTooManyRequests, "too_many_uploads",
			fmt.Sprintf("Your site already has %d uploads waiting to be processed, the most it may have; notify this one when fewer wait.", n.Waiting)).
			WithHeader("Retry-After", "30")
	}
	return n, nil
}

// withQueuePosition adds meta.queue-position to a waiting upload's
// resource: its 1-based place among its site's waiting uploads (0: not
// waiting, no meta).
func withQueuePosition(r *jsonapi.Resource, position int) *jsonapi.Resource {
	if position > 0 {
		r.Meta = map[string]any{"queue-position": position}
	}
	return r
}

// startIngestion starts the ingestion of the committed attempt and marks it
// started (docs/architecture.md, "From a commit to a workflow"). A start
// that fails is not the client's concern: the attempt is recorded, and the
// worker's commit sweep starts what is left unstarted, so the answer is
// 202 all the same. A new attempt may find the previous attempt's run
// still closing (it marked the upload error, and wakes its site's next
// uploads): it waits briefly for that run, then starts once more.
func (h uploadsHandler) startIngestion(ctx context.Context, up *models.AssetUpload) {
	in := workflows.UploadOf(up)
	err := workflows.StartAssetUpload(ctx, h.temporal, h.cfg.TaskQueue, in)
	if workflows.IsAlreadyStarted(err) && up.Attempt > 1 {
		wait, cancel := context.WithTimeout(ctx, 2*time.Second)
		_ = h.temporal.GetWorkflow(wait, workflows.AssetUploadID(in.UploadID), "").Get(wait, nil)
		cancel()
		err = workflows.StartAssetUpload(ctx, h.temporal, h.cfg.TaskQueue, in)
	}
	if err == nil {
		err = models.MarkUploadStarted(ctx, h.db, up.ID, up.Attempt)
	}
	if err != nil && !workflows.IsAlreadyStarted(err) {
		h.log.WarnContext(ctx, "upload recorded, its ingestion not started: the commit sweep starts it", "upload", up.ID, "error", err)
	}
}

// loadUpload finds an upload of the caller's site.
func (h uploadsHandler) loadUpload(c *fiber.Ctx) (*models.AssetUpload, error) {
	return loadByID(c, h.db, "asset upload", models.FindUpload)
}

// uploadSpec is the query GET /asset-uploads/:id reads: include and
// fields, and wait.
var uploadSpec = QuerySpec{Includes: includesOf("asset-uploads"), Fields: fieldsOf("asset-uploads"), Extra: []string{"wait"}}

// getUpload serves GET /asset-uploads/:id.
func (h uploadsHandler) getUpload(cat *catalog) fiber.Handler {
	return func(c *fiber.Ctx) error {
		q, err := parseQuery(c, uploadSpec)
		if err != nil {
			return err
		}
		up, err := h.loadUpload(c)
		if err != nil {
			return err
		}
		if q.Values.Has("wait") {
			if up, err = h.waitForUpload(c, up, q.Values.Get("wait")); err != nil {
				return err
			}
		}
		position, err := models.QueuePosition(c.UserContext(), h.db, up)
		if err != nil {
			return err
		}
		return cat.respondOne(c, q, fiber.StatusOK, withQueuePosition(h.resource(up), position))
	}
}

// registerUploadRoutes registers /upload-signatures and /asset-uploads
// (their asset and asset-file relationships: catalog.routes).
func registerUploadRoutes(r routes) {
	d := r.deps
	uploads := uploadsHandler{db: d.DB, storage: d.Storage, temporal: d.Temporal, cfg: d.Config, types: d.AssetTypes, links: r.links,
		log: d.Log, faults: r.faults}
	sigs := &resourceType{typ: "upload-signatures", what: "upload signature", fetch: uploads.fetchSignatures}
	r.cat.add(sigs)
	r.cat.add(&resourceType{typ: "asset-uploads", what: "asset upload", fetch: byIDs(d.DB, uploads.resource)})
	r.post("/upload-signatures", models.PermUpload, uploads.createSignature)
	r.get("/upload-signatures/:id", models.PermRead, r.cat.get(sigs))
	r.post("/asset-uploads", models.PermUpload, uploads.createUpload)
	r.get("/asset-uploads/:id", models.PermRead, uploads.getUpload(r.cat))
}
