package replicas

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/config"
)

// Counts is what a database and its buckets hold once the work has settled.
type Counts struct {
	Uploads, Finished, Errored, Processing   int
	Assets, AssetObjects, TemporaryObjects   int
	Revisions, Published, Failed, Publishing int
	Versions, Drafts, DraftsInFlight         int
	// Scheduled revisions wait for their time; ScheduledPublished are the
	// published ones that had a publish-at.
	Scheduled, ScheduledPublished int
	// Webhook deliveries by status.
	DeliveriesPending, DeliveriesSucceeded, DeliveriesFailed int
	// TemporaryOfUploads are the temporary objects an upload row names:
	// ingestion deletes each once it has recorded (or failed) it. The rest
	// are files whose notice was refused (503 while Temporal was away) or
	// never sent; the uploads bucket's expiry rule removes them.
	TemporaryOfUploads int
}

func (c Counts) String() string {
	return fmt.Sprintf("uploads %d (finished %d, error %d, processing %d); assets %d with %d objects, %d temporary objects; "+
		"(%d of accepted uploads), revisions %d (published %d, failed %d, publishing %d, scheduled %d; %d published on schedule), versions %d; "+
		"drafts %d (%d in a revision); webhook deliveries: %d succeeded, %d pending, %d failed",
		c.Uploads, c.Finished, c.Errored, c.Processing, c.Assets, c.AssetObjects, c.TemporaryObjects, c.TemporaryOfUploads,
		c.Revisions, c.Published, c.Failed, c.Publishing, c.Scheduled, c.ScheduledPublished, c.Versions, c.Drafts, c.DraftsInFlight,
		c.DeliveriesSucceeded, c.DeliveriesPending, c.DeliveriesFailed)
}

// Count reads the counts of every site in db and of both buckets.
func Count(ctx context.Context, db bun.IDB, mc *minio.Client, st config.Storage) (Counts, error) {
	var c Counts
	err := db.NewRaw(`SELECT
		(SELECT count(*) FROM asset_uploads),
		(SELECT count(*) FROM asset_uploads WHERE status = 'finished'),
		(SELECT count(*) FROM asset_uploads WHERE status = 'error'),
		(SELECT count(*) FROM asset_uploads WHERE status = 'processing'),
		(SELECT count(*) FROM assets),
		(SELECT count(*) FROM revisions),
		(SELECT count(*) FROM revisions WHERE status = 'published'),
		(SELECT count(*) FROM revisions WHERE status = 'failed'),
		(SELECT count(*) FROM revisions WHERE status = 'publishing'),
		(SELECT count(*) FROM versions),
		(SELECT count(*) FROM drafts),
		(SELECT count(*) FROM drafts WHERE revision_id IS NOT NULL),
		(SELECT count(*) FROM revisions WHERE status = 'scheduled'),
		(SELECT count(*) FROM revisions WHERE status = 'published' AND publish_at IS NOT NULL),
		(SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'),
		(SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded'),
		(SELECT count(*) FROM webhook_deliveries WHERE status = 'failed')`).Scan(ctx,
		&c.Uploads, &c.Finished, &c.Errored, &c.Processing, &c.Assets,
		&c.Revisions, &c.Published, &c.Failed, &c.Publishing, &c.Versions, &c.Drafts, &c.DraftsInFlight,
		&c.Scheduled, &c.ScheduledPublished, &c.DeliveriesPending, &c.DeliveriesSucceeded, &c.DeliveriesFailed)
	if err != nil {
		return c, fmt.Errorf("count rows: %w", err)
	}
	objs, err := Objects(ctx, mc, st.AssetsBucket)
	if err != nil {
		return c, err
	}
	tmp, err := Objects(ctx, mc, st.UploadsBucket)
	if err != nil {
		return c, err
	}
	c.AssetObjects, c.TemporaryObjects = len(objs), len(tmp)
	if len(tmp) > 0 {
		var keys []string
		if err := db.NewRaw("SELECT key FROM asset_uploads WHERE key IN (?)", bun.In(tmp)).Scan(ctx, &keys); err != nil {
			return c, fmt.Errorf("count temporary objects of uploads: %w", err)
		}
		if keys, err = existing(ctx, mc, st.UploadsBucket, keys); err != nil {
			return c, err
		}
		c.TemporaryOfUploads = len(keys)
	}
	return c, nil
}

