package models

import (
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/schema"
)

// FilterOp is the operator of a list filter (filter[name][op], api's
// filter table; docs/api-conventions.md).
type FilterOp string

// The operators. OpEq is filter[name] itself.
const (
	OpEq       FilterOp = "eq"
	OpContains FilterOp = "contains" // case-insensitive substring
	OpPrefix   FilterOp = "prefix"   // case-sensitive prefix
	OpGt       FilterOp = "gt"
	OpGte      FilterOp = "gte"
	OpLt       FilterOp = "lt"
	OpLte      FilterOp = "lte"
	OpIn       FilterOp = "in" // one of a list (Arg is a []string)
)

var comparisons = map[FilterOp]string{OpGt: ">", OpGte: ">=", OpLt: "<", OpLte: "<="}

// EscapeLike escapes LIKE's wildcards (% and _) and its escape character
// (\) in s, so a value matches only itself.
func EscapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// where adds the filter to sel, whose rows are of the table aliased alias
// (drafted: the list shows the drafted view).
func (f ColumnValue) where(sel *bun.SelectQuery, alias string, drafted bool) *bun.SelectQuery {
	col := bun.Ident(f.Column)
	switch {
	case f.Locale != "":
		return sel.Where("? IN (?)", bun.Ident(alias+".id"), f.localePaths())
	case f.LastUser != "":
		return sel.Where("?", f.lastUser(alias, drafted))
	case f.None:
		return sel.Where("? IS NULL", col)
	case f.Op == OpContains:
		return sel.Where(`? ILIKE ? ESCAPE '\'`, col, "%"+EscapeLike(f.Value)+"%")
	case f.Op == OpPrefix:
		return sel.Where(`? LIKE ? ESCAPE '\'`, col, EscapeLike(f.Value)+"%")
	case f.Op == OpIn:
		return sel.Where("? IN (?)", col, bun.In(f.Arg))
	case comparisons[f.Op] != "":
		return sel.Where("? "+comparisons[f.Op]+" ?", col, f.Arg)
	case f.Arg != nil:
		return sel.Where("? = ?", col, f.Arg)
	}
	return sel.Where("?::text = ?", col, f.Value)
}

// localePaths are the pages of the site f.SiteID whose stored path in
// f.Locale passes the filter (the operators of pages.path, on
// page_locale_paths.path): an equality is one lookup of the index of
// (site, locale, path).
func (f ColumnValue) localePaths() schema.QueryWithArgs {
	const from = "SELECT a.page_id FROM page_locale_paths a WHERE a.site_id = ? AND a.locale = ? AND "
	switch f.Op {
	case OpContains:
		return bun.SafeQuery(from+`a.path ILIKE ? ESCAPE '\'`, f.SiteID, f.Locale, "%"+EscapeLike(f.Value)+"%")
	case OpPrefix:
		return bun.SafeQuery(from+`a.path LIKE ? ESCAPE '\'`, f.SiteID, f.Locale, EscapeLike(f.Value)+"%")
	case OpIn:
		return bun.SafeQuery(from+"a.path IN (?)", f.SiteID, f.Locale, bun.In(f.Arg))
	}
	return bun.SafeQuery(from+"a.path = ?", f.SiteID, f.Locale, f.Value)
}

// DraftSet narrows the drafts a drafted list reads to a release's
// preview set (drafts.Preview): the release's drafts and Extra, the
// closure's drafts staged elsewhere (ids as text).
type DraftSet struct {
	Release uuid.UUID
	Extra   []string
}

