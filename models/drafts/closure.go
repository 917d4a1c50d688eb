package drafts

import (
	"context"
	"fmt"
	"sort"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/webhooks"
)

// The dependency rules (DESIGN.md §4), applied transitively:
//   - publishing a create/update pulls in the create drafts of the records
//     it points to (parent page, page, content);
//   - publishing a delete pulls in all drafts of its children;
//   - reverting a create pulls in all drafts of its children;
//   - reverting a delete pulls in the delete drafts of the records it points to.

// Direction chooses the rule set.
type Direction int

const (
	Publication Direction = iota
	Reversion
)

// Closure returns start plus every draft the rules pull in, transitively,
// locking them when lock is set. Each round costs a few queries for the
// whole frontier, so the query count follows the depth, not the size.
func Closure(ctx context.Context, db bun.IDB, siteID uuid.UUID, start []*Draft, dir Direction, lock bool) ([]*Draft, error) {
	seen := map[uuid.UUID]*Draft{}
	frontier := []*Draft{}
	for _, d := range start {
		if seen[d.ID] == nil {
			seen[d.ID] = d
			frontier = append(frontier, d)
		}
	}
	for len(frontier) > 0 {
		next, err := step(ctx, db, siteID, frontier, dir, lock)
		if err != nil {
			return nil, err
		}
		frontier = frontier[:0]
		for _, e := range next {
			if seen[e.to.ID] == nil {
				seen[e.to.ID] = e.to
				frontier = append(frontier, e.to)
			}
		}
		if len(seen) > MaxClosure {
			return nil, ErrTooLarge
		}
	}
	out := make([]*Draft, 0, len(seen))
	for _, d := range seen {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID.String() < out[j].ID.String() })
	return out, nil
}

// edge is one rule applied once: the draft from pulls in the draft to.
type edge struct {
	from uuid.UUID
	to   *Draft
}

// pointers records which drafts of a frontier point at which records:
// record type -> record id -> the ids of the drafts that point at it.
type pointers map[string]map[uuid.UUID][]uuid.UUID

func (p pointers) add(typ string, record, draft uuid.UUID) {
	if p[typ] == nil {
		p[typ] = map[uuid.UUID][]uuid.UUID{}
	}
	p[typ][record] = append(p[typ][record], draft)
}

// ids are the records of typ that drafts point at.
func (p pointers) ids(typ string) []uuid.UUID {
	out := make([]uuid.UUID, 0, len(p[typ]))
	for id := range p[typ] {
		out = append(out, id)
	}
	return out
}

// step finds the drafts the frontier pulls in directly, each with the
// frontier draft that pulls it in (a draft pulled in by several comes once
// per puller), so Dependencies can tell every draft's own closure apart.
func step(ctx context.Context, db bun.IDB, siteID uuid.UUID, frontier []*Draft, dir Direction, lock bool) ([]edge, error) {
	// Group the frontier: "targets" are records the drafts point to,
	// "parents" are records whose children are wanted.
	targets := pointers{}    // type -> record pointed to -> drafts pointing
	childrenOf := pointers{} // type -> record whose children are wanted -> drafts wanting them
	wantEvent := ""          // event of the pulled-in target drafts
	liveOf := pointers{}     // type -> record whose stored references are wanted -> its drafts
	for _, d := range frontier {
		k := kinds[d.ItemType]
		switch {
		case dir == Publication && (d.Event == EventCreate || d.Event == EventUpdate):
			// What the draft will point to: its drafted references.
			for _, f := range k.Fields {
				if !f.Draftable() {
					continue
				}
				if s, ok := d.Drafted[f.Column].(string); ok && s != "" {
					if id, err := uuid.Parse(s); err == nil {
						targets.add(f.RefType, id, d.ID)
					}
				}
			}
			wantEvent = EventCreate
		case dir == Reversion && d.Event == EventDelete:
			// Reverting a delete brings the live record back, under what it
			// points to now: its stored references (collected below).
			liveOf.add(d.ItemType, d.ItemID, d.ID)
			wantEvent = EventDelete
		case dir == Publication && d.Event == EventDelete,
			dir == Reversion && d.Event == EventCreate:
			childrenOf.add(d.ItemType, d.ItemID, d.ID)
		}
	}
	if err := storedTargets(ctx, db, liveOf, targets); err != nil {
		return nil, err
	}
	var out []edge
	for typ, by := range targets {
		ds, err := draftsOfItems(ctx, db, typ, targets.ids(typ), lock)
		if err != nil {
			return nil, err
		}
		for item, d := range ds {
			if d.Event == wantEvent && d.SiteID == siteID {
				for _, from := range by[item] {
					out = append(out, edge{from: from, to: d})
				}
			}
		}
	}
	children, err := childDrafts(ctx, db, siteID, childrenOf, lock)
	if err != nil {
		return nil, err
	}
	return append(out, children...), nil
}

