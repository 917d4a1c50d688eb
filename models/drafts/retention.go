package drafts

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
)

// HistoryPruneBatch bounds the records a trash batch purges and the
// versions one pruning statement of old versions deletes.
const HistoryPruneBatch = 5000

// PrunedHistory counts what PruneHistory deleted.
type PrunedHistory struct {
	// Trashed are the versions of trashed records purged past the trash
	// retention (all of each record's: it leaves the trash and its history).
	Trashed int `json:"trashed"`
	// Versions are the older versions pruned past the version retention.
	Versions int `json:"versions"`
}

// HistoryRetention is what PruneHistory keeps (PRESSROOM_TRASH_RETENTION,
// PRESSROOM_VERSION_RETENTION).
type HistoryRetention struct {
	// TrashCutoff: records whose deletion was published before it are
	// purged with all their versions.
	TrashCutoff time.Time
	// VersionCutoff: versions created before it are pruned, except the
	// Keep newest of each record.
	VersionCutoff time.Time
	Keep          int
}

// PruneHistory purges the trash and prunes old versions, across every
// site (retention is the same for all), batch versions per statement
// (models.PruneInBatches):
//
//  1. trashed records (their newest version a delete, no row) deleted
//     before TrashCutoff: every version of each record at once
//     (purgeTrash; batch counts records, not versions), so a record is
//     in the trash whole or gone;
//  2. versions created before VersionCutoff that have at least Keep newer
//     versions of their record.
//
// Neither touches a record a draft refers to (a pending restore, a draft
// in a release: releases refer to records only through their drafts).
// Pruned versions are gone from the history, the as-of reads, compare and
// the rollback of their revisions.
func PruneHistory(ctx context.Context, db bun.IDB, r HistoryRetention, batch int, progress func(PrunedHistory)) (PrunedHistory, error) {
	var done PrunedHistory
	if r.Keep < 1 {
		return done, fmt.Errorf("prune history: keep %d must be at least 1", r.Keep)
	}
	steps := []models.PruneStep{
		{What: "trashed records", Count: &done.Trashed, Run: purgeTrash(r.TrashCutoff, batch)},
		{What: "old versions", Count: &done.Versions, Args: []any{r.VersionCutoff, batch, r.Keep - 1}, Query: `DELETE FROM versions WHERE id IN (
			SELECT v.id FROM versions v WHERE v.created_at < ?0
			   AND EXISTS (SELECT 1 FROM versions n WHERE n.item_type = v.item_type AND n.item_id = v.item_id
			        AND (n.created_at, n.id) > (v.created_at, v.id) ORDER BY n.created_at DESC, n.id DESC OFFSET ?2 LIMIT 1)
			   AND NOT EXISTS (SELECT 1 FROM drafts r /* any locale */ WHERE r.item_type = v.item_type AND r.item_id = v.item_id)
			 ORDER BY v.created_at LIMIT ?1 FOR UPDATE SKIP LOCKED)`},
	}
	err := models.PruneInBatches(ctx, db, batch, steps, func() {
		if progress != nil {
			progress(done)
		}
	})
	return done, err
}

// trashedRecord is a record purgeTrash locked: its delete version.
type trashedRecord struct {
	ID       uuid.UUID `bun:"id"`
	SiteID   uuid.UUID `bun:"site_id"`
	ItemType string    `bun:"item_type"`
	ItemID   uuid.UUID `bun:"item_id"`
}

// purgeTrash is one batch of the trash purge, in its own transaction:
//
//  1. lock the delete versions (FOR UPDATE SKIP LOCKED) of at most batch
//     trashed records deleted before cutoff, the oldest deletions first
//     (a revision's deletions together, mostly);
//  2. in a second statement, whose snapshot is taken once the locks are
//     held, delete every version of those records still trashed (the
//     delete still their newest, no draft referring to them), and their
//     comments (docs/releases.md "Comments").
//
// A restore locks its record's newest version FOR SHARE in its
// transaction before it drafts (LockVersion), and the versions of the
// revision that deleted it (LockStateEnd): the purge skips a record being
// restored, and a restore that comes second finds the versions gone. The
// second statement's own snapshot sees a restore or a revert that
// committed between the first's snapshot and its locks (the first judged
// from an older snapshot: taking a lock another transaction held does not
// make Postgres re-read the row).
func purgeTrash(cutoff time.Time, batch int) func(ctx context.Context, tx bun.Tx) (int, int, error) {
	return func(ctx context.Context, tx bun.Tx) (int, int, error) {
		var recs []trashedRecord
		if err := tx.NewRaw(`SELECT d.id, d.site_id, d.item_type, d.item_id FROM versions d
 WHERE d.event = 'delete' AND d.created_at < ?
   AND NOT EXISTS (SELECT 1 FROM versions n WHERE n.item_type = d.item_type AND n.item_id = d.item_id
        AND (n.created_at, n.id) > (d.created_at, d.id))
   AND NOT EXISTS (SELECT 1 FROM drafts r /* any locale */ WHERE r.item_type = d.item_type AND r.item_id = d.item_id)
 ORDER BY d.created_at, d.revision_id, d.id LIMIT ? FOR UPDATE OF d SKIP LOCKED`, cutoff, batch).Scan(ctx, &recs); err != nil {
			return 0, 0, fmt.Errorf("lock trashed records: %w", err)
		}
		if len(recs) == 0 {
			return 0, 0, nil
		}
		ids := make([]uuid.UUID, len(recs))
		for i, r := range recs {
			ids[i] = r.ID
		}
		var n int
		err := tx.NewRaw(`WITH doomed AS (
  SELECT d.site_id, d.item_type, d.item_id FROM versions d
   WHERE d.id IN (?)
     AND NOT EXISTS (SELECT 1 FROM versions n WHERE n.item_type = d.item_type AND n.item_id = d.item_id
          AND (n.created_at, n.id) > (d.created_at, d.id))
     AND NOT EXISTS (SELECT 1 FROM drafts r /* any locale */ WHERE r.item_type = d.item_type AND r.item_id = d.item_id)),
gone AS (
  DELETE FROM versions v USING doomed
   WHERE v.site_id = doomed.site_id AND v.item_type = doomed.item_type AND v.item_id = doomed.item_id
  RETURNING v.id),
comments_gone AS (
  DELETE FROM comments c USING doomed
   WHERE c.site_id = doomed.site_id AND c.item_key = doomed.item_type || ':' || doomed.item_id::text)
SELECT count(*) FROM gone`, bun.In(ids)).Scan(ctx, &n)
		if err != nil {
			return 0, 0, fmt.Errorf("purge trashed records: %w", err)
		}
		return n, len(recs), nil
	}
}
