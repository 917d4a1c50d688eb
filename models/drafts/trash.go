package drafts

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
)

// The trash (issue 31, docs/history.md): the records whose deletion a
// revision published. Their rows are gone; their versions keep them, the
// newest a delete whose snapshot is the row as it was. They stay there
// until restored (POST /versions/:id/restore drafts them back, and they
// leave the trash) or purged past the trash retention (PruneHistory).

// Trashed is one record of the trash: its delete version (the revision
// that deleted it, when) and its row just before.
type Trashed struct {
	Delete *Version
	Row    Row
}

// trashedWhere selects the delete versions that are their record's newest
// and whose record has no row (a restore's create draft takes it out of
// the trash). ?0 the site, ?1 the kind, ?2 its table.
const trashedWhere = `v.site_id = ?0 AND v.item_type = ?1 AND v.event = 'delete'
   AND NOT EXISTS (SELECT 1 FROM versions n WHERE n.item_type = v.item_type AND n.item_id = v.item_id
        AND (n.created_at, n.id) > (v.created_at, v.id))
   AND NOT EXISTS (SELECT 1 FROM ?2 t WHERE t.id = v.item_id)`

// TrashedItems is one page of the site's trashed records of kind k, the
// latest deleted first (models.OrderTrash), and how many the trash holds:
// page's Limit and Offset, or its Keyset, a cursor page after (before) a
// delete version, which reads one version more than the page and counts
// nothing (the total is the versions read), as any list's cursor page.
func TrashedItems(ctx context.Context, db bun.IDB, siteID uuid.UUID, k *Kind, page models.ListQuery) ([]Trashed, int64, error) {
	if page.Limit <= 0 || page.Offset < 0 {
		return nil, 0, fmt.Errorf("trashed %s: page %d+%d out of range", k.Type, page.Offset, page.Limit)
	}
	page.DefaultSort, page.Sort, page.Filters, page.Search = models.OrderTrash, nil, nil, nil
	var vs []*Version
	total, err := page.Apply(db.NewSelect().Model(&vs).Where(trashedWhere, siteID, k.Type, bun.Ident(k.Table))).ScanAndCount(ctx)
	if err != nil && !models.IsNoRows(err) {
		return nil, 0, fmt.Errorf("trashed %s: %w", k.Type, err)
	}
	out := make([]Trashed, 0, len(vs))
	for _, v := range vs {
		row, err := v.RestoreState()
		if err != nil {
			return nil, 0, err
		}
		if row == nil { // a delete without its snapshot: nothing to show
			continue
		}
		row["trashed_at"] = v.CreatedAt.UTC().Format(time.RFC3339Nano)
		out = append(out, Trashed{Delete: v, Row: row})
	}
	return out, total, nil
}

// LockStateEnd is when the state v describes stopped being live: the
// start of the revision that wrote the record's next version (for a
// delete, its own revision's), or now when v is the newest. A restore of
// a deleted record brings back its children as they were then
// (ChildrenAsOf), so restoring the last version before a delete brings
// back the contents added after that version too.
//
// In the restore's transaction tx it locks that revision's versions FOR
// SHARE (the children's delete versions among them: the trash purge skips
// them while the restore lasts) and answers 409 history_incomplete when
// fewer remain than the revision wrote: a child deleted with the record
// was purged from the trash already (a batch of the purge took it before
// its parent), so the record would come back without it.
func LockStateEnd(ctx context.Context, tx bun.IDB, v *Version) (time.Time, error) {
	revision := v.RevisionID
	if v.Event != EventDelete {
		var next []uuid.UUID
		err := tx.NewRaw(`SELECT revision_id FROM versions n WHERE n.item_type = ? AND n.item_id = ?
   AND (n.created_at, n.id) > (?, ?) ORDER BY n.created_at, n.id LIMIT 1`, v.ItemType, v.ItemID, v.CreatedAt, v.ID).Scan(ctx, &next)
		if err != nil {
			return time.Time{}, fmt.Errorf("next version: %w", err)
		}
		if len(next) == 0 {
			return time.Now(), nil
		}
		revision = next[0]
	}
	var end struct {
		Start   *time.Time `bun:"start"`
		Left    int        `bun:"left"`
		Written int        `bun:"written"`
	}
	err := tx.NewRaw(`SELECT min(l.created_at) AS start, count(*) AS left,
  (SELECT versions_count FROM revisions WHERE id = ?0) AS written
  FROM (SELECT created_at FROM versions WHERE revision_id = ?0 FOR SHARE) l`, revision).Scan(ctx, &end)
	if err != nil {
		return time.Time{}, fmt.Errorf("lock the versions of revision %s: %w", revision, err)
	}
	if end.Left < end.Written || end.Start == nil {
		return time.Time{}, HistoryIncomplete()
	}
	return *end.Start, nil
}

// HistoryIncomplete is the 409 of a restore of a deleted record whose
// deletion's revision lost versions to the trash purge.
func HistoryIncomplete() error {
	return &models.Error{Kind: models.ErrConflict, Code: "history_incomplete",
		Detail: "Part of the history the restore needs (a record deleted with this one) was purged from the trash; the record cannot come back whole."}
}

// LockVersion re-reads the site's version id of the record typ/itemID in
// the restore's transaction tx, FOR SHARE, after locking the record's
// newest version FOR NO KEY UPDATE (first, the order the purge takes them
// in): the trash purge locks a trashed record's newest version FOR UPDATE
// SKIP LOCKED, so it skips a record being restored, and a restore after a
// purge finds the version gone (404). Two restores of one record wait for
// each other: the second then finds the record back with its draft
// (draft_pending), not a half-seen create (a page's path_taken by itself,
// a pages_pkey violation).
func LockVersion(ctx context.Context, tx bun.IDB, siteID, id uuid.UUID, typ string, itemID uuid.UUID) (*Version, error) {
	var newest []uuid.UUID
	if err := tx.NewRaw(`SELECT id FROM versions WHERE site_id = ? AND item_type = ? AND item_id = ?
 ORDER BY created_at DESC, id DESC LIMIT 1 FOR NO KEY UPDATE`, siteID, typ, itemID).Scan(ctx, &newest); err != nil {
		return nil, fmt.Errorf("lock the newest version: %w", err)
	}
	v := new(Version)
	err := tx.NewSelect().Model(v).Where("id = ? AND site_id = ?", id, siteID).For("SHARE").Scan(ctx)
	if models.IsNoRows(err) {
		return nil, models.NotFound("version")
	}
	if err != nil {
		return nil, fmt.Errorf("lock the version: %w", err)
	}
	return v, nil
}
