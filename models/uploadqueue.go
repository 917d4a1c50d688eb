package models

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/webhooks"
)

// The per-site upload queue (docs/assets.md, "The queue"). A site's
// processing uploads either hold one of its processing slots (dispatched_at
// set) or wait for one, in the order of queued_at (then id). The table is
// the queue: the API adds to it in the notice's transaction, an ingestion
// workflow takes a slot with TakeUploadSlot before its image work, and gives
// it back by ending the upload (finished or error), after which
// NextWaitingUploads names the uploads to wake. Every change of a site's
// slots happens under the site's transaction lock (lockSiteUploads), so the
// limit holds with any number of API replicas and workers.

// SiteUploads counts a site's processing uploads.
type SiteUploads struct {
	// Running hold a processing slot; Waiting wait for one.
	Running, Waiting int
}

// lockSiteUploads takes the site's upload lock until the end of tx.
func lockSiteUploads(ctx context.Context, tx bun.Tx, siteID uuid.UUID) error {
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", "asset-uploads:"+siteID.String()); err != nil {
		return fmt.Errorf("lock site uploads: %w", err)
	}
	return nil
}

// LockSiteUploads counts the site's processing uploads under the site's
// upload lock, held to the end of the caller's transaction, so a decision
// taken on the counts (refuse the notice, give it a slot at once) holds
// across API replicas.
func LockSiteUploads(ctx context.Context, tx bun.Tx, siteID uuid.UUID) (SiteUploads, error) {
	var n SiteUploads
	if err := lockSiteUploads(ctx, tx, siteID); err != nil {
		return n, err
	}
	err := tx.NewRaw(`SELECT count(*) FILTER (WHERE dispatched_at IS NOT NULL), count(*) FILTER (WHERE dispatched_at IS NULL)
		FROM asset_uploads WHERE site_id = ? AND status = ?`, siteID, UploadProcessing).Scan(ctx, &n.Running, &n.Waiting)
	if err != nil {
		return n, fmt.Errorf("count processing uploads: %w", err)
	}
	return n, nil
}

// UploadTurn is an upload attempt's place in its site's queue.
type UploadTurn struct {
	// Claimed is false when the attempt is no longer processing (it ended,
	// or a later attempt of the upload took over): nothing to do.
	Claimed bool
	// Granted: the attempt holds one of its site's processing slots.
	Granted bool
	// Position is the attempt's 1-based place among its site's waiting
	// uploads, when it is not Granted.
	Position int
}

// TakeUploadSlot gives the attempt a processing slot of its site if it
// holds none and its turn has come: fewer than limit of the site's uploads
// hold one, and no more waiting uploads are ahead of it than there are free
// slots (a site's uploads are taken in the order they were noticed).
// Taking it again is harmless: an attempt that holds a slot keeps it.
func TakeUploadSlot(ctx context.Context, db bun.IDB, uploadID, siteID uuid.UUID, attempt, limit int) (UploadTurn, error) {
	var turn UploadTurn
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		turn = UploadTurn{}
		if err := lockSiteUploads(ctx, tx, siteID); err != nil {
			return err
		}
		var up AssetUpload
		err := tx.NewSelect().Model(&up).Column("status", "attempt", "dispatched_at").
			Where("id = ? AND site_id = ?", uploadID, siteID).Scan(ctx)
		if IsNoRows(err) || (err == nil && (up.Attempt != attempt || up.Status != UploadProcessing)) {
			return nil
		} else if err != nil {
			return fmt.Errorf("read the upload: %w", err)
		}
		turn.Claimed = true
		if up.DispatchedAt != nil {
			turn.Granted = true
			return nil
		}
		var running, ahead int
		err = tx.NewRaw(`SELECT count(*) FILTER (WHERE u.dispatched_at IS NOT NULL),
				count(*) FILTER (WHERE u.dispatched_at IS NULL AND (u.queued_at, u.id) < (me.queued_at, me.id))
			FROM asset_uploads u, (SELECT queued_at, id FROM asset_uploads WHERE id = ?) me
			WHERE u.site_id = ? AND u.status = ?`, uploadID, siteID, UploadProcessing).Scan(ctx, &running, &ahead)
		if err != nil {
			return fmt.Errorf("count the site's queue: %w", err)
		}
		if ahead >= limit-running {
			turn.Position = ahead + 1
			return nil
		}
		if _, err := tx.NewUpdate().Model((*AssetUpload)(nil)).Set("dispatched_at = ?", time.Now().UTC()).
			Where("id = ?", uploadID).Exec(ctx); err != nil {
			return fmt.Errorf("take a processing slot: %w", err)
		}
		turn.Granted = true
		return nil
	})
	return turn, err
}

