package drafts

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/pmezard/go-difflib/difflib"

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
	// Locale, when set, keeps the versions of that locale only ("": the
	// shared ones, of shared attributes and the base locale's values).
	Locale *string
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
	if p.Locale != nil {
		// A recheck on the rows of versions_item_history_idx's range: a
		// record's history is short, so no index of its own.
		q = q.Where("v.locale = ?", *p.Locale)
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

// Comparison is what changed between two points of one record's history:
// a version and another version, or a version and the record's pending
// draft (To nil, Draft set).
type Comparison struct {
	From  *Version
	To    *Version
	Draft *Draft
	// Changes maps each differing attribute or relationship (name-id) to
	// [value at From, value at To], as object-changes does.
	Changes map[string]any
	// Diffs holds a unified line diff of each changed long text.
	Diffs map[string]string
}

// LongText is the length from which a changed text gets a line diff (any
// text with a line break gets one too).
const LongText = 200

// CompareVersions compares the site's versions a and b (b nil: a with its
// record's pending drafts: the record as they draft it). Each must be the
// site's (404); both of one record (422 different_records); a draft must
// exist (404). Locales' values compare under their flat names
// ("title@de"); only, when set, keeps the keys of that locale ("" the base
// locale's) and the shared attributes, and the drafts of that locale and
// the shared one.
func CompareVersions(ctx context.Context, db bun.IDB, siteID, a uuid.UUID, b *uuid.UUID, only *string) (*Comparison, error) {
	from, err := FindVersion(ctx, db, siteID, a)
	if err != nil {
		return nil, err
	}
	k, _ := KindOf(from.ItemType)
	cmp := &Comparison{From: from}
	var to Row
	if b != nil {
		if cmp.To, err = FindVersion(ctx, db, siteID, *b); err != nil {
			return nil, err
		}
		if cmp.To.ItemType != from.ItemType || cmp.To.ItemID != from.ItemID {
			return nil, &models.Error{Kind: models.ErrInvalid, Code: "different_records",
				Detail: "The versions are of different records; compare two versions of one record."}
		}
		if to, err = cmp.To.StateRow(); err != nil {
			return nil, err
		}
	} else if cmp.Draft, to, err = draftedNow(ctx, db, siteID, k, from.ItemID, only); err != nil {
		return nil, err
	}
	fromRow, err := from.StateRow()
	if err != nil {
		return nil, err
	}
	cmp.Changes, cmp.Diffs = changes(k, fromRow, to), lineDiffs(k, fromRow, to)
	for key := range cmp.Changes {
		if !localeKeeps(k, key, only) {
			delete(cmp.Changes, key)
			delete(cmp.Diffs, key)
		}
	}
	return cmp, nil
}

// draftedNow is the site's record k/id as its pending drafts make it (nil
// for a delete), and its first draft (the shared one before a locale's).
// With only, the shared draft and that locale's count. No draft: 404.
func draftedNow(ctx context.Context, db bun.IDB, siteID uuid.UUID, k *Kind, id uuid.UUID, only *string) (*Draft, Row, error) {
	var ds []*Draft
	q := db.NewSelect().Model(&ds).Where("d.site_id = ? AND d.item_type = ? AND d.item_id = ? /* any locale */", siteID, k.Type, id)
	if only != nil {
		q = q.Where("d.locale IN ('', ?)", *only)
	}
	if err := q.Order("d.locale").Scan(ctx); err != nil {
		return nil, nil, fmt.Errorf("drafts of %s: %w", k.Type, err)
	}
	if len(ds) == 0 {
		return nil, nil, &models.Error{Kind: models.ErrNotFound, Detail: "The record has no pending draft."}
	}
	if ds[0].Event == EventDelete {
		return ds[0], nil, nil
	}
	rows, err := loadRows(ctx, db, k, siteID, []uuid.UUID{id}, false)
	if err != nil {
		return nil, nil, err
	}
	v := &View{Kind: k, Row: rows[id]}
	for _, d := range ds {
		if d.Locale == "" {
			v.Draft = d
		} else {
			if v.LocaleDrafts == nil {
				v.LocaleDrafts = map[string]*Draft{}
			}
			v.LocaleDrafts[d.Locale] = d
		}
	}
	if v.Row == nil { // a create whose row is gone: its draft holds it
		return ds[0], ds[0].Drafted, nil
	}
	return ds[0], v.Drafted(), nil
}

// localeKeeps tells whether a comparison limited to locale only (nil: no
// limit) keeps the change named key: a shared attribute's always, a
// localized one's when it is only's ("title@de"; bare for the base, "").
func localeKeeps(k *Kind, key string, only *string) bool {
	if only == nil {
		return true
	}
	name, tag := SplitKey(key)
	f, ok := k.Field(name)
	return !ok || !f.Localized || tag == *only
}

// localeKeysOf are the flat keys of locales' values of k's localized
// fields that rows hold ("title@de"), each once.
func localeKeysOf(k *Kind, rows ...Row) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rows {
		for key := range r {
			if !seen[key] && isLocaleKey(k, key) {
				seen[key] = true
				out = append(out, key)
			}
		}
	}
	return out
}

