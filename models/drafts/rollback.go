package drafts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
)

// revertsPlace is where a revert's refusals point: the relationship that
// names the reverted revision.
var revertsPlace = models.Rel("reverts", models.PartMember)

// restore is what reverting one version does to its record.
type restore struct {
	kind *Kind
	id   uuid.UUID
	// locale is the reverted version's ("": shared and the base locale;
	// a tag: that locale's values only), and the new version's.
	locale string
	event  string // of the new version: create (brought back), update, delete
	before Row    // the record now (nil when it does not exist)
	after  Row    // the record restored (nil when deleted)
}

// RevertRevision publishes rev (its ID, SiteID, UserID and Comments set) as the
// revision that restores every record the revision targetID changed to its
// state just before it, in tx: a record it created is deleted, the
// attributes and relationships an update changed get their values back,
// a deleted record comes back. Each restored record gets a version in rev.
//
// A record changed by a later revision is a conflict unless force; one
// with a pending draft, or with children created since under a record to
// delete, always is. Conflicts come back together (models.Errors, one per
// record, meta type and id) and nothing changes. Everything the target
// changed is restored in one transaction with deferred foreign keys, so
// parents and children (a deleted subtree, a created parent with its
// children) and records that point at each other come back together.
// What it restores and refuses is computed by reversion, which
// Engine.PlanRevert runs as a dry run.
func (e *Engine) RevertRevision(ctx context.Context, tx bun.Tx, rev *Revision, targetID uuid.UUID, force bool) error {
	set, err := e.reversion(ctx, tx, rev.SiteID, targetID, force, true)
	if err != nil {
		return err
	}
	if len(set.conflicts) > 0 {
		return set.conflicts
	}
	if err := e.applyRestores(ctx, tx, rev.SiteID, set.restores); err != nil {
		if rule, broken := models.BrokenRule(err); broken {
			return &models.Error{Kind: models.ErrConflict, Code: "revert_conflict", At: revertsPlace,
				Detail: "Restoring the records breaks a rule of the content: " + rule}
		}
		var taken *PublishError
		if errors.As(err, &taken) && taken.Code == PathTaken {
			return &models.Error{Kind: models.ErrConflict, Code: "revert_conflict", At: revertsPlace, Meta: taken.Meta,
				Detail: "Restoring the records breaks a rule of the content: " + taken.Message}
		}
		return err
	}
	now := time.Now().UTC()
	vs := make([]Version, len(set.restores))
	for i, r := range set.restores {
		var snap json.RawMessage
		if r.before != nil {
			if snap, err = json.Marshal(r.before); err != nil {
				return err
			}
		}
		oc := map[string]any{}
		switch r.event {
		case EventUpdate:
			oc = changes(r.kind, r.before, r.after)
		case EventCreate:
			oc = changes(r.kind, Row{}, r.after)
		}
		vs[i] = Version{SiteRow: versionRow(rev, now, i), RevisionID: rev.ID, ItemType: r.kind.Type, ItemID: r.id,
			Event: r.event, ObjectChanges: oc, Snapshot: snap, UserID: rev.UserID, Locale: r.locale}
	}
	rev.RevertsID, rev.DraftIDs = &set.target.ID, []uuid.UUID{}
	return recordPublished(ctx, tx, rev, vs, true)
}

// revertSet is what reverting a revision does: the restores, in the order
// their versions are written, and why it would be refused (conflicts, one
// per record; a target that is not published).
type revertSet struct {
	target    *Revision
	restores  []restore
	conflicts models.Errors
}