// lastUser keeps the rows of item type typ, aliased alias, that user last
// changed: a draftable record's pending draft's author in the drafted view
// (only the set's drafts under a preview), else its last version's; an
// asset's last uploader. The last version's user is last_versions' (each
// record's newest version, kept by triggers on versions: migration
// 20261202020100_last_versions), one range of last_versions_user_idx;
// the drafts and uploads are driven by the user's own (the *_user_idx
// indexes), each checked to be the record's latest by an index probe,
// never by a subquery run for each row of the site.
func (f ColumnValue) lastUser(alias string, drafted bool) schema.QueryWithArgs {
	id := bun.Ident(alias + ".id")
	if f.LastUser == "assets" {
		return bun.SafeQuery(`? IN (SELECT u.asset_id FROM asset_uploads u WHERE u.site_id = ? AND u.user_id = ?
  AND NOT EXISTS (SELECT 1 FROM asset_uploads w WHERE w.asset_id = u.asset_id AND (w.created_at, w.id) > (u.created_at, u.id)))`,
			id, f.SiteID, f.Arg)
	}
	live := bun.SafeQuery(`? IN (SELECT l.item_id FROM last_versions l WHERE l.site_id = ? AND l.item_type = ? AND l.user_id = ?)`,
		id, f.SiteID, f.LastUser, f.Arg)
	if !drafted {
		return live
	}
	set := bun.SafeQuery("TRUE")
	if f.Drafts != nil {
		set = bun.SafeQuery("(d.release_id = ? OR d.id = ANY(?::uuid[]))", f.Drafts.Release, pgdialect.Array(f.Drafts.Extra))
	}
	// A draft without a user (deleted since) defers to the last version,
	// as before: COALESCE(draft's user, last version's user).
	// Drafts of any locale: a translator's draft names its user too.
	return bun.SafeQuery(`(? IN (SELECT d.item_id FROM drafts d WHERE d.site_id = ? AND d.item_type = ? AND d.user_id = ? AND ?)
  OR ? AND NOT EXISTS (SELECT 1 FROM drafts d WHERE d.item_type = ? AND d.item_id = ? AND d.user_id IS NOT NULL AND ?)) /* drafts of any locale */`,
		id, f.SiteID, f.LastUser, f.Arg, set, live, f.LastUser, id, set)
}

// Keyset is a cursor page of a ListQuery (page[after], page[before]): the
// rows after, or before, the site's row ID in the list's order (ID
// uuid.Nil: from the list's start, or backwards from its end).
type Keyset struct {
	ID, SiteID uuid.UUID
	Before     bool
}

// orderKey is one key of a list's order.
type orderKey struct {
	expr any // a bun.Ident or bun.Safe
	desc bool
}

// keys is the list's whole order: its sort, then its default order (which
// ends in the row's id, so the order is total).
func (l ListQuery) keys() []orderKey {
	var out []orderKey
	for _, s := range l.Sort {
		out = append(out, orderKey{expr: bun.Ident(s.Column), desc: s.Desc})
	}
	for _, part := range strings.Split(l.DefaultSort.SQL(), ", ") {
		expr, desc := strings.CutSuffix(part, " DESC")
		out = append(out, orderKey{expr: bun.Safe(expr), desc: desc})
	}
	return out
}

// fromOf is the table and alias of sel's rows.
func fromOf(sel *bun.SelectQuery) (table, alias string) {
	if m, ok := sel.GetModel().(bun.TableModel); ok && m.Table() != nil {
		return m.Table().Name, m.Table().Alias
	}
	table, alias, ok := strings.Cut(sel.GetTableName(), " AS ")
	if !ok {
		alias = table
	}
	return table, alias
}

// applyKeyset keeps the rows after (before) the cursor's row, orders them
// (before: backwards, nearest first; the caller reverses the page) and
// reads one row more than the page: that row, which the caller drops,
// tells whether another page follows, so a cursor page runs no count.
// Each key of the cursor's row is read by id from the same table: a
// cursor holds an id only. NULL sorts last ascending, first descending,
// as PostgreSQL orders it.
//
// A cursor names a row of the site: when that row does not exist (a
// forged cursor, another site's, or one deleted since), the page is
// empty in either direction, as documented. The keys alone cannot tell:
// the missing row's keys read NULL, which a row comparison and an
// ascending key's comparison reject, but which a descending key's (NULL
// sorts first, so every row comes after it) accepts for every row. The
// check is an uncorrelated EXISTS, run once (a one-time filter).
//
// When every key runs in one direction and none can be NULL (the default
// orders created_at, id and the like), the keyset is one row comparison,
// (k1, …, id) > (v1, …, cursor), which a btree index on the same columns
// answers as a range scan from the cursor. Otherwise (mixed directions,
// a nullable sort key) it is the expanded form: k1 > v1 OR (k1 = v1 AND
// k2 > v2) …, NULLs placed as PostgreSQL orders them.
func (l ListQuery) applyKeyset(sel *bun.SelectQuery, table, alias string) *bun.SelectQuery {
	keys := l.keys()
	if l.Keyset.ID != uuid.Nil {
		at := func(expr any) any {
			if isID(expr) {
				return l.Keyset.ID
			}
			return bun.SafeQuery("(SELECT ? FROM ? AS ? WHERE ? = ? AND ? = ?)", expr, bun.Ident(table), bun.Ident(alias),
				bun.Ident(alias+".id"), l.Keyset.ID, bun.Ident(alias+".site_id"), l.Keyset.SiteID)
		}
		sel = sel.Where("EXISTS (SELECT 1 FROM ? AS cursor_row WHERE cursor_row.id = ? AND cursor_row.site_id = ?)",
			bun.Ident(table), l.Keyset.ID, l.Keyset.SiteID)
		if dir, ok := uniform(keys); ok {
			sel = rowCompare(sel, keys, at, dir != l.Keyset.Before)
		} else {
			sel = expanded(sel, keys, at, l.Keyset.Before)
		}
	}
	return orderKeys(sel, keys, l.Keyset.Before, l.Limit+1)
}

