package models

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Page is the caller's filter, sort and pagination of a list (the api's
// parsed query); a store applies it to the site-scoped select it builds.
type Page func(*bun.SelectQuery) *bun.SelectQuery

// SiteRow is what every row of a site's table has: its id, its site and
// when it was made. Records embed it (bun and encoding/json take an
// anonymous struct's fields as the record's own); Find looks rows up by it.
type SiteRow struct {
	ID        uuid.UUID `bun:"id,pk,type:uuid"`
	SiteID    uuid.UUID `bun:"site_id,type:uuid,notnull"`
	CreatedAt time.Time `bun:"created_at,notnull"`
}

// SiteRecord is a SiteRow of a table whose rows change: it has updated_at.
type SiteRecord struct {
	SiteRow
	UpdatedAt time.Time `bun:"updated_at,notnull"`
}

// NewSiteRecord is a new record of the site: a fresh id, made now.
func NewSiteRecord(siteID uuid.UUID) SiteRecord {
	return SiteRecordOf(uuid.New(), siteID, time.Now().UTC())
}

// SiteRecordOf is the record id of the site, created and updated at.
func SiteRecordOf(id, siteID uuid.UUID, at time.Time) SiteRecord {
	return SiteRecord{SiteRow: SiteRow{ID: id, SiteID: siteID, CreatedAt: at}, UpdatedAt: at}
}

// Find loads the record of model T of the site with that id, FOR UPDATE
// when lock is set. Another site's record looks like none: NotFound(what).
func Find[T any](ctx context.Context, db bun.IDB, siteID, id uuid.UUID, what string, lock bool) (*T, error) {
	m := new(T)
	sel := db.NewSelect().Model(m).Where("id = ? AND site_id = ?", id, siteID)
	if lock {
		sel = sel.For("UPDATE")
	}
	if err := sel.Scan(ctx); IsNoRows(err) {
		return nil, NotFound(what)
	} else if err != nil {
		return nil, err
	}
	return m, nil
}

// FindFunc finds a site's record of model T by id.
type FindFunc[T any] func(ctx context.Context, db bun.IDB, siteID, id uuid.UUID) (*T, error)

// Finder is Find, unlocked, for records of model T; what names them in a 404.
func Finder[T any](what string) FindFunc[T] {
	return func(ctx context.Context, db bun.IDB, siteID, id uuid.UUID) (*T, error) {
		return Find[T](ctx, db, siteID, id, what, false)
	}
}

// The finders of a site's records by id.
var (
	FindTheme      = Finder[Theme]("theme")
	FindLayout     = Finder[Layout]("layout")
	FindThemeAsset = Finder[ThemeAsset]("theme asset")
	FindAsset      = Finder[Asset]("asset")
	FindAssetImage = Finder[AssetImage]("asset image")
	FindUpload     = Finder[AssetUpload]("asset upload")
	FindUser       = Finder[User]("user")
)

// ByIDs loads the site's records of model T with the given ids (repeats
// allowed), oldest first.
func ByIDs[T any](ctx context.Context, db bun.IDB, siteID uuid.UUID, ids []uuid.UUID) ([]T, error) {
	var rows []T
	if len(ids) == 0 {
		return rows, nil
	}
	err := db.NewSelect().Model(&rows).Where("site_id = ? AND id IN (?)", siteID, bun.In(Unique(ids))).OrderExpr("created_at, id").Scan(ctx)
	return rows, err
}