// reversion computes the revertSet of reverting the site's revision
// targetID, writing nothing: the one function behind RevertRevision (lock
// set: the revision, the drafts and the rows locked, in the reverting
// transaction) and Engine.PlanRevert (a dry run), so a plan is what a
// revert does. An unknown revision is 404 at the reverts identifier.
func (e *Engine) reversion(ctx context.Context, db bun.IDB, siteID, targetID uuid.UUID, force, lock bool) (*revertSet, error) {
	target := new(Revision)
	q := db.NewSelect().Model(target).Where("id = ? AND site_id = ?", targetID, siteID)
	if lock {
		q = q.For("UPDATE")
	}
	err := q.Scan(ctx)
	if models.IsNoRows(err) {
		return nil, models.RefNotFound("reverts", "revision")
	}
	if err != nil {
		return nil, fmt.Errorf("load the reverted revision: %w", err)
	}
	set := &revertSet{target: target}
	if target.Status != Published {
		set.conflicts = models.Errors{{Kind: models.ErrConflict, Code: "revision_not_published", At: revertsPlace, Meta: itemMeta("revisions", target.ID),
			Detail: fmt.Sprintf("The revision is %s; only a published revision can be reverted.", target.Status)}}
		return set, nil
	}
	// Locked FOR SHARE when reverting: the history prune, which locks
	// what it deletes FOR UPDATE SKIP LOCKED, leaves them while it runs.
	var versions []*Version
	vq := db.NewSelect().Model(&versions).Where("revision_id = ?", target.ID).Order("created_at", "id").Limit(MaxClosure + 1)
	if lock {
		vq = vq.For("SHARE")
	}
	if err := vq.Scan(ctx); err != nil {
		return nil, fmt.Errorf("versions of the reverted revision: %w", err)
	}
	if len(versions) > MaxClosure {
		return nil, ErrTooLarge
	}
	if len(versions) < target.VersionsCount {
		// Some were pruned (the trash purge, the version retention):
		// reverting the rest would undo the revision in part.
		set.conflicts = models.Errors{{Kind: models.ErrConflict, Code: "history_pruned", At: revertsPlace, Meta: itemMeta("revisions", target.ID),
			Detail: fmt.Sprintf("%d of the revision's %d versions were pruned from the history; it can no longer be rolled back.",
				target.VersionsCount-len(versions), target.VersionsCount)}}
		return set, nil
	}
	byKind := map[string][]uuid.UUID{}
	for _, v := range versions {
		byKind[v.ItemType] = append(byKind[v.ItemType], v.ItemID)
	}
	current, pending, err := currentState(ctx, db, siteID, byKind, lock)
	if err != nil {
		return nil, err
	}
	locales, err := siteLocaleSet(ctx, db, siteID)
	if err != nil {
		return nil, err
	}
	if set.conflicts, err = changedSince(ctx, db, siteID, target.ID, versions, pending, force); err != nil {
		return nil, err
	}
	if set.restores, err = restoresOf(versions, current, locales); err != nil {
		return nil, err
	}
	orphans, err := orphanConflicts(ctx, db, set.restores)
	set.conflicts = append(set.conflicts, orphans...)
	return set, err
}

// revertConflict is the refusal of a revert for the record typ/id.
func revertConflict(typ string, id uuid.UUID, detail string) *models.Error {
	return &models.Error{Kind: models.ErrConflict, Code: "revert_conflict", At: revertsPlace, Detail: detail, Meta: itemMeta(typ, id)}
}

// currentState loads the records a revert restores as they are now (nil
// when gone) and their pending drafts of every locale, one query of each
// per kind: drafts before rows, both locked when lock, the order writes
// lock in.
func currentState(ctx context.Context, db bun.IDB, siteID uuid.UUID, byKind map[string][]uuid.UUID, lock bool) (map[uuid.UUID]Row, map[uuid.UUID][]*Draft, error) {
	current := map[uuid.UUID]Row{}
	pending := map[uuid.UUID][]*Draft{}
	for typ, ids := range byKind {
		var ds []*Draft
		q := db.NewSelect().Model(&ds).Where("d.item_type = ? AND d.item_id IN (?) /* any locale */", typ, bun.In(ids)).
			Order("d.item_id", "d.locale")
		if lock {
			q = q.For("UPDATE")
		}
		if err := q.Scan(ctx); err != nil {
			return nil, nil, fmt.Errorf("load drafts of %s: %w", typ, err)
		}
		for _, d := range ds {
			pending[d.ItemID] = append(pending[d.ItemID], d)
		}
		rows, err := loadRows(ctx, db, kinds[typ], siteID, ids, lock)
		if err != nil {
			return nil, nil, err
		}
		for id, r := range rows {
			current[id] = r
		}
	}
	return current, pending, nil
}