// rowCompare keeps the rows whose keys come after (less: before) the
// cursor's, as one row comparison.
func rowCompare(sel *bun.SelectQuery, keys []orderKey, at func(any) any, less bool) *bun.SelectQuery {
	cols, vals := make([]string, len(keys)), make([]string, len(keys))
	var args []any
	for i, k := range keys {
		cols[i], vals[i] = "?", "?"
		args = append(args, k.expr)
	}
	for _, k := range keys {
		args = append(args, at(k.expr))
	}
	op := " > "
	if less {
		op = " < "
	}
	return sel.Where("("+strings.Join(cols, ", ")+")"+op+"("+strings.Join(vals, ", ")+")", args...)
}

// expanded is the keyset as a disjunction, for orders a row comparison
// cannot express.
func expanded(sel *bun.SelectQuery, keys []orderKey, at func(any) any, before bool) *bun.SelectQuery {
	var or []string
	var args []any
	for i, k := range keys {
		var and []string
		for _, prev := range keys[:i] {
			and = append(and, "? IS NOT DISTINCT FROM ?")
			args = append(args, prev.expr, at(prev.expr))
		}
		if k.desc != before {
			and = append(and, "(? IS NOT NULL AND (? IS NULL OR ? < ?))")
		} else {
			and = append(and, "(? IS NULL AND ? IS NOT NULL OR ? > ?)")
		}
		args = append(args, k.expr, at(k.expr), k.expr, at(k.expr))
		or = append(or, "("+strings.Join(and, " AND ")+")")
	}
	return sel.Where("("+strings.Join(or, " OR ")+")", args...)
}

// notNullColumns are the columns every table declares NOT NULL that lists
// sort by (a key over another column may be NULL).
var notNullColumns = map[string]bool{"id": true, "created_at": true, "updated_at": true, "file_name": true, "path": true}

// column is a key's column: the expression without its table alias and
// lower().
func column(expr any) string {
	var s string
	switch e := expr.(type) {
	case bun.Ident:
		s = string(e)
	case bun.Safe:
		s = string(e)
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "lower("), ")")
	if _, after, ok := strings.Cut(s, "."); ok {
		s = after
	}
	return s
}

func isID(expr any) bool { return column(expr) == "id" }

// uniform tells whether keys all run in one direction (desc) and none
// can be NULL: then a row comparison orders them as ORDER BY does.
func uniform(keys []orderKey) (desc, ok bool) {
	for _, k := range keys {
		if !notNullColumns[column(k.expr)] || k.desc != keys[0].desc {
			return false, false
		}
	}
	return keys[0].desc, true
}

// orderKeys orders sel by keys (backwards: reversed) and, limit > 0,
// reads limit rows. The limit is written after the last key, not with
// bun's Limit: ScanAndCount then runs the one query and counts the rows it
// read (bun counts in a second query only a query with a Limit or
// Offset), which is all a cursor page needs.
func orderKeys(sel *bun.SelectQuery, keys []orderKey, backwards bool, limit int) *bun.SelectQuery {
	for i, k := range keys {
		dir := " ASC"
		if k.desc != backwards {
			dir = " DESC"
		}
		if i == len(keys)-1 && limit > 0 {
			sel = sel.OrderExpr("?"+dir+" LIMIT ?", k.expr, limit)
			continue
		}
		sel = sel.OrderExpr("?"+dir, k.expr)
	}
	return sel
}