// existing keeps the keys that a HEAD request still finds. A listing can
// show an object deleted a moment ago (MinIO serves listings from a cache
// that a restart can leave stale), so a key is only called left over or
// orphaned once storage confirms it exists.
func existing(ctx context.Context, mc *minio.Client, bucket string, keys []string) ([]string, error) {
	var out []string
	for _, k := range keys {
		_, err := mc.StatObject(ctx, bucket, k, minio.StatObjectOptions{})
		switch {
		case err == nil:
			out = append(out, k)
		case minio.ToErrorResponse(err).Code == "NoSuchKey":
		default:
			return nil, fmt.Errorf("stat %s/%s: %w", bucket, k, err)
		}
	}
	return out, nil
}

// Objects lists every key in bucket.
func Objects(ctx context.Context, mc *minio.Client, bucket string) ([]string, error) {
	var keys []string
	for o := range mc.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true}) {
		if o.Err != nil {
			return nil, fmt.Errorf("list %s: %w", bucket, o.Err)
		}
		keys = append(keys, o.Key)
	}
	return keys, nil
}

// Settle waits until no upload is processing, no revision is publishing or
// scheduled, no webhook delivery is pending and no accepted upload's
// temporary object is left (ingestion deletes it after recording), or
// within passes; it returns the last counts.
func Settle(ctx context.Context, db bun.IDB, mc *minio.Client, st config.Storage, within time.Duration) (Counts, error) {
	deadline := time.Now().Add(within)
	for {
		c, err := Count(ctx, db, mc, st)
		if err == nil && c.Processing == 0 && c.Publishing == 0 && c.Scheduled == 0 &&
			c.DeliveriesPending == 0 && c.TemporaryOfUploads == 0 {
			return c, nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("work had not settled after %s: %s", within, c)
			}
			return c, err
		}
		select {
		case <-ctx.Done():
			return c, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// Check returns every broken invariant of settled work (nil when none):
//   - every upload ended finished or error, and each finished one made
//     exactly one asset (with its image) and no errored one made any;
//   - every object in the assets bucket lies under an asset that exists,
//     every asset has its objects, and no accepted upload's temporary
//     object is left;
//   - every revision is published, with one version per draft it named,
//     and no draft still belongs to a revision; a scheduled one (publish_at
//     set) published no earlier than its time.
//
// uploads and revisions are the ids the load generator saw accepted (202
// or 201); each must exist, so an accepted write is never lost.
func Check(ctx context.Context, db bun.IDB, mc *minio.Client, st config.Storage, uploads, revisions []string) []string {
	var bad []string
	add := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	var rows []struct {
		ID, Status string
		AssetID    *string
		ImageID    *string
	}
	if err := db.NewRaw("SELECT id, status, asset_id::text AS asset_id, asset_image_id::text AS image_id FROM asset_uploads").Scan(ctx, &rows); err != nil {
		return []string{err.Error()}
	}
	seen := map[string]bool{}
	assetOf := map[string]int{}
	for _, r := range rows {
		seen[r.ID] = true
		switch {
		case r.Status == "finished" && (r.AssetID == nil || r.ImageID == nil):
			add("upload %s finished without an asset or image", r.ID)
		case r.Status == "finished":
			assetOf[*r.AssetID]++
		case r.Status == "error" && r.AssetID != nil:
			add("upload %s ended in error but names asset %s", r.ID, *r.AssetID)
		case r.Status != "error":
			add("upload %s is still %s", r.ID, r.Status)
		}
	}
	for _, id := range uploads {
		if !seen[id] {
			add("accepted upload %s has no row", id)
		}
	}
	var assets []string
	if err := db.NewRaw("SELECT id::text FROM assets").Scan(ctx, &assets); err != nil {
		return append(bad, err.Error())
	}
	isAsset := map[string]bool{}
	for _, a := range assets {
		isAsset[a] = true
		if assetOf[a] != 1 {
			add("asset %s was made by %d finished uploads, want exactly 1", a, assetOf[a])
		}
	}
	objs, err := Objects(ctx, mc, st.AssetsBucket)
	if err != nil {
		return append(bad, err.Error())
	}
	withObjects := map[string]int{}
	for _, k := range objs {
		// Keys are <site>/<asset>/<file>.
		parts := strings.SplitN(k, "/", 3)
		if len(parts) != 3 || !isAsset[parts[1]] {
			if still, err := existing(ctx, mc, st.AssetsBucket, []string{k}); err != nil || len(still) > 0 {
				add("orphaned object %s in %s: no asset row (%v)", k, st.AssetsBucket, err)
			}
			continue
		}
		withObjects[parts[1]]++
	}
	for _, a := range assets {
		if withObjects[a] == 0 {
			add("asset %s has no object in %s", a, st.AssetsBucket)
		}
	}
	tmp, err := Objects(ctx, mc, st.UploadsBucket)
	if err != nil {
		return append(bad, err.Error())
	}
	if len(tmp) > 0 {
		var left []string
		if err := db.NewRaw("SELECT key FROM asset_uploads WHERE key IN (?)", bun.In(tmp)).Scan(ctx, &left); err != nil {
			return append(bad, err.Error())
		}
		if left, err = existing(ctx, mc, st.UploadsBucket, left); err != nil {
			return append(bad, err.Error())
		}
		if len(left) > 0 {
			add("temporary objects of accepted uploads left in %s: %v", st.UploadsBucket, left)
		}
	}

	var revs []struct {
		ID, Status    string
		Drafts        int
		VersionsCount int
		Versions      int
		PublishAt     *time.Time
		FirstVersion  *time.Time
	}
	if err := db.NewRaw(`SELECT r.id::text AS id, r.status, cardinality(r.draft_ids) AS drafts, r.versions_count,
		(SELECT count(*) FROM versions v WHERE v.revision_id = r.id) AS versions, r.publish_at,
		(SELECT min(v.created_at) FROM versions v WHERE v.revision_id = r.id) AS first_version FROM revisions r`).Scan(ctx, &revs); err != nil {
		return append(bad, err.Error())
	}
	isRev := map[string]bool{}
	for _, r := range revs {
		isRev[r.ID] = true
		if r.Status != "published" {
			add("revision %s is %s", r.ID, r.Status)
			continue
		}
		if r.Versions != r.Drafts || r.VersionsCount != r.Drafts {
			add("revision %s named %d drafts but made %d versions (versions_count %d): not exactly once", r.ID, r.Drafts, r.Versions, r.VersionsCount)
		}
		if r.PublishAt != nil && r.FirstVersion != nil && r.FirstVersion.Before(*r.PublishAt) {
			add("scheduled revision %s published at %s, before its time %s", r.ID, r.FirstVersion.Format(time.RFC3339Nano), r.PublishAt.Format(time.RFC3339Nano))
		}
	}
	for _, id := range revisions {
		if !isRev[id] {
			add("accepted revision %s has no row", id)
		}
	}
	var inFlight int
	if err := db.NewRaw("SELECT count(*) FROM drafts WHERE revision_id IS NOT NULL").Scan(ctx, &inFlight); err != nil {
		return append(bad, err.Error())
	}
	if inFlight > 0 {
		add("%d drafts still belong to a revision", inFlight)
	}
	return bad
}
