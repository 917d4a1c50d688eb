package drafts

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
)

// Delete drafts the deletion of a live item and of its subtree: children by
// the stored reference, and records a draft moves under an item of the
// subtree (publishing the delete would otherwise take them along
// unversioned). Children never published are reverted (with everything
// that depends on them) instead; their own children are the revert's.
// Deleting an item that was never published reverts its create: there is
// nothing live to delete. It returns the item's view, or nil when the item
// is gone. cur is the item as LockForWrite locked and loaded it in this
// transaction.
//
// The statements do not grow with the subtree: one finds the subtree (a
// recursive query) and locks its drafts, then its rows (drafts before rows,
// as everywhere: see LockForWrite); one writes every delete draft and moves
// every row's version on, finding the subtree again under the locks. A
// subtree that changed between the two (a child inserted or moved under it
// before the locks) is ErrRetry: the transaction runs again. Reverting
// children never published adds a few statements per level of what they
// pull in (Closure), whatever their number.
func (e *Engine) Delete(ctx context.Context, tx bun.Tx, cur *View, siteID, userID uuid.UUID, expect *int) (*View, error) {
	k, d, id := cur.Kind, cur.Draft, cur.Row.ID()
	if err := writable(cur, expect); err != nil {
		return nil, err
	}
	if d != nil && d.Event == EventCreate {
		if err := e.Revert(ctx, tx, siteID, d.ID); err != nil {
			return nil, err
		}
		return nil, nil
	}
	// A draft another writer committed while LockForWrite waited for the
	// row is not in cur; the subtree's lock reads the drafts again (a new
	// statement sees it; its writer is done, so locking it cannot wait).
	// Both statements are prepared (models.ScanPrepared): planning them,
	// per request as text, cost more than running them for a leaf. Their
	// shape (lookups by key, arrays of ids; subtreeCTE) suits any plan.
	var locked struct {
		N        int
		Hash     string
		InFlight bool
		Created  []byte
		// Locked is not checked: selecting the count is what makes
		// Postgres run the rows' locking CTEs (an unreferenced CTE is
		// never evaluated).
		Locked int
	}
	args := []any{models.UUIDParam(siteID), k.Type, models.UUIDParam(id)}
	if err := models.ScanPrepared(ctx, tx, lockSubtreeQuery, args,
		&locked.N, &locked.Hash, &locked.InFlight, &locked.Created, &locked.Locked); err != nil {
		return nil, fmt.Errorf("lock the subtree of %s %s: %w", k.Singular(), id, err)
	}
	if locked.N > MaxClosure {
		return nil, ErrTooLarge
	}
	if locked.InFlight {
		return nil, ErrInFlight
	}
	var wrote struct {
		N      int
		Hash   string
		Draft  []byte
		Bumped int // not checked: the UPDATE CTEs run unreferenced too; it only shows their work
	}
	now := time.Now().UTC()
	args = append(args, models.NullUUIDParam(models.Person(userID)), now)
	if err := models.ScanPrepared(ctx, tx, deleteSubtreeQuery, args, &wrote.N, &wrote.Hash, &wrote.Draft, &wrote.Bumped); err != nil {
		if models.IsUniqueViolation(err, onePendingDraftPerItem) {
			return nil, ErrRetry // a draft appeared for an item without one: see LockForWrite
		}
		return nil, fmt.Errorf("draft the deletion of %s %s: %w", k.Singular(), id, err)
	}
	if wrote.N != locked.N || wrote.Hash != locked.Hash {
		// Something joined or left the subtree before its rows were locked;
		// the drafts written cover what the locks may not: run again.
		return nil, ErrRetry
	}
	var created []uuid.UUID
	if err := json.Unmarshal(locked.Created, &created); err != nil {
		return nil, fmt.Errorf("drafts of the subtree of %s %s: %w", k.Singular(), id, err)
	}
	if len(created) > 0 {
		// Reverted after the writes: a revert only pulls in drafts under
		// the items it reverts, which the subtree does not descend into.
		if err := e.revertDrafts(ctx, tx, siteID, created); err != nil {
			return nil, err
		}
	}
	return e.deletedView(ctx, tx, cur, siteID, wrote.Draft)
}