// siteLocaleSet is the set of the site's locales: a revert restores no
// value of a locale the site has removed since.
func siteLocaleSet(ctx context.Context, db bun.IDB, siteID uuid.UUID) (map[string]bool, error) {
	var tags []string
	if err := db.NewRaw("SELECT unnest(locales) FROM sites WHERE id = ?", siteID).Scan(ctx, &tags); err != nil {
		return nil, fmt.Errorf("the site's locales: %w", err)
	}
	out := make(map[string]bool, len(tags))
	for _, t := range tags {
		out[t] = true
	}
	return out, nil
}

// reverted is what a revert does to one record, by locale: the locales
// whose values it restores, and whether it restores the whole record
// (brings it back, or deletes what the reverted revision created).
type reverted struct {
	locales map[string]bool
	whole   bool
}

// revertedItems are the records versions revert, by id.
func revertedItems(versions []*Version) map[uuid.UUID]*reverted {
	out := map[uuid.UUID]*reverted{}
	for _, v := range versions {
		r := out[v.ItemID]
		if r == nil {
			r = &reverted{locales: map[string]bool{}}
			out[v.ItemID] = r
		}
		r.locales[v.Locale] = true
		r.whole = r.whole || v.Event != EventUpdate
	}
	return out
}

// changedSince are the conflicts of records changed since the target, per
// locale: a pending draft of a locale the revert restores, a shared
// create or delete draft, or any draft of a record restored whole (never
// restored over); a version of a later revision of such a locale, or one
// that created or deleted the record, or any when the record is restored
// whole (restored over only with force). A German revert leaves English
// drafts and later English versions alone, and the other way round.
func changedSince(ctx context.Context, db bun.IDB, siteID, targetID uuid.UUID, versions []*Version,
	pending map[uuid.UUID][]*Draft, force bool) (models.Errors, error) {
	var conflicts models.Errors
	items := revertedItems(versions)
	seen := map[uuid.UUID]bool{}
	for _, v := range versions {
		it := items[v.ItemID]
		for _, d := range pending[v.ItemID] {
			if seen[v.ItemID] || !(it.whole || it.locales[d.Locale] || d.Locale == "" && d.Event != EventUpdate) {
				continue
			}
			seen[v.ItemID] = true
			conflicts = append(conflicts, revertConflict(v.ItemType, v.ItemID,
				fmt.Sprintf("The %s has a pending draft%s (%s); publish or revert it first.", kinds[v.ItemType].Singular(), inLocale(d.Locale), d.ID)))
		}
	}
	if force || len(versions) == 0 {
		return conflicts, nil
	}
	var later []struct {
		ItemType string    `bun:"item_type"`
		ItemID   uuid.UUID `bun:"item_id"`
		Locale   string    `bun:"locale"`
		Event    string    `bun:"event"`
	}
	ids := make([]uuid.UUID, 0, len(items))
	for _, v := range versions {
		ids = append(ids, v.ItemID)
	}
	if err := db.NewRaw(`SELECT DISTINCT item_type, item_id, locale, event FROM versions
WHERE site_id = ? AND revision_id <> ? AND item_id IN (?) AND created_at > ? ORDER BY item_type, item_id, locale, event`,
		siteID, targetID, bun.In(ids), versions[len(versions)-1].CreatedAt).Scan(ctx, &later); err != nil {
		return nil, fmt.Errorf("later changes: %w", err)
	}
	seen = map[uuid.UUID]bool{}
	for _, l := range later {
		it := items[l.ItemID]
		if seen[l.ItemID] || !(it.whole || it.locales[l.Locale] || l.Event != EventUpdate) {
			continue
		}
		seen[l.ItemID] = true
		conflicts = append(conflicts, revertConflict(l.ItemType, l.ItemID,
			fmt.Sprintf("The %s was changed%s by a later revision; send force: true to restore it anyway.", kinds[l.ItemType].Singular(), inLocale(l.Locale))))
	}
	return conflicts, nil
}