// storedTargets adds to targets the records that the stored rows of
// liveOf point to, attributed to the drafts of those rows.
func storedTargets(ctx context.Context, db bun.IDB, liveOf, targets pointers) error {
	for typ, by := range liveOf {
		k := kinds[typ]
		for _, f := range k.Fields {
			if !f.Draftable() {
				continue
			}
			var refs []struct {
				ID  uuid.UUID `bun:"id"`
				Ref uuid.UUID `bun:"ref"`
			}
			if err := db.NewSelect().TableExpr(k.Table).ColumnExpr("id").ColumnExpr("? AS ref", bun.Ident(f.Column)).
				Where("id IN (?) AND ? IS NOT NULL", bun.In(liveOf.ids(typ)), bun.Ident(f.Column)).Scan(ctx, &refs); err != nil {
				return fmt.Errorf("stored references of %s: %w", typ, err)
			}
			for _, r := range refs {
				for _, d := range by[r.ID] {
					targets.add(f.RefType, r.Ref, d)
				}
			}
		}
	}
	return nil
}

// childDraft is a draft of a child record with the parent its stored row
// names and the one it is drafted under (the drafts table's generated
// column drafted_parent, read with d.*).
type childDraft struct {
	Draft         `bun:",extend"`
	DraftedParent *uuid.UUID `bun:"drafted_parent,type:uuid"`
	StoredParent  *uuid.UUID `bun:"stored_parent,type:uuid"`
}

// childDrafts finds the drafts of the children of the records of
// childrenOf, each attributed to the drafts that want them.
func childDrafts(ctx context.Context, db bun.IDB, siteID uuid.UUID, childrenOf pointers, lock bool) ([]edge, error) {
	var out []edge
	for typ, by := range childrenOf {
		ids := childrenOf.ids(typ)
		for _, c := range kinds[typ].Children {
			ck := kinds[c.Type]
			// Children by the stored column (their drafts of every
			// locale: docs/locales.md), and by the drafted one (a
			// record a draft moves under the item). Found as an array of
			// draft ids, each by an index lookup: written as an OR of the
			// two conditions it was a scan of every draft (about 2,000
			// buffers and 85 ms per DELETE reverting a created child in
			// bench/http).
			var ds []childDraft
			q := db.NewSelect().Model(&ds).ColumnExpr("d.*").
				ColumnExpr("(SELECT c.? FROM ? c WHERE c.id = d.item_id) AS stored_parent", bun.Ident(c.Column), bun.Ident(ck.Table)).
				Where("d.site_id = ? AND d.item_type = ?", siteID, c.Type).
				Where(`d.id = ANY (ARRAY(
    SELECT x.id FROM ?1 c JOIN drafts x ON x.item_type = ?0 AND x.item_id = c.id /* any locale */ WHERE c.?2 IN (?3)
  UNION
    SELECT x.id FROM drafts x WHERE x.item_type = ?0 AND x.drafted_parent IN (?3)))`, c.Type, bun.Ident(ck.Table), bun.Ident(c.Column), bun.In(ids))
			if lock {
				q = q.Order("d.id").For("UPDATE OF d")
			}
			if err := q.Scan(ctx); err != nil {
				return nil, fmt.Errorf("find drafts of children: %w", err)
			}
			for i := range ds {
				x := &ds[i].Draft
				// Pulled in by the drafts of the record it is stored under
				// and of the one it is drafted under (the same one, mostly).
				parents := []uuid.UUID{}
				if p := ds[i].StoredParent; p != nil {
					parents = append(parents, *p)
				}
				if p := ds[i].DraftedParent; p != nil && (len(parents) == 0 || parents[0] != *p) {
					parents = append(parents, *p)
				}
				for _, p := range parents {
					for _, from := range by[p] {
						out = append(out, edge{from: from, to: x})
					}
				}
			}
		}
	}
	return out, nil
}