// lineDiffs are the unified diffs of the long texts that differ between a
// and b, a locale's under its flat name ("body@de").
func lineDiffs(k *Kind, a, b Row) map[string]string {
	out := map[string]string{}
	type text struct{ key, name string }
	var texts []text
	for _, f := range k.Fields {
		if f.Type == String {
			texts = append(texts, text{f.Column, f.Name})
		}
	}
	for _, key := range localeKeysOf(k, a, b) {
		c, tag := SplitKey(key)
		if f, _ := k.fieldByColumn(c); f.Type == String {
			texts = append(texts, text{key, f.Name + "@" + tag})
		}
	}
	for _, t := range texts {
		if same(a[t.key], b[t.key]) {
			continue
		}
		sa, _ := a[t.key].(string)
		sb, _ := b[t.key].(string)
		if len(sa) < LongText && len(sb) < LongText && !strings.Contains(sa+sb, "\n") {
			continue
		}
		diff, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: difflib.SplitLines(sa), B: difflib.SplitLines(sb),
			FromFile: "a/" + t.name, ToFile: "b/" + t.name, Context: 3})
		if err == nil {
			out[t.name] = diff
		}
	}
	return out
}

// RestoreState is the state a restore of v brings back: the state right
// after v, or for a delete the row before it (restoring from the trash).
func (v *Version) RestoreState() (Row, error) {
	if v.Event == EventDelete {
		if len(v.Snapshot) == 0 {
			return nil, nil
		}
		return decodeRow(v.Snapshot)
	}
	return v.StateRow()
}

// ChildrenAsOf are the states of the site's records of kind k whose
// column parentColumn held one of parents just before at (their last
// version created before at, not a delete): the children a restore of a
// deleted record brings back with it; not those that have a row again
// (restored since, or moved under another parent). At most MaxClosure.
// The column and kind are written into the query as literals, so the
// planner serves the inner lookup from versions_state_*_idx (migration
// 20261130020000_history_retention).
func ChildrenAsOf(ctx context.Context, db bun.IDB, siteID uuid.UUID, k *Kind, parentColumn string, parents []uuid.UUID, at time.Time) ([]Row, error) {
	if len(parents) == 0 {
		return nil, nil
	}
	ids := make([]string, len(parents))
	for i, p := range parents {
		ids[i] = p.String()
	}
	var states []json.RawMessage
	err := db.NewRaw(`SELECT state FROM (
    SELECT DISTINCT ON (v.item_id) v.item_id, v.event, v.state FROM versions v
     WHERE v.site_id = ? AND v.item_type = ? AND v.created_at < ?
       AND v.item_id IN (SELECT w.item_id FROM versions w WHERE w.site_id = ? AND w.item_type = ? AND w.state->>? IN (?))
     ORDER BY v.item_id, v.created_at DESC, v.id DESC) last
  WHERE last.event <> 'delete' AND last.state->>? IN (?)
    AND NOT EXISTS (SELECT 1 FROM ? t WHERE t.id = last.item_id) LIMIT ?`,
		siteID, k.Type, at, siteID, k.Type, parentColumn, bun.In(ids), parentColumn, bun.In(ids), bun.Ident(k.Table), MaxClosure+1).Scan(ctx, &states)
	if err != nil {
		return nil, fmt.Errorf("%s as of %s: %w", k.Type, at, err)
	}
	if len(states) > MaxClosure {
		return nil, ErrTooLarge
	}
	out := make([]Row, 0, len(states))
	for _, s := range states {
		r, err := decodeRow(s)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// RevisionStart is when revision id's first version was written: a
// restore of its delete reads the children as they were just before.
func RevisionStart(ctx context.Context, db bun.IDB, revisionID uuid.UUID) (time.Time, error) {
	var at time.Time
	err := db.NewRaw("SELECT min(created_at) FROM versions WHERE revision_id = ?", revisionID).Scan(ctx, &at)
	return at, err
}