// inLocale names locale tag in a message (nothing for the shared "").
func inLocale(tag string) string {
	if tag == "" {
		return ""
	}
	return " in " + tag
}

// restoresOf is what reverting versions does to their records, now as
// current holds them, in the versions' order. An update's restore sets
// back the keys its object-changes name, flat (title@de: German only), so
// a locale's revision restores that locale only; a delete's brings back
// every key. Values of locales not in locales (removed from the site
// since) are not restored. Versions of one record in one revision (its
// shared and its locale drafts) restore one after another, each from the
// record as the one before left it.
func restoresOf(versions []*Version, current map[uuid.UUID]Row, locales map[string]bool) ([]restore, error) {
	var out []restore
	now := maps.Clone(current)
	for _, v := range versions {
		k := kinds[v.ItemType]
		cur := now[v.ItemID]
		var snap Row
		if len(v.Snapshot) > 0 && string(v.Snapshot) != "null" {
			var err error
			if snap, err = decodeRow(v.Snapshot); err != nil {
				return nil, fmt.Errorf("snapshot of version %s: %w", v.ID, err)
			}
		}
		switch {
		case v.Event == EventCreate && cur != nil:
			out = append(out, restore{kind: k, id: v.ItemID, event: EventDelete, before: cur})
			now[v.ItemID] = nil
		case v.Event == EventCreate: // gone since (force): nothing to delete
		case snap == nil:
			return nil, fmt.Errorf("version %s of a %s has no snapshot", v.ID, v.Event)
		case cur == nil && v.Event == EventDelete:
			after := withoutRemovedLocales(k, snap, locales)
			out = append(out, restore{kind: k, id: v.ItemID, event: EventCreate, after: after})
			now[v.ItemID] = after
		case cur == nil: // an update of a record deleted since (force): nothing to restore
		default:
			after := maps.Clone(cur)
			for _, key := range restoredKeys(k, v, snap, cur, locales) {
				if val, ok := snap[key]; ok && (val != nil || !isLocaleKey(k, key)) {
					after[key] = val
				} else if isLocaleKey(k, key) {
					delete(after, key) // no value in that locale then: none now
				} else {
					after[key] = nil
				}
			}
			if len(changes(k, cur, after)) > 0 {
				out = append(out, restore{kind: k, id: v.ItemID, locale: v.Locale, event: EventUpdate, before: cur, after: after})
				now[v.ItemID] = after
			}
		}
	}
	return out, nil
}

// restoredKeys are the flat keys of k's rows that reverting v sets back:
// those its object-changes name (an attribute or "<relationship>-id",
// "title@de" for a locale's value), or for a delete every field and every
// locale's values the snapshot or the record now has. Keys of locales not
// in locales are left out.
func restoredKeys(k *Kind, v *Version, snap, cur Row, locales map[string]bool) []string {
	var out []string
	if v.Event == EventDelete {
		for _, f := range k.Fields {
			out = append(out, f.Column)
		}
		for _, r := range []Row{snap, cur} {
			for key := range r {
				if _, tag := SplitKey(key); tag != "" && locales[tag] && isLocaleKey(k, key) && !slices.Contains(out, key) {
					out = append(out, key)
				}
			}
		}
		return out
	}
	for name := range v.ObjectChanges {
		name, tag := SplitKey(name)
		for _, f := range k.Fields {
			if f.Name != name && !(f.IsRef() && f.Name+"-id" == name) {
				continue
			}
			switch {
			case tag == "":
				out = append(out, f.Column)
			case f.Localized && locales[tag]:
				out = append(out, f.Column+"@"+tag)
			}
		}
	}
	return out
}