// RevertDraft is the revert a client asks for (DELETE /drafts/:id) in tx:
// the draft, locked, is judged by check (the caller's preconditions, read
// again under the lock the writes take too), draft.reverted is recorded,
// then Revert undoes it. The event is recorded before the draft goes, so
// it carries the draft, and commits only with the revert (docs/webhooks.md).
func (e *Engine) RevertDraft(ctx context.Context, tx bun.Tx, siteID, draftID uuid.UUID, check func(*Draft) error) error {
	locked, err := findDraft(ctx, tx, siteID, draftID, true)
	if err != nil {
		return err
	}
	if err := check(locked); err != nil {
		return err
	}
	if err := models.RecordEvent(ctx, tx, models.Event{SiteID: siteID, Type: webhooks.DraftReverted, SubjectType: "drafts", SubjectID: draftID}); err != nil {
		return err
	}
	return e.Revert(ctx, tx, siteID, draftID)
}

// Revert undoes a draft and its reversion closure in tx: created items are
// deleted altogether, updates and deletes are dropped. Any draft of the
// closure in an in-flight revision makes it ErrInFlight.
func (e *Engine) Revert(ctx context.Context, tx bun.Tx, siteID, draftID uuid.UUID) error {
	return e.revertDrafts(ctx, tx, siteID, []uuid.UUID{draftID})
}

// revertDrafts is Revert of several drafts at once (one closure for all:
// the statements follow its depth, not the number of drafts); ErrNotFound
// when none of them exists.
func (e *Engine) revertDrafts(ctx context.Context, tx bun.Tx, siteID uuid.UUID, draftIDs []uuid.UUID) error {
	start, err := Drafts(ctx, tx, siteID, draftIDs, true)
	if err != nil {
		return err
	}
	if len(start) == 0 {
		return ErrNotFound
	}
	all, err := Closure(ctx, tx, siteID, start, Reversion, true)
	if err != nil {
		return err
	}
	byType := map[string][]uuid.UUID{}
	created := map[string][]uuid.UUID{}
	ids := make([]uuid.UUID, 0, len(all))
	for _, d := range all {
		if d.RevisionID != nil {
			return ErrInFlight
		}
		ids = append(ids, d.ID)
		byType[d.ItemType] = append(byType[d.ItemType], d.ItemID)
		if d.Event == EventCreate {
			created[d.ItemType] = append(created[d.ItemType], d.ItemID)
		}
	}
	if _, err := tx.NewDelete().Model((*Draft)(nil)).Where("id IN (?)", bun.In(ids)).Exec(ctx); err != nil {
		return fmt.Errorf("drop drafts: %w", err)
	}
	for _, typ := range []string{"content-blocks", "contents", "pages"} { // children first
		k := kinds[typ]
		if len(created[typ]) > 0 {
			if _, err := tx.NewDelete().TableExpr(k.Table).Where("id IN (?) AND published_at IS NULL", bun.In(created[typ])).Exec(ctx); err != nil {
				return fmt.Errorf("delete created %s: %w", typ, err)
			}
		}
		if len(byType[typ]) > 0 {
			if _, err := tx.NewUpdate().TableExpr(k.Table).Where("id IN (?)", bun.In(byType[typ])).Set("version = version + 1").Exec(ctx); err != nil {
				return err
			}
		}
	}
	return nil // a reverted create leaves no path behind, and others did not move
}
