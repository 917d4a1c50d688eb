package drafts

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
)

// HistoryPruneBatch bounds the versions one pruning statement deletes.
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
//     before TrashCutoff: every version of each, the delete last (so a
//     record half purged by an interrupted run is still in the trash and
//     the next run finishes it);
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
		{What: "trashed records", Count: &done.Trashed, Args: []any{r.TrashCutoff, batch}, Query: `DELETE FROM versions WHERE id IN (
			SELECT v.id FROM versions d JOIN versions v ON v.item_type = d.item_type AND v.item_id = d.item_id AND v.site_id = d.site_id
			 WHERE d.event = 'delete' AND d.created_at < ?0
			   AND NOT EXISTS (SELECT 1 FROM versions n WHERE n.item_type = d.item_type AND n.item_id = d.item_id
			        AND (n.created_at, n.id) > (d.created_at, d.id))
			   AND NOT EXISTS (SELECT 1 FROM drafts r WHERE r.item_type = d.item_type AND r.item_id = d.item_id)
			 ORDER BY v.event = 'delete', v.created_at LIMIT ?1 FOR UPDATE OF v SKIP LOCKED)`},
		{What: "old versions", Count: &done.Versions, Args: []any{r.VersionCutoff, batch, r.Keep - 1}, Query: `DELETE FROM versions WHERE id IN (
			SELECT v.id FROM versions v WHERE v.created_at < ?0
			   AND EXISTS (SELECT 1 FROM versions n WHERE n.item_type = v.item_type AND n.item_id = v.item_id
			        AND (n.created_at, n.id) > (v.created_at, v.id) ORDER BY n.created_at DESC, n.id DESC OFFSET ?2 LIMIT 1)
			   AND NOT EXISTS (SELECT 1 FROM drafts r WHERE r.item_type = v.item_type AND r.item_id = v.item_id)
			 ORDER BY v.created_at LIMIT ?1 FOR UPDATE SKIP LOCKED)`},
	}
	err := models.PruneInBatches(ctx, db, batch, steps, func() {
		if progress != nil {
			progress(done)
		}
	})
	return done, err
}
