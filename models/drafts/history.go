package drafts

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
)

// A record's history (issue 31, docs/history.md): its versions newest
// first, by cursor, and the record as it was live at a point in time,
// from the state each version keeps.

// fillStates sets each version's State to its item's row as the
// transaction now holds it (after the publish or revert applied it): one
// query per kind. A deleted item has no row; its state stays null.
func fillStates(ctx context.Context, tx bun.Tx, vs []Version) error {
	for _, typ := range []string{"pages", "contents", "content-blocks"} {
		var ids []uuid.UUID
		for _, v := range vs {
			if v.ItemType == typ && v.Event != EventDelete {
				ids = append(ids, v.ItemID)
			}
		}
		if len(ids) == 0 {
			continue
		}
		var rows []struct {
			ID  uuid.UUID       `bun:"id"`
			Row json.RawMessage `bun:"row"`
		}
		if err := tx.NewRaw("SELECT id, to_jsonb(t) AS row FROM ? t WHERE id IN (?)",
			bun.Ident(kinds[typ].Table), bun.In(ids)).Scan(ctx, &rows); err != nil {
			return fmt.Errorf("states of %s: %w", typ, err)
		}
		byID := make(map[uuid.UUID]json.RawMessage, len(rows))
		for _, r := range rows {
			byID[r.ID] = r.Row
		}
		for i := range vs {
			if vs[i].ItemType == typ && vs[i].Event != EventDelete {
				vs[i].State = byID[vs[i].ItemID]
			}
		}
	}
	return nil
}

// HistoryPage selects one page of a record's versions.
type HistoryPage struct {
	After string // a models.Cursor of the last version of the page before; "" for the first
	Limit int
}

// ItemVersions is one page of the versions of the site's record typ/id,
// newest first (created_at, then id), and whether older ones follow. A
// record that has no versions and no row in the site is models.NotFound
// (another site's record included); a deleted one keeps its history as
// long as its versions are kept.
func ItemVersions(ctx context.Context, db bun.IDB, siteID uuid.UUID, k *Kind, id uuid.UUID, p HistoryPage) ([]*Version, bool, error) {
	if p.Limit <= 0 {
		return nil, false, fmt.Errorf("item versions: limit %d is not positive", p.Limit)
	}
	var vs []*Version
	q := db.NewSelect().Model(&vs).Where("v.item_type = ? AND v.item_id = ? AND v.site_id = ?", k.Type, id, siteID)
	if p.After != "" {
		at, after, err := models.ParseCursor(p.After)
		if err != nil {
			return nil, false, err
		}
		q = q.Where("(v.created_at, v.id) < (?, ?)", at, after)
	}
	if err := q.OrderExpr("v.created_at DESC, v.id DESC").Limit(int64(p.Limit) + 1).Scan(ctx); err != nil {
		return nil, false, fmt.Errorf("item versions: %w", err)
	}
	if len(vs) == 0 {
		if err := itemKnown(ctx, db, siteID, k, id); err != nil {
			return nil, false, err
		}
	}
	if len(vs) > p.Limit {
		return vs[:p.Limit], true, nil
	}
	return vs, false, nil
}

// itemKnown is nil when the site has the record typ/id, stored (live or
// not) or with a version; models.NotFound otherwise.
func itemKnown(ctx context.Context, db bun.IDB, siteID uuid.UUID, k *Kind, id uuid.UUID) error {
	var n int
	err := db.NewRaw(`SELECT (SELECT count(*) FROM ? t WHERE t.id = ? AND t.site_id = ?)
  + (SELECT count(*) FROM (SELECT 1 FROM versions v WHERE v.item_type = ? AND v.item_id = ? AND v.site_id = ? LIMIT 1) x)`,
		bun.Ident(k.Table), id, siteID, k.Type, id, siteID).Scan(ctx, &n)
	if err != nil {
		return fmt.Errorf("find %s: %w", k.Type, err)
	}
	if n == 0 {
		return models.NotFound(k.Singular())
	}
	return nil
}

// AsOf names a point of a record's history: one of its versions, or a
// time (the version in effect then).
type AsOf struct {
	Version *uuid.UUID
	At      *time.Time
}

// VersionAsOf is the version of the site's record typ/id in effect at
// point: the named version (which must be the record's), or its newest
// version created at or before the time. models.NotFound when the record
// did not exist then: no version yet, or one that deleted it.
func VersionAsOf(ctx context.Context, db bun.IDB, siteID uuid.UUID, k *Kind, id uuid.UUID, point AsOf) (*Version, error) {
	v := new(Version)
	q := db.NewSelect().Model(v).Where("v.item_type = ? AND v.item_id = ? AND v.site_id = ?", k.Type, id, siteID)
	if point.Version != nil {
		q = q.Where("v.id = ?", *point.Version)
	} else {
		q = q.Where("v.created_at <= ?", *point.At).OrderExpr("v.created_at DESC, v.id DESC").Limit(1)
	}
	err := q.Scan(ctx)
	if models.IsNoRows(err) || err == nil && (v.Event == EventDelete || len(v.State) == 0) {
		return nil, models.NotFound(k.Singular())
	}
	if err != nil {
		return nil, fmt.Errorf("%s as of: %w", k.Type, err)
	}
	return v, nil
}

// StateRow decodes a version's state (nil after a delete).
func (v *Version) StateRow() (Row, error) {
	if len(v.State) == 0 {
		return nil, nil
	}
	return decodeRow(v.State)
}