// NextWaitingUploads lists the site's waiting uploads whose turn has come:
// the first ones in queue order, as many as the site has free slots (limit
// minus the uploads holding one). Ingestion wakes them when an upload ends;
// each then takes its slot with TakeUploadSlot.
func NextWaitingUploads(ctx context.Context, db bun.IDB, siteID uuid.UUID, limit int) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	err := db.NewRaw(`SELECT id FROM asset_uploads
		WHERE site_id = ? AND status = ? AND dispatched_at IS NULL
		ORDER BY queued_at, id
		LIMIT greatest(0, ? - (SELECT count(*) FROM asset_uploads WHERE site_id = ? AND status = ? AND dispatched_at IS NOT NULL))`,
		siteID, UploadProcessing, limit, siteID, UploadProcessing).Scan(ctx, &ids)
	if err != nil && !IsNoRows(err) {
		return nil, fmt.Errorf("find the next waiting uploads: %w", err)
	}
	return ids, nil
}

// QueuePosition is a waiting upload's 1-based place among its site's
// waiting uploads (0 for an upload that is not waiting).
func QueuePosition(ctx context.Context, db bun.IDB, up *AssetUpload) (int, error) {
	if up.Status != UploadProcessing || up.DispatchedAt != nil {
		return 0, nil
	}
	var ahead int
	err := db.NewRaw(`SELECT count(*) FROM asset_uploads
		WHERE site_id = ? AND status = ? AND dispatched_at IS NULL
		AND (queued_at, id) < (SELECT queued_at, id FROM asset_uploads WHERE id = ?)`,
		up.SiteID, UploadProcessing, up.ID).Scan(ctx, &ahead)
	if err != nil {
		return 0, fmt.Errorf("find the upload's queue position: %w", err)
	}
	return ahead + 1, nil
}

// QueueHead is an upload at the head of its site's queue: holding a slot,
// or among the first waiting ones.
type QueueHead struct {
	ID, SiteID uuid.UUID
	Attempt    int
}

// UploadQueueHeads lists, oldest first and at most batch, the uploads at
// the head of their site's queue (holding a slot, or among the first limit
// waiting) whose notice is older than before: the uploads whose runs the
// hourly sweep checks are still alive (a dead one there would hold its
// site's queue for good).
func UploadQueueHeads(ctx context.Context, db bun.IDB, limit int, before time.Time, batch int) ([]QueueHead, error) {
	var heads []QueueHead
	err := db.NewRaw(`SELECT id, site_id, attempt FROM (
			SELECT id, site_id, attempt, updated_at, dispatched_at,
				row_number() OVER (PARTITION BY site_id, dispatched_at IS NULL ORDER BY queued_at, id) AS place
			FROM asset_uploads WHERE status = ?) q
		WHERE (dispatched_at IS NOT NULL OR place <= ?) AND updated_at < ?
		ORDER BY updated_at LIMIT ?`, UploadProcessing, limit, before, batch).Scan(ctx, &heads)
	if err != nil && !IsNoRows(err) {
		return nil, fmt.Errorf("find the heads of the upload queues: %w", err)
	}
	return heads, nil
}

// FailUpload ends a processing upload in error with message, and records
// the webhook event in the same transaction (docs/webhooks.md). attempt,
// when above 0, must be the upload's current one. It reports whether it
// changed the upload (false: not processing, or another attempt).
func FailUpload(ctx context.Context, db bun.IDB, uploadID, siteID uuid.UUID, attempt int, message string) (bool, error) {
	var changed bool
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		q := tx.NewUpdate().Model((*AssetUpload)(nil)).
			Set("status = ?, error_message = ?, updated_at = now()", UploadError, message).
			Where("id = ? AND site_id = ? AND status = ?", uploadID, siteID, UploadProcessing)
		if attempt > 0 {
			q = q.Where("attempt = ?", attempt)
		}
		res, err := q.Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		changed = true
		return RecordEvent(ctx, tx, Event{SiteID: siteID, Type: webhooks.AssetUploadError, SubjectType: "asset-uploads", SubjectID: uploadID})
	})
	if err != nil {
		return false, fmt.Errorf("mark the upload failed: %w", err)
	}
	return changed, nil
}