// deletedView is the item cur after Delete drafted its deletion: its row
// one version on, with the delete draft written (draft, its to_jsonb). It
// derives the drafted path again only when the draft replaced one that
// moved the page, and reads the item again only when a draft other than
// cur's turned up meanwhile.
func (e *Engine) deletedView(ctx context.Context, tx bun.IDB, cur *View, siteID uuid.UUID, draft json.RawMessage) (*View, error) {
	k, id := cur.Kind, cur.Row.ID()
	if len(draft) == 0 || string(draft) == "null" {
		// The item had a delete draft already (maybe one a concurrent
		// delete committed): read it as it is.
		return e.Load(ctx, tx, k, siteID, id, true)
	}
	d := new(Draft) // its json tags are the columns, as to_jsonb writes them
	if err := json.Unmarshal(draft, d); err != nil {
		return nil, fmt.Errorf("delete draft of %s %s: %w", k.Singular(), id, err)
	}
	if (cur.Draft == nil && d.Version != 1) || (cur.Draft != nil && cur.Draft.ID != d.ID) {
		// A draft committed while LockForWrite waited for the row.
		return e.Load(ctx, tx, k, siteID, id, true)
	}
	row := Row{}
	for col, val := range cur.Row {
		row[col] = val
	}
	row["version"] = float64(cur.Row.Version() + 1)
	v := &View{Kind: k, Row: row, Draft: d}
	if k != Pages {
		return v, nil
	}
	moved := false
	if cur.Draft != nil {
		for _, col := range []string{"slug", "parent_id"} {
			if val, ok := cur.Draft.Drafted[col]; ok && !same(val, row[col]) {
				moved = true
			}
		}
	}
	if !moved {
		v.DraftedPath = cur.DraftedPath
		return v, nil
	}
	if err := e.FillDraftedPaths(ctx, tx, siteID, v); err != nil {
		return nil, err
	}
	return v, nil
}

// deleteOrder lists the kinds a subtree spans, parents first.
var deleteOrder = []*Kind{Pages, Contents, ContentBlocks}

// subtreeCTE is the recursive query of the subtree of the item ?2 of kind
// ?1 in site ?0: tree (kind, id, created), the item itself included, then
// sub, its first MaxClosure+1 rows. Each step looks children up by their
// reference's index, stored (the kind's table) and drafted (the index on
// drafts.drafted_parent). It does not descend into items never published
// (created: Delete reverts them with what hangs under them). UNION drops
// items reached twice, so a loop in older data ends.
//
// These statements are planned per request, with a guess of the
// subtree's size (a recursive CTE's) that is far above a leaf's. Written as
// joins, that guess made Postgres hash the whole drafts table (the drafts
// to lock; whether an item is a create, an EXISTS it turned into a hashed
// subplan): about 3,000 buffers and 80 ms per DELETE in bench/http, for a
// leaf too. Each item's draft is therefore a scalar subquery (one lookup
// by the (item_type, item_id) key) and each set of ids an array
// (= ANY(ARRAY(...)): lookups by primary key), which no guess turns into
// a scan.
var subtreeCTE = func() string {
	var steps []string
	for _, k := range deleteOrder {
		for _, c := range k.Children {
			ck := kinds[c.Type]
			// Table and column names are the kinds' own, never input.
			steps = append(steps,
				fmt.Sprintf("SELECT '%s'::text, x.id FROM %s x WHERE t.kind = '%s' AND x.site_id = ?0 AND x.%s = t.id",
					ck.Type, ck.Table, k.Type, c.Column),
				fmt.Sprintf("SELECT '%s'::text, x.item_id FROM drafts x WHERE t.kind = '%s' AND x.item_type = '%s' AND x.site_id = ?0 AND x.drafted_parent = t.id AND x.locale = ''",
					ck.Type, k.Type, ck.Type))
		}
	}
	return fmt.Sprintf(`WITH RECURSIVE tree (kind, id, created) AS (
    SELECT ?1::text, ?2::uuid, false
  UNION
    SELECT c.kind, c.id, coalesce((SELECT cd.event = 'create' FROM drafts cd WHERE cd.item_type = c.kind AND cd.item_id = c.id AND cd.locale = ''), false)
    FROM tree t CROSS JOIN LATERAL (
        %s
    ) AS c (kind, id)
    WHERE NOT t.created
),
sub AS MATERIALIZED (SELECT kind, id, created FROM tree LIMIT %d)`, strings.Join(steps, "\n        UNION ALL "), MaxClosure+1)
}()

// subtreeSummary is what both statements of Delete answer about sub, so
// that the second can tell whether the subtree changed under the locks.
const subtreeSummary = `(SELECT count(*) FROM sub) AS n,
  (SELECT coalesce(md5(string_agg(kind || ':' || id::text || ':' || created::text, ',' ORDER BY kind, id)), '') FROM sub) AS hash`

// lockSubtreeQuery locks the drafts of the subtree (sub), then its rows
// (each row's locking scan depends on the drafts' CTE, so the drafts are
// locked first), FOR UPDATE: no child can be inserted under a locked row
// until the transaction ends. It answers the subtree's summary, whether a
// draft of it is in a revision being published, and the drafts of its
// items never published.
var lockSubtreeQuery = dollarParams(func() string {
	q := subtreeCTE + `,
ld AS MATERIALIZED (
    SELECT d.id, d.event, d.revision_id FROM drafts d
    WHERE d.id = ANY (ARRAY(SELECT (SELECT x.id FROM drafts x WHERE x.item_type = sub.kind AND x.item_id = sub.id AND x.locale = '') FROM sub))
       OR d.id = ANY (ARRAY(` + localeDraftsOfSub + `))
    ORDER BY d.id FOR UPDATE OF d
)`
	var counts []string
	for _, k := range deleteOrder {
		name := "l_" + strings.ReplaceAll(k.Table, "-", "_")
		q += fmt.Sprintf(`,
%s AS MATERIALIZED (
    SELECT x.id FROM %s x WHERE x.id = ANY (ARRAY(SELECT id FROM sub WHERE kind = '%s')) AND (SELECT count(*) FROM ld) >= 0
    ORDER BY x.id FOR UPDATE
)`, name, k.Table, k.Type)
		counts = append(counts, "(SELECT count(*) FROM "+name+")")
	}
	return q + `
SELECT ` + subtreeSummary + `,
  (SELECT coalesce(bool_or(revision_id IS NOT NULL), false) FROM ld) AS in_flight,
  (SELECT coalesce(json_agg(id), '[]') FROM ld WHERE event = 'create') AS created,
  ` + strings.Join(counts, " + ") + ` AS locked`
}())