// withoutRemovedLocales is r without the values of locales not in
// locales (a copy).
func withoutRemovedLocales(k *Kind, r Row, locales map[string]bool) Row {
	out := maps.Clone(r)
	for key := range r {
		if _, tag := SplitKey(key); tag != "" && isLocaleKey(k, key) && !locales[tag] {
			delete(out, key)
		}
	}
	return out
}

// orphanConflicts are the children created since under a record the
// restores delete: they would go with it (ON DELETE CASCADE) without a
// version. Records the revert restores itself (moved back elsewhere, or
// deleted too) are not.
func orphanConflicts(ctx context.Context, db bun.IDB, restores []restore) (models.Errors, error) {
	handled := map[string][]uuid.UUID{}
	deleted := map[string][]uuid.UUID{}
	for _, r := range restores {
		handled[r.kind.Type] = append(handled[r.kind.Type], r.id)
		if r.event == EventDelete {
			deleted[r.kind.Type] = append(deleted[r.kind.Type], r.id)
		}
	}
	var conflicts models.Errors
	for _, typ := range []string{"pages", "contents", "content-blocks"} {
		ids := deleted[typ]
		if len(ids) == 0 {
			continue
		}
		for _, c := range kinds[typ].Children {
			var orphans []uuid.UUID
			if err := db.NewSelect().TableExpr(kinds[c.Type].Table).Column("id").
				Where("? IN (?)", bun.Ident(c.Column), bun.In(ids)).Where("id NOT IN (?)", bun.In(append(handled[c.Type], uuid.Nil))).
				Order("id").Scan(ctx, &orphans); err != nil {
				return nil, fmt.Errorf("children of deleted %s: %w", typ, err)
			}
			for _, id := range orphans {
				conflicts = append(conflicts, revertConflict(c.Type, id,
					fmt.Sprintf("The %s was created under a record this revert deletes; delete or move it first.", kinds[c.Type].Singular())))
			}
		}
	}
	return conflicts, nil
}

// applyRestores writes a revert's restores: records brought back, updated
// and deleted, a few statements per kind; then the paths of the pages
// brought back or changed (and their subtrees), and the live links of the
// blocks.
func (e *Engine) applyRestores(ctx context.Context, tx bun.Tx, siteID uuid.UUID, plan []restore) error {
	now := time.Now().UTC()
	if err := restoreRows(ctx, tx, plan, now); err != nil {
		return err
	}
	var pages, blocks []uuid.UUID
	for _, r := range plan {
		if r.event == EventDelete {
			continue
		}
		switch r.kind {
		case Pages:
			pages = append(pages, r.id)
		case ContentBlocks:
			blocks = append(blocks, r.id)
		}
	}
	if err := e.refreshPaths(ctx, tx, siteID, pages); err != nil {
		return err
	}
	if len(pages) > 0 {
		// A page brought back at a path another page took since: checked
		// now rather than at commit (pages_live_path_excl is deferred), so
		// the caller answers it as the revert's conflict, not a failed commit.
		if _, err := tx.ExecContext(ctx, "SET CONSTRAINTS pages_live_path_excl IMMEDIATE"); err != nil {
			return fmt.Errorf("restored page paths: %w", err)
		}
		// Their paths in the other locales (a slug restored in German
		// moves the German subtree), checked the same way.
		if err := refreshLocalePaths(ctx, tx, siteID, pages); err != nil {
			return err
		}
		if err := localePathsFree(ctx, tx, siteID, pages); err != nil {
			return err
		}
	}
	if len(blocks) > 0 {
		return e.restoreLinks(ctx, tx, siteID, plan, blocks, now)
	}
	return nil
}