// Unique is in without repeats, in its order.
func Unique(in []uuid.UUID) []uuid.UUID {
	seen := map[uuid.UUID]bool{}
	out := make([]uuid.UUID, 0, len(in))
	for _, id := range in {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// List loads one page of the records of model T matching where (which
// scopes them by site), and how many match in all.
func List[T any](ctx context.Context, db bun.IDB, page Page, where string, args ...any) ([]T, int64, error) {
	var rows []T
	total, err := page(db.NewSelect().Model(&rows).Where(where, args...)).ScanAndCount(ctx)
	return rows, total, err
}

// Ranked is a row of a per-parent page query: N is its rank in its
// parent's order, Total the parent's count (rank 1 is always selected, so
// the total is known even for a page past the end).
type Ranked struct {
	ID     uuid.UUID `bun:"id"`
	Parent uuid.UUID `bun:"parent"`
	N      int       `bun:"n"`
	Total  int       `bun:"total"`
}

// Window is the page of each parent's records RankPages keeps: by number,
// ranks (Offset, Offset+Limit] and rank 1 (for the total); or, Keyset set,
// by cursor, the Limit+1 records after (Keyset.Before: before) the record
// Keyset.ID in its parent's order, nearest first (ID uuid.Nil: from the
// parent's first record, or backwards from its last). A cursor page reads
// one record more than the page, which tells that another follows (the
// caller drops it), and no total; a cursor that is none of the parent's
// records (a forged one, or one removed since) gives an empty page, as on
// a list (Keyset).
type Window struct {
	Offset, Limit int
	Keyset        *Keyset
}

// keysetWhere is RankPages' condition and order of a cursor page, over
// the ranked rows r: ?2 is the cursor's id, ?3 the rows to read.
func (w Window) keysetWhere() (where, order string) {
	k := w.Keyset
	switch {
	case k.ID == uuid.Nil && !k.Before:
		return "r.n <= ?3", "r.parent, r.n"
	case k.ID == uuid.Nil:
		return "r.n > r.total - ?3", "r.parent, r.n DESC"
	case !k.Before:
		return "EXISTS (SELECT 1 FROM r c WHERE c.id = ?2 AND c.parent = r.parent AND r.n > c.n AND r.n <= c.n + ?3)", "r.parent, r.n"
	}
	return "EXISTS (SELECT 1 FROM r c WHERE c.id = ?2 AND c.parent = r.parent AND r.n < c.n AND r.n >= c.n - ?3)", "r.parent, r.n DESC"
}

// RankPages runs inner, SQL that defines the CTE b (columns id, parent,
// pos) over the site ?0 and the parents ?1, ranks b's rows per parent by
// pos and id, and keeps the window w of each parent's (by number: rank 1
// plus ranks (offset, offset+limit]): one page of each parent's records
// in one bounded query. inner may name extra arguments from ?4 on.
func RankPages(ctx context.Context, db bun.IDB, inner string, siteID uuid.UUID, parents []uuid.UUID, w Window, extra ...any) ([]Ranked, error) {
	var rows []Ranked
	if len(parents) == 0 {
		return rows, nil
	}
	where, order := "r.n = 1 OR (r.n > ?2 AND r.n <= ?3)", "r.parent, r.n"
	args := []any{siteID, bun.In(parents), w.Offset, w.Offset + w.Limit}
	if w.Keyset != nil {
		where, order = w.keysetWhere()
		args[2], args[3] = w.Keyset.ID, w.Limit+1
	}
	err := db.NewRaw(inner+`, r AS (SELECT id, parent, row_number() OVER (PARTITION BY parent ORDER BY pos, id) AS n,
  count(*) OVER (PARTITION BY parent) AS total FROM b WHERE parent IN (?1))
SELECT r.id, r.parent, r.n, r.total FROM r WHERE `+where+` ORDER BY `+order,
		append(args, extra...)...).Scan(ctx, &rows)
	return rows, err
}

// ChildPages is RankPages over the site's rows of table whose column
// parent is one of parents, each parent's in the named order (one ending in a unique column).
func ChildPages(ctx context.Context, db bun.IDB, table, parent string, order Order, siteID uuid.UUID, parents []uuid.UUID, w Window) ([]Ranked, error) {
	inner := "WITH b AS (SELECT id, " + parent + " AS parent, row_number() OVER (PARTITION BY " + parent + " ORDER BY " + order.SQL() + ") AS pos FROM " +
		table + " WHERE site_id = ?0 AND " + parent + " IN (?1))"
	rows, err := RankPages(ctx, db, inner, siteID, parents, w)
	if err != nil {
		return nil, fmt.Errorf("%s of their %s: %w", table, parent, err)
	}
	return rows, nil
}

// ListQuery is what a client asked of a collection: filters, order and
// page. Its columns come from the resource's own table of them (api's
// QuerySpec), never from the client.
type ListQuery struct {
	// Filters are column = value, compared as text: a value that is not a
	// valid uuid, number or boolean for its column matches nothing
	// instead of failing.
	Filters []ColumnValue
	Sort    []SortColumn
	// DefaultSort is the named order added after Sort (and the whole
	// order when Sort is empty).
	DefaultSort   Order
	Limit, Offset int
	// Search keeps only the rows it finds (filter[q]), most relevant first
	// unless Sort is given (relevance then breaks its ties).
	Search *Search
	// Keyset is a cursor page (then Offset is 0 and Search nil): it reads
	// Limit+1 rows, the last only telling that another page follows.
	Keyset *Keyset
	// Drafted tells the filters the list shows the drafted view.
	Drafted bool
}

// Order names the fixed order of a collection or of a to-many
// relationship. Its SQL is here (orderSQL), so api names an order and
// never writes one; an Order is an int, so no string can pass for one.
type Order int

// The orders collections and relationships use. The ones named for an
// alias (drafts d, revisions r) are for the queries that join.
const (
	OrderNone             Order = iota
	OrderOldest                 // created_at, id
	OrderNewest                 // created_at DESC, id
	OrderFileName               // lower(file_name), id: layouts
	OrderPath                   // lower(path), id: theme assets
	OrderDraftsOldest           // d.created_at, d.id: GET /drafts
	OrderRevisionsNewest        // r.created_at DESC, r.id: GET /revisions
	OrderRevisionsSoonest       // r.publish_at, r.id: scheduled revisions
	OrderMembersOldest          // m.created_at, m.id: GET /memberships
	OrderTrash                  // v.created_at DESC, v.id DESC: the trash (delete versions, latest first)
)

var orderSQL = map[Order]string{
	OrderOldest:           "created_at, id",
	OrderNewest:           "created_at DESC, id",
	OrderFileName:         "lower(file_name), id",
	OrderPath:             "lower(path), id",
	OrderDraftsOldest:     "d.created_at, d.id",
	OrderRevisionsNewest:  "r.created_at DESC, r.id",
	OrderRevisionsSoonest: "r.publish_at, r.id",
	OrderMembersOldest:    "m.created_at, m.id",
	OrderTrash:            "v.created_at DESC, v.id DESC",
}

// SQL is the order's ORDER BY expression ("" for OrderNone).
func (o Order) SQL() string { return orderSQL[o] }

// ColumnValue is one filter of a ListQuery.
type ColumnValue struct {
	Column, Value string
	// None asks for rows without a value (NULL) instead.
	None bool
	// Op is the operator ("" is equality, compared as text unless Arg is
	// set); contains and prefix read Value, the others Arg.
	Op FilterOp
	// Arg is the typed value: a uuid.UUID, a time.Time, a []string for in.
	Arg any
	// LastUser, an item type, compares Arg with who last changed the row
	// instead of a column, among the site SiteID's drafts, versions or
	// uploads; Drafts, under a preview, is the set whose drafts count.
	LastUser string
	SiteID   uuid.UUID
	Drafts   *DraftSet
	// Locale, set on a pages' path filter in a locale other than the
	// base, compares the page's path in that locale (page_locale_paths of
	// the site SiteID) instead of pages.path (listfilter.go).
	Locale string
}

// SortColumn is one sort key of a ListQuery.
type SortColumn struct {
	Column string
	Desc   bool
}

// Apply adds the filters, the order and the page to a collection query
// (a Page).
func (l ListQuery) Apply(sel *bun.SelectQuery) *bun.SelectQuery {
	table, alias := fromOf(sel)
	for _, f := range l.Filters {
		sel = f.where(sel, alias, l.Drafted)
	}
	if l.Keyset != nil {
		return l.applyKeyset(sel, table, alias)
	}
	if l.Search != nil {
		sel = l.Search.apply(sel, len(l.Sort) == 0)
	}
	for _, s := range l.Sort {
		dir := "ASC"
		if s.Desc {
			dir = "DESC"
		}
		sel = sel.OrderExpr("? "+dir, bun.Ident(s.Column))
	}
	if l.Search != nil && len(l.Sort) > 0 {
		sel = sel.OrderExpr("search_hits.rank DESC")
	}
	if order := l.DefaultSort.SQL(); order != "" {
		sel = sel.OrderExpr(order)
	}
	return sel.Limit(int64(l.Limit)).Offset(int64(l.Offset))
}