// localeDraftsOfSub selects the ids of the locale drafts of sub's items
// (a site with one locale has none), kind by kind, each by the drafts'
// (item_type, item_id, locale) key: a delete locks them with the shared
// drafts and deletes them (a delete is shared: docs/locales.md).
var localeDraftsOfSub = func() string {
	var parts []string
	for _, k := range deleteOrder {
		parts = append(parts, fmt.Sprintf(`SELECT x.id FROM drafts x WHERE x.item_type = '%s' AND x.item_id = ANY (ARRAY(SELECT id FROM sub WHERE kind = '%s')) AND x.locale <> ''`, k.Type, k.Type))
	}
	return strings.Join(parts, " UNION ALL ")
}()

// deleteSubtreeQuery writes the delete drafts of the subtree (found again,
// under the locks) in one statement: every item not drafted for deletion
// already gets a delete draft holding its live row (replacing an update
// draft, a move included, which so can never be published), and every
// item's row moves one version on. ?3 is the user, ?4 the time. It answers
// the subtree's summary and the item's (?2) delete draft as written.
var deleteSubtreeQuery = dollarParams(func() string {
	var sources, bumps []string
	for _, k := range deleteOrder {
		var pairs []string
		for _, f := range k.Fields {
			pairs = append(pairs, fmt.Sprintf("'%s', x.%s", f.Column, f.Column))
		}
		sources = append(sources, fmt.Sprintf(`SELECT coalesce(d.id, gen_random_uuid()), ?0::uuid, '%s', x.id, 'delete', jsonb_build_object(%s), '{}'::jsonb,
        ?3::uuid, NULL::uuid, coalesce(d.created_at, ?4), ?4::timestamptz, coalesce(d.version, 0) + 1
    FROM %s x
    LEFT JOIN drafts d ON d.item_type = '%s' AND d.item_id = x.id AND d.locale = ''
    WHERE x.id = ANY (ARRAY(SELECT id FROM live WHERE kind = '%s')) AND x.site_id = ?0 AND d.event IS DISTINCT FROM 'delete'`, k.Type, strings.Join(pairs, ", "), k.Table, k.Type, k.Type))
		bumps = append(bumps, fmt.Sprintf(`,
b_%s AS (UPDATE %s SET version = version + 1 WHERE id = ANY (ARRAY(SELECT id FROM live WHERE kind = '%s')) RETURNING 1)`,
			strings.ReplaceAll(k.Table, "-", "_"), k.Table, k.Type))
	}
	bumped := []string{"(SELECT count(*) FROM gone)"}
	for _, k := range deleteOrder {
		bumped = append(bumped, "(SELECT count(*) FROM b_"+strings.ReplaceAll(k.Table, "-", "_")+")")
	}
	return subtreeCTE + `,
live AS MATERIALIZED (SELECT kind, id FROM sub WHERE NOT created),
up AS (
    INSERT INTO drafts (id, site_id, item_type, item_id, event, drafted, object_changes, user_id, revision_id, created_at, updated_at, version)
    ` + strings.Join(sources, "\n    UNION ALL ") + `
    ON CONFLICT (id) DO UPDATE SET event = EXCLUDED.event, drafted = EXCLUDED.drafted, object_changes = EXCLUDED.object_changes,
        user_id = EXCLUDED.user_id, updated_at = EXCLUDED.updated_at, version = EXCLUDED.version
    RETURNING item_type, item_id, to_jsonb(drafts) AS j
),
-- The live items' locale drafts go: the delete replaces them, as it
-- replaces a shared update.
gone AS (DELETE FROM drafts WHERE id = ANY (ARRAY(` + strings.ReplaceAll(localeDraftsOfSub, "FROM sub", "FROM live") + `)) RETURNING 1)` + strings.Join(bumps, "") + `
SELECT ` + subtreeSummary + `,
  (SELECT j FROM up WHERE item_type = ?1 AND item_id = ?2) AS draft,
  ` + strings.Join(bumped, " + ") + ` AS bumped`
}())

// dollarParams rewrites bun's ?0, ?1… placeholders of q as $1, $2…, for a
// prepared statement.
func dollarParams(q string) string {
	return placeholder.ReplaceAllStringFunc(q, func(m string) string {
		n, _ := strconv.Atoi(m[1:])
		return "$" + strconv.Itoa(n+1)
	})
}

// placeholder is one of bun's indexed placeholders.
var placeholder = regexp.MustCompile(`\?[0-9]+`)