// restoreRows writes the records of plan: brought back and updated,
// parents first, then deleted, children first; a few statements per kind.
func restoreRows(ctx context.Context, tx bun.Tx, plan []restore, now time.Time) error {
	for _, typ := range []string{"pages", "contents", "content-blocks"} {
		k := kinds[typ]
		var inserts []Row
		var updates, locales []*Draft
		updated := map[uuid.UUID]int{} // index in updates
		for _, r := range plan {
			if r.kind != k {
				continue
			}
			switch r.event {
			case EventCreate:
				row := nestRow(k, r.after) // a copy, translations nested back
				row["version"], row["updated_at"] = row.Version()+1, now
				inserts = append(inserts, row)
			case EventUpdate:
				if d := localeRestore(k, r); d != nil {
					locales = append(locales, d)
				}
				if !baseChanged(k, r.before, r.after) {
					continue
				}
				// A record's restores follow one another: the last one's
				// after holds the earlier ones' base values too.
				d := &Draft{ItemID: r.id, Drafted: r.after}
				if i, ok := updated[r.id]; ok {
					updates[i] = d
					continue
				}
				updated[r.id] = len(updates)
				updates = append(updates, d)
			}
		}
		if len(inserts) > 0 {
			payload, err := json.Marshal(inserts)
			if err != nil {
				return err
			}
			if _, err := tx.NewRaw("INSERT INTO ? SELECT * FROM jsonb_populate_recordset(NULL::?, ?::jsonb)",
				bun.Ident(k.Table), bun.Ident(k.Table), string(payload)).Exec(ctx); err != nil {
				return fmt.Errorf("bring back %s: %w", typ, err)
			}
		}
		if len(updates) > 0 {
			if err := applyUpdates(ctx, tx, k, updates, now); err != nil {
				return err
			}
		}
		if len(locales) > 0 {
			// The statement that publishes locale drafts: only the
			// restored locales' keys change.
			if err := applyTranslations(ctx, tx, k, locales, now); err != nil {
				return err
			}
		}
	}
	for _, typ := range []string{"content-blocks", "contents", "pages"} { // children first
		var ids []uuid.UUID
		for _, r := range plan {
			if r.kind.Type == typ && r.event == EventDelete {
				ids = append(ids, r.id)
			}
		}
		if len(ids) > 0 {
			if _, err := tx.NewDelete().TableExpr(kinds[typ].Table).Where("id IN (?)", bun.In(ids)).Exec(ctx); err != nil {
				return fmt.Errorf("delete created %s: %w", typ, err)
			}
		}
	}
	return nil
}

// restoreLinks makes the live links of the blocks plan brings back or
// changes (blocks) those of their restored bodies.
func (e *Engine) restoreLinks(ctx context.Context, tx bun.Tx, siteID uuid.UUID, plan []restore, blocks []uuid.UUID, now time.Time) error {
	if _, err := tx.NewDelete().Model((*Hyperlink)(nil)).Where("linkable_id IN (?) AND draft_id IS NULL", bun.In(blocks)).Exec(ctx); err != nil {
		return err
	}
	for _, r := range plan {
		if r.kind != ContentBlocks || r.event == EventDelete {
			continue
		}
		body, _ := r.after["body"].(string)
		links, err := e.resolve(ctx, tx, siteID, hrefs(body))
		if err != nil {
			return err
		}
		for i := range links {
			links[i].ID, links[i].SiteID, links[i].LinkableID, links[i].CreatedAt = uuid.New(), siteID, r.id, now
		}
		if len(links) > 0 {
			if _, err := tx.NewInsert().Model(&links).Exec(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// baseChanged tells whether a restore from a to b changes a column of the
// row (a field, or a localized field's base value).
func baseChanged(k *Kind, a, b Row) bool {
	for _, f := range k.Fields {
		if !same(a[f.Column], b[f.Column]) {
			return true
		}
	}
	return false
}

// localeRestore is restore r's change of locales' values as a locale
// draft would make it (applyTranslations): each differing flat key's
// restored value, null for one the restore removes; nil when none differs.
func localeRestore(k *Kind, r restore) *Draft {
	drafted := map[string]any{}
	for _, key := range localeKeysOf(k, r.before, r.after) {
		if !same(r.before[key], r.after[key]) {
			drafted[key] = r.after[key]
		}
	}
	if len(drafted) == 0 {
		return nil
	}
	return &Draft{ItemID: r.id, ItemType: k.Type, Locale: r.locale, Drafted: drafted}
}
