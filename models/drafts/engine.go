package drafts

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
)

// Draft is a pending change of one item.
type Draft struct {
	bun.BaseModel `bun:"table:drafts,alias:d"`

	ID       uuid.UUID `bun:"id,pk,type:uuid" json:"id"`
	SiteID   uuid.UUID `bun:"site_id,type:uuid,notnull" json:"site_id"`
	ItemType string    `bun:"item_type,notnull" json:"item_type"`
	ItemID   uuid.UUID `bun:"item_id,type:uuid,notnull" json:"item_id"`
	Event    string    `bun:"event,notnull" json:"event"`
	// Locale is "" for the record's shared draft (shared attributes and the
	// base locale's values); a tag for an update of that locale's values
	// only, keyed "column@tag" (docs/locales.md).
	Locale        string         `bun:"locale,notnull" json:"locale,omitempty"`
	Drafted       map[string]any `bun:"drafted,type:jsonb,notnull" json:"drafted"`
	ObjectChanges map[string]any `bun:"object_changes,type:jsonb,notnull" json:"object_changes"`
	UserID        *uuid.UUID     `bun:"user_id,type:uuid" json:"user_id"`
	RevisionID    *uuid.UUID     `bun:"revision_id,type:uuid" json:"revision_id"`
	// ReleaseID is the release the draft is staged in (releases.go).
	ReleaseID *uuid.UUID `bun:"release_id,type:uuid" json:"release_id"`
	CreatedAt time.Time  `bun:"created_at,notnull" json:"created_at"`
	UpdatedAt time.Time  `bun:"updated_at,notnull" json:"updated_at"`
	Version   int        `bun:"version,notnull" json:"version"`
}

// Draft events: what publishing a draft does to its item. Named Event* so
// they do not read as the engine's methods of the same verb (Engine.Update).
const (
	EventCreate = "create"
	EventUpdate = "update"
	EventDelete = "delete"
)

// The domain errors of the engine (models/errors.go; api/errors.go maps them).
var (
	ErrNotFound = models.ErrNotFound
	ErrInFlight = models.ErrInFlight
	ErrDeleted  = models.ErrDeleted
	ErrStale    = models.ErrStaleVersion
	ErrTooLarge = models.ErrTooLarge
	// ErrRetry means another writer drafted the item while this transaction
	// waited for its row: the transaction must run again (it then locks the
	// draft first, in the order every writer uses).
	ErrRetry     = models.ErrRetry
	errNoChanges = errors.New("no changes")
)

// onePendingDraftPerItem is the unique constraint that keeps an item to one
// pending draft. Two writers inserting the first draft of one item meet on
// it; the loser's transaction runs again (ErrRetry).
const onePendingDraftPerItem = "drafts_item_type_item_id_key"

// MaxClosure bounds how many drafts one publish or revert may pull in, so
// one request cannot make an unbounded transaction.
const MaxClosure = 10000

// Row is a record as a map of columns (Postgres to_jsonb).
type Row map[string]any

// ID returns the row's id.
func (r Row) ID() uuid.UUID {
	s, ok := r["id"].(string) // to_jsonb writes a uuid as its text
	if !ok {
		s = fmt.Sprint(r["id"])
	}
	id, _ := uuid.Parse(s)
	return id
}

// Version is the row's version (its ETag, and what a write must match): a
// number, as to_jsonb and the engine's own writes keep it (0 when absent).
func (r Row) Version() int {
	switch v := r["version"].(type) {
	case float64:
		return int(v)
	case int:
		return v
	}
	return 0
}

// Live tells whether the row has been published.
func (r Row) Live() bool { return r["published_at"] != nil }

// View is an item as a read sees it.
type View struct {
	Kind  *Kind
	Row   Row    // the stored row
	Draft *Draft // the shared draft (locale ""); nil without one
	// LocaleDrafts are the record's pending locale drafts by tag (their
	// keys are disjoint from the shared draft's and each other's); nil
	// without any.
	LocaleDrafts map[string]*Draft
	// DraftedPath is a page's path as drafted when the load derived it
	// (LockForWrite, LoadMany with drafts); nil otherwise.
	DraftedPath *string
}

// Drafted is the item as the draft would make it: the row with the drafted
// columns laid over it (the row itself for a create draft), the shared
// draft's and every locale draft's.
func (v *View) Drafted() Row {
	if v.Draft == nil && len(v.LocaleDrafts) == 0 || v.Draft != nil && v.Draft.Event == EventCreate {
		return v.Row
	}
	out := maps.Clone(v.Row) // the runtime's copy of the whole table, not one insert per field
	if out == nil {
		out = Row{}
	}
	if v.Draft != nil {
		for k, val := range v.Draft.Drafted {
			out[k] = val
		}
	}
	for _, d := range v.LocaleDrafts {
		for k, val := range d.Drafted {
			out[k] = val
		}
	}
	if v.Draft != nil && v.Draft.Event == EventDelete {
		out["trashed_at"] = v.Draft.CreatedAt.UTC().Format(time.RFC3339Nano)
	}
	return out
}

// Engine runs draft operations for one deployment.
type Engine struct {
	// AssetURLPrefix is the public URL prefix of the assets bucket
	// (<endpoint>/<bucket>/), used to recognise asset links in bodies.
	AssetURLPrefix string
}

// NewEngine returns the engine for a deployment's storage (asset links in
// block bodies are recognised by the assets bucket's public URL).
func NewEngine(s config.Storage) *Engine {
	return &Engine{AssetURLPrefix: s.PublicEndpoint + "/" + s.AssetsBucket + "/"}
}

// --- loading -------------------------------------------------------------------

func scanRows(ctx context.Context, db bun.IDB, query string, args ...any) ([]Row, error) {
	var raws []json.RawMessage
	if err := db.NewRaw(query, args...).Scan(ctx, &raws); err != nil {
		return nil, err
	}
	out := make([]Row, 0, len(raws))
	for _, raw := range raws {
		r, err := decodeRow(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// loadRows reads rows of kind by id within a site, optionally locking them.
func loadRows(ctx context.Context, db bun.IDB, k *Kind, siteID uuid.UUID, ids []uuid.UUID, lock bool) (map[uuid.UUID]Row, error) {
	if len(ids) == 0 {
		return map[uuid.UUID]Row{}, nil
	}
	q := "SELECT to_jsonb(t) FROM " + k.Table + " t WHERE t.site_id = ? AND t.id IN (?)"
	if lock {
		q += " ORDER BY t.id FOR UPDATE"
	}
	rows, err := scanRows(ctx, db, q, siteID, bun.In(ids))
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", k.Type, err)
	}
	out := make(map[uuid.UUID]Row, len(rows))
	for _, r := range rows {
		out[r.ID()] = r
	}
	return out, nil
}

// Load reads one item of a site with its draft. Without withDraft, an item
// that was never published is ErrNotFound (live reads never see it).
func (e *Engine) Load(ctx context.Context, db bun.IDB, k *Kind, siteID, id uuid.UUID, withDraft bool) (*View, error) {
	views, err := e.LoadMany(ctx, db, k, siteID, []uuid.UUID{id}, withDraft)
	if err != nil {
		return nil, err
	}
	if v := views[id]; v != nil {
		return v, nil
	}
	return nil, models.NotFound(k.Singular())
}

// LoadMany reads items of a site with their drafts, keyed by id, in one
// statement whatever their number (readQuery). Items Load would report
// missing are left out. Under a preview (withDraft), the release's stamp
// the statement read goes to ctx's StampWatch, if any.
func (e *Engine) LoadMany(ctx context.Context, db bun.IDB, k *Kind, siteID uuid.UUID, ids []uuid.UUID, withDraft bool) (map[uuid.UUID]*View, error) {
	out, stamp, err := e.loadMany(ctx, db, k, siteID, ids, withDraft)
	if w := stampWatchOf(ctx); w != nil && stamp != nil {
		w.saw(*stamp)
	}
	return out, err
}

// loadMany is LoadMany, with, under a preview, the release's stamp as the
// statement read it (nil when the site has no such release or no ids).
func (e *Engine) loadMany(ctx context.Context, db bun.IDB, k *Kind, siteID uuid.UUID, ids []uuid.UUID, withDraft bool) (map[uuid.UUID]*View, *ReleaseStamp, error) {
	out := make(map[uuid.UUID]*View, len(ids))
	if len(ids) == 0 {
		return out, nil, nil
	}
	if p := previewOf(ctx); withDraft && p != nil {
		return loadPreview(ctx, db, k, siteID, ids, p)
	}
	args := []any{models.UUIDParam(siteID), models.UUIDsParam(ids)}
	if withDraft {
		args = append(args, k.Type)
	}
	several := withDraft && severalLocales(ctx)
	rows, err := models.QueryPrepared(ctx, db, readQuery(k, withDraft, several), args...)
	if err != nil {
		return nil, nil, fmt.Errorf("load %s: %w", k.Type, err)
	}
	defer rows.Close()
	for rows.Next() {
		// Valid until the next row: all are decoded (copied) before it.
		var row, draft, localeDrafts sql.RawBytes
		var path *string
		dest := []any{&row, &draft, &path}
		if several {
			dest = append(dest, &localeDrafts)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, nil, fmt.Errorf("load %s: %w", k.Type, err)
		}
		v := &View{Kind: k, DraftedPath: path}
		if v.Row, err = decodeRow(row); err != nil {
			return nil, nil, fmt.Errorf("load %s: %w", k.Type, err)
		}
		if !withDraft && !v.Row.Live() {
			continue
		}
		if len(draft) > 0 {
			v.Draft = new(Draft) // its json tags are the columns, as to_jsonb writes them
			if err := json.Unmarshal(draft, v.Draft); err != nil {
				return nil, nil, fmt.Errorf("load %s: draft: %w", k.Type, err)
			}
		}
		if err := v.setLocaleDrafts(localeDrafts); err != nil {
			return nil, nil, fmt.Errorf("load %s: %w", k.Type, err)
		}
		out[v.Row.ID()] = v
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("load %s: %w", k.Type, err)
	}
	return out, nil, nil
}

// readQuery is LoadMany's statement for kind k: $1 the site, $2 the ids
// (uuid[]) and, withDraft, $3 the kind's type. It answers each row, with withDraft its draft
// and, for pages, the path its drafted slugs and parents give it (as
// LockForWrite derives it, from each row of the batch: a page whose drafted
// parents loop gets none, and keeps its stored path). Its text depends only
// on k, withDraft and several, so it is prepared once per connection and planned
// once (generic plan): parsing and planning was most of a read's Postgres
// time. The walk is correlated to each row rather than a recursive query
// over the batch's uuid[]: each step is one lookup
// by primary key and one by the drafts' (item_type, item_id) key, whatever
// the planner guesses of the array's length.
//
// several (a site with more than one locale, withDraft) adds a fourth
// column: the item's locale drafts as a jsonb array ordered by locale,
// whatever the request's locale, so a batch may serve requests of several
// locales. A site with one locale has none and keeps the statement of
// before locales, so its reads cost what they did.
func readQuery(k *Kind, withDraft, several bool) string {
	// k.Table is one of the kinds' fixed table names, never input.
	if !withDraft {
		return `SELECT to_jsonb(t), NULL::jsonb, NULL::text FROM ` + k.Table + ` t WHERE t.site_id = $1 AND t.id = ANY($2)`
	}
	path := "NULL::text"
	if k == Pages {
		path = `(WITH RECURSIVE ` + draftedPathWalk("t", "", "$1") + ` SELECT ` + draftedPathOf + `)`
	}
	locales := ""
	if several {
		locales = `,
    (SELECT jsonb_agg(to_jsonb(ld) ORDER BY ld.locale) FROM drafts ld WHERE ld.item_type = $3 AND ld.item_id = t.id AND ld.locale <> '')`
	}
	return `SELECT to_jsonb(t), to_jsonb(d), ` + path + locales + ` FROM ` + k.Table + ` t
LEFT JOIN drafts d ON d.item_type = $3 AND d.item_id = t.id AND d.locale = ''
WHERE t.site_id = $1 AND t.id = ANY($2)`
}

// severalLocales tells whether ctx's request is on a site with more than
// one locale: api/locale.go carries a Locale then, and only then (a
// site with one locale carries none), so the loads know whether locale
// drafts can exist without a query.
func severalLocales(ctx context.Context) bool { return LocaleOf(ctx).Tag != "" }

// setLocaleDrafts sets v.LocaleDrafts from raw, a jsonb array of drafts
// (to_jsonb of each; nil or null: none).
func (v *View) setLocaleDrafts(raw []byte) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var ds []*Draft // their json tags are the columns, as to_jsonb writes them
	if err := json.Unmarshal(raw, &ds); err != nil {
		return fmt.Errorf("locale drafts: %w", err)
	}
	for _, d := range ds {
		if v.LocaleDrafts == nil {
			v.LocaleDrafts = make(map[string]*Draft, len(ds))
		}
		v.LocaleDrafts[d.Locale] = d
	}
	return nil
}

// draftsOfItems returns the pending drafts of items, keyed by item id.
func draftsOfItems(ctx context.Context, db bun.IDB, itemType string, ids []uuid.UUID, lock bool) (map[uuid.UUID]*Draft, error) {
	out := map[uuid.UUID]*Draft{}
	if len(ids) == 0 {
		return out, nil
	}
	var ds []*Draft
	q := db.NewSelect().Model(&ds).Where("item_type = ? AND item_id IN (?) AND locale = ''", itemType, bun.In(ids))
	if lock {
		q = q.Order("id").For("UPDATE")
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("load drafts of %s: %w", itemType, err)
	}
	for _, d := range ds {
		out[d.ItemID] = d
	}
	return out, nil
}

// Drafts returns the drafts with the given ids of a site.
func Drafts(ctx context.Context, db bun.IDB, siteID uuid.UUID, ids []uuid.UUID, lock bool) ([]*Draft, error) {
	var ds []*Draft
	if len(ids) == 0 {
		return ds, nil
	}
	q := db.NewSelect().Model(&ds).Where("site_id = ? AND id IN (?)", siteID, bun.In(ids))
	if lock {
		q = q.Order("id").For("UPDATE")
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("load drafts: %w", err)
	}
	return ds, nil
}

// FindDraft finds the site's draft id; NotFound("draft") without it.
func FindDraft(ctx context.Context, db bun.IDB, siteID, id uuid.UUID) (*Draft, error) {
	return findDraft(ctx, db, siteID, id, false)
}

// findDraft is FindDraft, FOR UPDATE when lock is set.
func findDraft(ctx context.Context, db bun.IDB, siteID, id uuid.UUID, lock bool) (*Draft, error) {
	ds, err := Drafts(ctx, db, siteID, []uuid.UUID{id}, lock)
	if err != nil {
		return nil, err
	}
	if len(ds) == 0 {
		return nil, models.NotFound("draft")
	}
	return ds[0], nil
}

// --- writes ----------------------------------------------------------------------

// Change is a write to an item: the columns sent (others stay as they are).
type Change map[string]any

// normalise round-trips a value through JSON so that values from requests
// and values from to_jsonb compare equal (numbers become float64, uuids strings).
func normalise(v any) any {
	// The values of rows and requests are mostly JSON's own already: no
	// round trip for them (it was most of a write's comparisons' time). A
	// string comes through unchanged when it is valid UTF-8 (requests'
	// text is cleaned to it, Postgres text is).
	switch x := v.(type) {
	case nil, bool, float64:
		return v
	case string:
		if utf8.ValidString(x) {
			return v
		}
	case int32:
		return float64(x)
	case int:
		return float64(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func same(a, b any) bool { return reflect.DeepEqual(normalise(a), normalise(b)) }

// editable extracts the editable columns of a row: what a shared draft
// holds (shared fields and the base locale's values).
func editable(k *Kind, r Row) Row {
	out := Row{}
	for _, f := range k.Fields {
		out[f.Column] = r[f.Column]
	}
	return out
}

// editableAll is editable with the values of the row's localized fields
// in other locales than the base (flat keys "title@de", docs/locales.md):
// what a create draft holds, which publishes every locale at once.
func editableAll(k *Kind, r Row) Row {
	out := editable(k, r)
	for key, v := range r {
		if isLocaleKey(k, key) {
			out[key] = v
		}
	}
	return out
}

// isLocaleKey tells whether key is a flat key of a localized field of k
// in a locale other than the base ("title@de").
func isLocaleKey(k *Kind, key string) bool {
	c, tag := SplitKey(key)
	if tag == "" {
		return false
	}
	f, ok := k.fieldByColumn(c)
	return ok && f.Localized
}

// changes maps each attribute (or "<relationship>-id") that differs between
// live and drafted to [live, drafted]; a localized field's value in another
// locale than the base is keyed "<attribute>@<tag>" ("title@de").
func changes(k *Kind, live, drafted Row) map[string]any {
	out := map[string]any{}
	for _, f := range k.Fields {
		if same(live[f.Column], drafted[f.Column]) {
			continue
		}
		name := f.Name
		if f.IsRef() {
			name += "-id"
		}
		out[name] = []any{normalise(live[f.Column]), normalise(drafted[f.Column])}
	}
	localeChanges(k, live, drafted, drafted, out)
	localeChanges(k, live, drafted, live, out)
	return out
}

// localeChanges adds to out the changes of the flat locale keys of keys
// (a row whose keys are walked: live's and drafted's together cover a key
// either holds).
func localeChanges(k *Kind, live, drafted, keys Row, out map[string]any) {
	for key := range keys {
		if !isLocaleKey(k, key) {
			continue
		}
		c, tag := SplitKey(key)
		f, _ := k.fieldByColumn(c)
		name := f.Name + "@" + tag
		if _, done := out[name]; done || same(live[key], drafted[key]) {
			continue
		}
		out[name] = []any{normalise(live[key]), normalise(drafted[key])}
	}
}

// splitLocale divides a change into its shared part (bare columns) and
// its part in one other locale than the base (flat keys "title@de", as
// drafts.Locale.Split makes them), with that locale's tag ("" when none).
// A change holds one locale's keys: a request writes in one locale.
func splitLocale(k *Kind, change Change) (shared, local Change, tag string) {
	for key := range change {
		if isLocaleKey(k, key) {
			_, tag = SplitKey(key)
			break
		}
	}
	if tag == "" {
		return change, nil, ""
	}
	shared, local = Change{}, Change{}
	for key, v := range change {
		if isLocaleKey(k, key) {
			local[key] = v
		} else {
			shared[key] = v
		}
	}
	return shared, local, tag
}

// Create inserts a new item (invisible to live reads) with a create draft,
// in one statement: the row as stored (defaults, the path), the draft,
// which holds it, and a page's drafted path come back from it; nothing is
// read again. Not a prepared statement: run as one (a generic plan, see
// models.ScanPrepared) it cost about 20 ms of Postgres per POST in
// bench/http against 2 ms for the text statements it replaces (its plan,
// made once per connection while the seeding filled the tables, did not
// suit them later); sent as text it is planned with the values.
func (e *Engine) Create(ctx context.Context, tx bun.Tx, k *Kind, siteID, userID uuid.UUID, values Change) (*View, error) {
	return e.CreateAs(ctx, tx, k, siteID, userID, uuid.New(), values)
}

// CreateAs is Create with the item's id given: a restore brings a deleted
// record back under its own id (history.go).
func (e *Engine) CreateAs(ctx context.Context, tx bun.Tx, k *Kind, siteID, userID, id uuid.UUID, values Change) (*View, error) {
	now := time.Now().UTC()
	args := make([]any, 0, 5+len(k.Fields))
	args = append(args, id, siteID, now, models.Person(userID), uuid.New())
	for _, f := range k.Fields {
		args = append(args, values[f.Column])
	}
	// The values in other locales than the base (flat keys, a create in
	// a locale: docs/locales.md): the row's translations, and the create
	// draft's changes from nothing.
	tr, trChanges := map[string]any{}, map[string]any{}
	for key, v := range values {
		if isLocaleKey(k, key) && v != nil {
			c, tag := SplitKey(key)
			f, _ := k.fieldByColumn(c)
			tr[key], trChanges[f.Name+"@"+tag] = v, []any{nil, normalise(v)}
		}
	}
	trJSON, err := json.Marshal(tr)
	if err != nil {
		return nil, fmt.Errorf("insert %s: %w", k.Type, err)
	}
	changesJSON, err := json.Marshal(trChanges)
	if err != nil {
		return nil, fmt.Errorf("insert %s: %w", k.Type, err)
	}
	args = append(args, string(trJSON), string(changesJSON))
	var row, draft []byte
	var path *string
	if err := tx.NewRaw(createQueries[k], args...).Scan(ctx, &row, &draft, &path); err != nil {
		if models.IsUniqueViolation(err, k.Table+"_pkey") {
			// Two restores of one deleted record (or of a page and a
			// subpage it brings back) at once: the first to commit wins.
			return nil, AlreadyRestored(k, id)
		}
		return nil, fmt.Errorf("insert %s: %w", k.Type, err)
	}
	v := &View{Kind: k, Draft: new(Draft), DraftedPath: path}
	if v.Row, err = decodeRow(row); err != nil {
		return nil, fmt.Errorf("insert %s: %w", k.Type, err)
	}
	if err := json.Unmarshal(draft, v.Draft); err != nil { // its json tags are the columns
		return nil, fmt.Errorf("insert %s: draft: %w", k.Type, err)
	}
	if err := e.indexLinks(ctx, tx, k, siteID, v.Draft, v.Row); err != nil {
		return nil, err
	}
	return v, nil
}

// AlreadyRestored is the 409 of a restore that brings back under its id a
// record that has a row again: another restore of it committed first.
func AlreadyRestored(k *Kind, id uuid.UUID) error {
	return &models.Error{Kind: models.ErrConflict, Code: "already_restored", Meta: itemMeta(k.Type, id),
		Detail: fmt.Sprintf("The %s has come back already (another restore of it committed first); read its draft.", k.Singular())}
}

// createQueries are Create's statements by kind: ?0 the item's id, ?1 the
// site, ?2 the time, ?3 the user, ?4 the draft's id, then the kind's
// fields in order, then the translations (jsonb: the values in other
// locales than the base, flat keys) and their changes (jsonb). The draft
// holds the editable columns as stored (editableAll) and, as its changes,
// every one that is not null (changes against nothing). A page's statement also answers its drafted path
// (NULL when its drafted parents loop: the answer then derives it).
var createQueries = func() map[*Kind]string {
	out := map[*Kind]string{}
	for _, k := range kinds {
		cols := []string{"id", "site_id", "created_at", "updated_at", "version"}
		marks := []string{"?0", "?1", "?2", "?2", "1"}
		var drafted, changed []string
		param := map[string]string{}
		for i, f := range k.Fields {
			param[f.Column] = fmt.Sprintf("?%d", 5+i)
			cols = append(cols, f.Column)
			marks = append(marks, param[f.Column])
			name := f.Name
			if f.IsRef() {
				name += "-id"
			}
			drafted = append(drafted, fmt.Sprintf("'%s', i.%s", f.Column, f.Column))
			changed = append(changed, fmt.Sprintf("'%s', CASE WHEN i.%s IS NULL THEN NULL ELSE jsonb_build_array(NULL, i.%s) END", name, f.Column, f.Column))
		}
		tr := fmt.Sprintf("?%d", 5+len(k.Fields))
		trChanges := fmt.Sprintf("?%d", 6+len(k.Fields))
		cols, marks = append(cols, "translations"), append(marks, tr+"::jsonb")
		path, walk := "NULL::text", ""
		if k == Pages {
			// The stored path as refreshPaths derives it (a new page has
			// no children to carry along): the parent's stored path and
			// the slug.
			cols = append(cols, "path")
			marks = append(marks, fmt.Sprintf(`(SELECT CASE WHEN pp.id IS NULL THEN '/' || %[1]s::text ELSE rtrim(pp.path, '/') || '/' || %[1]s::text END
        FROM (SELECT 1) AS one LEFT JOIN pages pp ON pp.id = %[2]s::uuid AND pp.site_id = ?1)`, param["slug"], param["parent_id"]))
			// The drafted path, as DraftedPaths walks it, from the new
			// page's parent up (the answer renders it).
			walk = fmt.Sprintf(`, up (cur, path, depth) AS (
    SELECT %[2]s::uuid, CASE WHEN %[1]s::text = '' THEN '' ELSE '/' || %[1]s::text END, 1
  UNION ALL
    SELECT CASE WHEN pd.id IS NULL THEN p.parent_id ELSE (pd.drafted ->> 'parent_id')::uuid END,
           CASE WHEN coalesce(pd.drafted ->> 'slug', p.slug) = '' THEN '' ELSE '/' || coalesce(pd.drafted ->> 'slug', p.slug) END || up.path,
           up.depth + 1
    FROM up JOIN pages p ON p.id = up.cur AND p.site_id = ?1
    LEFT JOIN drafts pd ON pd.item_type = 'pages' AND pd.item_id = p.id AND pd.locale = ''
    WHERE up.depth < 64
)`, param["slug"], param["parent_id"])
			path = "(SELECT coalesce(nullif(path, ''), '/') FROM up WHERE cur IS NULL LIMIT 1)"
		}
		// Table and column names are the kinds' own, never input.
		out[k] = `WITH RECURSIVE i AS (
    INSERT INTO ` + k.Table + ` (` + strings.Join(cols, ", ") + `) VALUES (` + strings.Join(marks, ", ") + `)
    RETURNING *
), d AS (
    INSERT INTO drafts (id, site_id, item_type, item_id, event, drafted, object_changes, user_id, revision_id, created_at, updated_at, version)
    SELECT ?4::uuid, i.site_id, '` + k.Type + `', i.id, 'create', jsonb_build_object(` + strings.Join(drafted, ", ") + `) || i.translations,
        jsonb_strip_nulls(jsonb_build_object(` + strings.Join(changed, ", ") + `)) || ` + trChanges + `::jsonb, ?3::uuid, NULL, ?2::timestamptz, ?2::timestamptz, 1
    FROM i
    RETURNING drafts.*
)` + walk + `
SELECT (SELECT to_jsonb(i) FROM i), (SELECT to_jsonb(d) FROM d), ` + path
	}
	return out
}()

// checkNoDraftAppeared is ErrRetry when the item has a draft now although
// the locking read found none: a writer that held the row lock before us
// drafted the item meanwhile (a new statement sees what committed), and we
// would insert a second draft. Locking that draft now would take the locks
// in the wrong order (drafts before items, as everywhere): the caller runs
// the transaction again.
func checkNoDraftAppeared(ctx context.Context, tx bun.IDB, k *Kind, id uuid.UUID) error {
	again, err := draftsOfItems(ctx, tx, k.Type, []uuid.UUID{id}, false)
	if err != nil {
		return err
	}
	if again[id] != nil {
		return ErrRetry
	}
	return nil
}

// LockForWrite locks an item's draft, then the item, for a write, and loads
// both, in one statement. Lock order everywhere is drafts before rows
// (publishing and reverting start from drafts), so a write racing a publish
// waits instead of deadlocking: the draft is locked by a CTE the row's
// locking scan depends on, so it is locked first. For a page it also derives
// the drafted path (View.DraftedPath), walking the drafted parents up in the
// same statement. The row lock is FOR NO KEY UPDATE, what an UPDATE of the
// row takes: it excludes every other writer, and inserting a child (a key
// share lock by the foreign key) need not wait for it.
//
// A draft that committed while this statement waited for the row is not
// seen (the statement's snapshot predates it): Update then inserts a draft
// that violates the one-draft-per-item index, which is ErrRetry.
func (e *Engine) LockForWrite(ctx context.Context, tx bun.IDB, k *Kind, siteID, id uuid.UUID) (*View, error) {
	var row, draft, localeDrafts []byte
	var path *string
	// A prepared statement per kind (models.ScanPrepared): parsing and
	// planning this text was a quarter of a write's Postgres time.
	args := []any{k.Type, models.UUIDParam(siteID), models.UUIDParam(id)}
	several := severalLocales(ctx)
	dest := []any{&row, &draft, &path}
	if several {
		dest = append(dest, &localeDrafts)
	}
	if err := models.ScanPrepared(ctx, tx, lockQuery(k, several), args, dest...); err != nil {
		return nil, fmt.Errorf("lock %s: %w", k.Type, err)
	}
	if len(row) == 0 || string(row) == "null" {
		return nil, models.NotFound(k.Singular())
	}
	v := &View{Kind: k, DraftedPath: path}
	var err error
	if v.Row, err = decodeRow(row); err != nil {
		return nil, fmt.Errorf("lock %s: %w", k.Type, err)
	}
	if len(draft) > 0 && string(draft) != "null" {
		v.Draft = new(Draft) // its json tags are the columns, as to_jsonb writes them
		if err := json.Unmarshal(draft, v.Draft); err != nil {
			return nil, fmt.Errorf("lock %s: draft: %w", k.Type, err)
		}
	}
	if err := v.setLocaleDrafts(localeDrafts); err != nil {
		return nil, fmt.Errorf("lock %s: %w", k.Type, err)
	}
	return v, nil
}

// draftedPathWalk is the recursive CTE up (cur, path, depth) that walks a
// page's drafted ancestors, one lookup by key per level, from the page
// row (alias row) and its draft (alias d) up to a root; from is the first
// step's FROM clause ("" where the CTE is correlated to an outer row) and
// site the site's parameter. The reads (readQuery) and the writes'
// lock-and-load (lockQuery) share it, so both derive the same path; a walk
// deeper than 64 levels (a drafted loop) finds no root and no path.
func draftedPathWalk(row, from, site string) string {
	return draftedPathWalkIn(row, from, site, "")
}

// draftedPathWalkIn is draftedPathWalk with the ancestors' drafts limited
// by the condition on pd (a release's preview: its set's drafts only).
func draftedPathWalkIn(row, from, site, pdCond string) string {
	return `up (cur, path, depth) AS (
    SELECT CASE WHEN d.id IS NULL THEN ` + row + `.parent_id ELSE (d.drafted ->> 'parent_id')::uuid END,
           CASE WHEN coalesce(d.drafted ->> 'slug', ` + row + `.slug) = '' THEN '' ELSE '/' || coalesce(d.drafted ->> 'slug', ` + row + `.slug) END,
           1` + from + `
  UNION ALL
    SELECT CASE WHEN pd.id IS NULL THEN p.parent_id ELSE (pd.drafted ->> 'parent_id')::uuid END,
           CASE WHEN coalesce(pd.drafted ->> 'slug', p.slug) = '' THEN '' ELSE '/' || coalesce(pd.drafted ->> 'slug', p.slug) END || up.path,
           up.depth + 1
    FROM up JOIN pages p ON p.id = up.cur AND p.site_id = ` + site + `
    LEFT JOIN drafts pd ON pd.item_type = 'pages' AND pd.item_id = p.id AND pd.locale = ''` + pdCond + `
    WHERE up.depth < 64
)`
}

// draftedPathOf selects the path draftedPathWalk found: the one ending at a root.
const draftedPathOf = "coalesce(nullif(path, ''), '/') FROM up WHERE cur IS NULL LIMIT 1"

// lockQuery is LockForWrite's statement for kind k: $1 the kind's type, $2
// the site, $3 the item. Its text depends only on k and several, so it is
// prepared once per connection and kind. several (a site with more than
// one locale) locks the item's locale drafts too, after its shared draft
// and before its row, in locale order (the order publish and revert
// take), and answers them as a fourth column.
func lockQuery(k *Kind, several bool) string {
	path := "NULL::text"
	walk := ""
	if k == Pages {
		// As readQuery and DraftedPaths, from the locked row and draft.
		walk = `, ` + draftedPathWalk("r", "\n    FROM r LEFT JOIN d ON true", "$2")
		path = "(SELECT " + draftedPathOf + ")"
	}
	locales, waits, answer := "", "", ""
	if several {
		locales = `, ld AS MATERIALIZED (
    SELECT * FROM drafts WHERE item_type = $1 AND item_id = $3 AND locale <> '' AND (SELECT count(*) FROM d) >= 0 ORDER BY locale FOR UPDATE
)`
		waits = " AND (SELECT count(*) FROM ld) >= 0"
		answer = ", (SELECT jsonb_agg(to_jsonb(ld) ORDER BY ld.locale) FROM ld)"
	}
	// k.Table is one of the kinds' fixed table names, never input.
	return `WITH RECURSIVE d AS MATERIALIZED (
    SELECT * FROM drafts WHERE item_type = $1 AND item_id = $3 AND locale = '' FOR UPDATE
)` + locales + `, r AS MATERIALIZED (
    SELECT * FROM ` + k.Table + ` t WHERE t.site_id = $2 AND t.id = $3 AND (SELECT count(*) FROM d) >= 0` + waits + ` FOR NO KEY UPDATE
)` + walk + `
SELECT (SELECT to_jsonb(r) FROM r), (SELECT to_jsonb(d) FROM d), ` + path + answer
}

// writable judges the preconditions every write of cur shares: its draft
// is not held by a revision being published, and the row is at the
// version the caller expects (nil: any).
func writable(cur *View, expect *int) error {
	if cur.Draft != nil && cur.Draft.RevisionID != nil {
		return ErrInFlight
	}
	if expect != nil && *expect != cur.Row.Version() {
		return ErrStale
	}
	return nil
}

// saveDraft inserts or updates draft d and moves its item's row version on,
// in one prepared statement (models.ScanPrepared says why) whose text
// depends only on the kind.
func saveDraft(ctx context.Context, tx bun.IDB, k *Kind, d *Draft) error {
	return saveDraftBump(ctx, tx, k, d, true)
}

// saveDraftBump is saveDraft; without bump the row's version stays (a
// write whose shared draft moved it on already).
func saveDraftBump(ctx context.Context, tx bun.IDB, k *Kind, d *Draft, bump bool) error {
	drafted, err := json.Marshal(d.Drafted)
	if err != nil {
		return fmt.Errorf("save draft: %w", err)
	}
	changed, err := json.Marshal(d.ObjectChanges)
	if err != nil {
		return fmt.Errorf("save draft: %w", err)
	}
	// k.Table is one of the kinds' fixed table names, never input.
	with := `WITH bump AS (UPDATE ` + k.Table + ` SET version = version + 1 WHERE id = $4)
`
	if !bump {
		with = ""
	}
	_, err = models.ExecPrepared(ctx, tx, with+`INSERT INTO drafts (id, site_id, item_type, item_id, event, drafted, object_changes, user_id, revision_id, created_at, updated_at, version, locale)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
ON CONFLICT (id) DO UPDATE SET drafted = EXCLUDED.drafted, object_changes = EXCLUDED.object_changes,
    updated_at = EXCLUDED.updated_at, user_id = EXCLUDED.user_id, version = EXCLUDED.version`,
		models.UUIDParam(d.ID), models.UUIDParam(d.SiteID), d.ItemType, models.UUIDParam(d.ItemID), d.Event,
		string(drafted), string(changed), models.NullUUIDParam(d.UserID), models.NullUUIDParam(d.RevisionID),
		d.CreatedAt, d.UpdatedAt, d.Version, d.Locale)
	return err
}

// Update drafts a change to an item, cur, which LockForWrite locked and
// loaded in this transaction. The live row keeps its values (but its
// version moves on); for an item that was never published the row itself
// changes and the draft stays a create. Editing values back to live drops
// them; an update draft with nothing left is deleted.
//
// A change in another locale than the base (flat keys "title@de", as
// Locale.Split makes them) to a live item goes to that locale's draft,
// its shared attributes to the shared draft (docs/locales.md); to an item
// never published, into the row's translations and the create draft. A
// null there clears the locale's value (a read falls back).
func (e *Engine) Update(ctx context.Context, tx bun.Tx, cur *View, siteID, userID uuid.UUID, change Change, expect *int) (*View, error) {
	k, row, d := cur.Kind, cur.Row, cur.Draft
	shared, local, tag := splitLocale(k, change)
	// Drafts held by a scheduled revision stay editable (heldEditable);
	// every other precondition is writable's.
	if err := heldEditable(ctx, tx, d); err != nil {
		return nil, err
	}
	if tag != "" {
		if err := heldEditable(ctx, tx, cur.LocaleDrafts[tag]); err != nil {
			return nil, err
		}
	}
	if expect != nil && *expect != row.Version() {
		return nil, ErrStale
	}
	if d != nil && d.Event == EventDelete {
		return nil, ErrDeleted
	}
	_, moved := shared["slug"]
	if _, ok := shared["parent_id"]; ok {
		moved = true
	}
	moved = moved && k == Pages
	now := time.Now().UTC()
	if d != nil && d.Event == EventCreate {
		return e.updateUnpublished(ctx, tx, cur, siteID, userID, change, moved, now)
	}
	if tag == "" {
		v, err := e.updateLive(ctx, tx, cur, siteID, userID, shared, moved, now)
		if v != nil {
			v.LocaleDrafts = cur.LocaleDrafts
		}
		return v, err
	}
	v := cur
	if len(shared) > 0 {
		var err error
		if v, err = e.updateLive(ctx, tx, cur, siteID, userID, shared, moved, now); err != nil {
			return nil, err
		}
		v.LocaleDrafts = cur.LocaleDrafts
	}
	return e.updateLiveLocale(ctx, tx, v, siteID, userID, tag, local, len(shared) == 0, now)
}

// updateLiveLocale is Update of a published item's values in locale tag
// (change: flat keys "title@tag"): they are merged into the item's draft
// of that locale, which holds the locale's whole drafted state (every
// localized field's key, null where the locale has no value), made if
// there is none and deleted when nothing differs from live any more.
// bump moves the row's version on (unless the shared part of the write
// did already). cur is the item as the write has it so far.
func (e *Engine) updateLiveLocale(ctx context.Context, tx bun.Tx, cur *View, siteID, userID uuid.UUID, tag string, change Change, bump bool, now time.Time) (*View, error) {
	k, row, id := cur.Kind, cur.Row, cur.Row.ID()
	d := cur.LocaleDrafts[tag]
	live, drafted := Row{}, Row{}
	for _, key := range (Locale{}).Keys(k, tag) {
		live[key], drafted[key] = normalise(row[key]), normalise(row[key])
	}
	if d != nil {
		for key, v := range d.Drafted {
			drafted[key] = v
		}
	}
	for key, v := range change {
		drafted[key] = normalise(v)
	}
	oc := changes(k, live, drafted)
	out := &View{Kind: k, Row: maps.Clone(row), Draft: cur.Draft, DraftedPath: cur.DraftedPath, LocaleDrafts: maps.Clone(cur.LocaleDrafts)}
	if bump {
		out.Row["version"] = float64(row.Version() + 1)
	}
	if len(oc) == 0 {
		if bump {
			if _, err := tx.NewUpdate().TableExpr(k.Table).Where("id = ?", id).Set("version = version + 1").Exec(ctx); err != nil {
				return nil, err
			}
		}
		if d != nil {
			if _, err := tx.NewDelete().Model(d).WherePK().Exec(ctx); err != nil {
				return nil, err
			}
			delete(out.LocaleDrafts, tag)
		}
		return out, nil
	}
	insert := d == nil
	if insert {
		d = &Draft{ID: uuid.New(), SiteID: siteID, ItemType: k.Type, ItemID: id, Event: EventUpdate, Locale: tag, CreatedAt: now}
	} else {
		loaded := d
		d = new(Draft) // a copy: cur's map may be the caller's
		*d = *loaded
	}
	d.Drafted, d.ObjectChanges, d.UpdatedAt, d.UserID = drafted, oc, now, models.Person(userID)
	d.Version++
	if err := saveDraftBump(ctx, tx, k, d, bump); err != nil {
		if insert && models.IsUniqueViolation(err, onePendingDraftPerItem) {
			return nil, ErrRetry // see LockForWrite
		}
		return nil, fmt.Errorf("save draft: %w", err)
	}
	if out.LocaleDrafts == nil {
		out.LocaleDrafts = map[string]*Draft{}
	}
	out.LocaleDrafts[tag] = d
	return out, nil
}

// updateUnpublished is Update of an item that was never published (its
// draft is a create): the row itself takes the change (a value in another
// locale than the base into its translations, a null removing it), and
// the draft is rewritten to hold the row's new values. moved says a page's
// slug or parent changed, so its subtree's paths are recomputed.
func (e *Engine) updateUnpublished(ctx context.Context, tx bun.Tx, cur *View, siteID, userID uuid.UUID, change Change, moved bool, now time.Time) (*View, error) {
	k, d, id := cur.Kind, cur.Draft, cur.Row.ID()
	q := tx.NewUpdate().TableExpr(k.Table+" AS t").Where("t.id = ?", id).Set("updated_at = ?, version = version + 1", now)
	set, unset := map[string]any{}, []string{}
	for col, v := range change {
		switch {
		case !isLocaleKey(k, col):
			q = q.Set("? = ?", bun.Ident(col), v)
		case v == nil:
			unset = append(unset, col)
		default:
			set[col] = v
		}
	}
	if len(set) > 0 || len(unset) > 0 {
		payload, err := json.Marshal(set)
		if err != nil {
			return nil, fmt.Errorf("update %s: %w", k.Type, err)
		}
		q = q.Set("translations = (t.translations - ?::text[]) || ?::jsonb", pgdialect.Array(unset), string(payload))
	}
	var after Row
	if moved {
		if _, err := q.Exec(ctx); err != nil {
			return nil, fmt.Errorf("update %s: %w", k.Type, err)
		}
		if err := e.refreshPaths(ctx, tx, siteID, []uuid.UUID{id}); err != nil {
			return nil, err
		}
		rows, err := loadRows(ctx, tx, k, siteID, []uuid.UUID{id}, false)
		if err != nil {
			return nil, err
		}
		after = rows[id]
	} else {
		var raw string
		if err := q.Returning("to_jsonb(t)").Scan(ctx, &raw); err != nil {
			return nil, fmt.Errorf("update %s: %w", k.Type, err)
		}
		var err error
		if after, err = decodeRow([]byte(raw)); err != nil {
			return nil, fmt.Errorf("update %s: %w", k.Type, err)
		}
	}
	all := editableAll(k, after)
	d.Drafted, d.ObjectChanges, d.UpdatedAt, d.UserID = all, changes(k, Row{}, all), now, models.Person(userID)
	d.Version++
	if _, err := tx.NewUpdate().Model(d).WherePK().Exec(ctx); err != nil {
		return nil, err
	}
	if err := e.indexLinks(ctx, tx, k, siteID, d, after); err != nil {
		return nil, err
	}
	v := &View{Kind: k, Row: after, Draft: d}
	if !moved {
		v.DraftedPath = cur.DraftedPath
	}
	return v, nil
}

// updateLive is Update of a published item: the live row keeps its values
// and only its version moves on, while the change is merged into the
// item's update draft (made if there is none). A draft left with no
// changes against live is deleted.
func (e *Engine) updateLive(ctx context.Context, tx bun.Tx, cur *View, siteID, userID uuid.UUID, change Change, moved bool, now time.Time) (*View, error) {
	k, row, d, id := cur.Kind, cur.Row, cur.Draft, cur.Row.ID()
	drafted := editable(k, row)
	if d != nil {
		for col, v := range d.Drafted {
			drafted[col] = v
		}
	}
	for col, v := range change {
		drafted[col] = normalise(v)
	}
	oc := changes(k, editable(k, row), drafted)
	bump := tx.NewUpdate().TableExpr(k.Table).Where("id = ?", id).Set("version = version + 1")
	row["version"] = float64(row.Version() + 1)
	if len(oc) == 0 {
		if d == nil {
			// Nothing to insert that would collide with a draft another
			// writer committed while we waited: look for one.
			if err := checkNoDraftAppeared(ctx, tx, k, id); err != nil {
				return nil, err
			}
		}
		if _, err := bump.Exec(ctx); err != nil {
			return nil, err
		}
		if d != nil {
			if _, err := tx.NewDelete().Model(d).WherePK().Exec(ctx); err != nil {
				return nil, err
			}
		}
		return &View{Kind: k, Row: row}, nil
	}
	insert := d == nil
	if insert {
		d = &Draft{ID: uuid.New(), SiteID: siteID, ItemType: k.Type, ItemID: id, Event: EventUpdate, CreatedAt: now, Version: 0}
	}
	d.Drafted, d.ObjectChanges, d.UpdatedAt, d.UserID = drafted, oc, now, models.Person(userID)
	d.Version++
	// One statement: the row's version and the draft.
	if err := saveDraft(ctx, tx, k, d); err != nil {
		if insert && models.IsUniqueViolation(err, onePendingDraftPerItem) {
			return nil, ErrRetry // see LockForWrite
		}
		return nil, fmt.Errorf("save draft: %w", err)
	}
	v := &View{Kind: k, Row: row, Draft: d}
	if !moved {
		v.DraftedPath = cur.DraftedPath
	}
	if err := e.indexLinks(ctx, tx, k, siteID, d, v.Drafted()); err != nil {
		return nil, err
	}
	return v, nil
}

// refreshPaths recomputes the paths of the pages in roots and their
// descendants from parents and slugs, in one statement (a root page with an
// empty slug, the home page, is "/"). Only those subtrees can have moved.
func (e *Engine) refreshPaths(ctx context.Context, tx bun.IDB, siteID uuid.UUID, roots []uuid.UUID) error {
	if len(roots) == 0 {
		return nil
	}
	_, err := tx.NewRaw(`
WITH RECURSIVE tree (id, path, depth) AS (
    SELECT p.id, CASE WHEN pp.id IS NULL THEN '/' || p.slug ELSE rtrim(pp.path, '/') || '/' || p.slug END, 1
    FROM pages p LEFT JOIN pages pp ON pp.id = p.parent_id
    WHERE p.site_id = ?0 AND p.id IN (?1)
  UNION ALL
    SELECT c.id, rtrim(t.path, '/') || '/' || c.slug, t.depth + 1
    FROM pages c JOIN tree t ON c.parent_id = t.id
    WHERE c.site_id = ?0 AND t.depth < 64
),
-- A root under another root is reached twice: the longer walk starts from
-- the topmost moved ancestor and is the right one.
best AS (SELECT DISTINCT ON (id) id, path FROM tree ORDER BY id, depth DESC)
UPDATE pages SET path = best.path FROM best WHERE pages.id = best.id AND pages.path IS DISTINCT FROM best.path`, siteID, bun.In(roots)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("derive page paths: %w", err)
	}
	return nil
}

// DraftedPaths returns the paths pages would have under drafted parents
// and slugs, for a batch of pages in one statement (not a walk per page and
// ancestor). It is the reads' walk (draftedPathWalk, correlated to each
// row, as readQuery runs it), so lists, single reads and writes derive one
// path the same way. A page whose drafted parents loop (validation refuses
// that, but older data could hold it) is left out: it keeps its stored path.
func (e *Engine) DraftedPaths(ctx context.Context, db bun.IDB, siteID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]string, error) {
	out := make(map[uuid.UUID]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	// Plain text, not prepared: lists with include=draft and writes run it
	// with batches of any length, and a generic plan made on near-empty
	// tables (models/prepared.go) cost 3 ms here.
	query, args := `SELECT p.id, (WITH RECURSIVE `+draftedPathWalk("p", "", "?0")+` SELECT `+draftedPathOf+`)
FROM pages p LEFT JOIN drafts d ON d.item_type = 'pages' AND d.item_id = p.id AND d.locale = ''
WHERE p.site_id = ?0 AND p.id IN (?1)`, []any{siteID, bun.In(ids)}
	if p := previewOf(ctx); p != nil {
		// A release's preview: only the set's drafts move pages.
		query, args = `SELECT p.id, (WITH RECURSIVE `+draftedPathWalkIn("p", "", "?0", " AND "+inSet("pd", "?2", "?3"))+` SELECT `+draftedPathOf+`)
FROM pages p LEFT JOIN drafts d ON d.item_type = 'pages' AND d.item_id = p.id AND d.locale = '' AND `+inSet("d", "?2", "?3")+`
WHERE p.site_id = ?0 AND p.id IN (?1)`, append(args, p.setArgs()...)
	}
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("drafted page paths: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id uuid.UUID
		var path *string // nil: the drafted parents loop
		if err := rows.Scan(&id, &path); err != nil {
			return nil, fmt.Errorf("drafted page paths: %w", err)
		}
		if path != nil {
			out[id] = *path
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("drafted page paths: %w", err)
	}
	return out, nil
}

// FillDraftedPaths sets the drafted path of every page view that has none:
// a page under no drafted parent has its drafted slug as its path; the
// others are derived by DraftedPaths in one statement for all of them, so
// a list or a write answers without a query per page and ancestor.
func (e *Engine) FillDraftedPaths(ctx context.Context, db bun.IDB, siteID uuid.UUID, views ...*View) error {
	var nested []uuid.UUID
	byID := map[uuid.UUID]*View{}
	for _, v := range views {
		if v.Kind != Pages || v.DraftedPath != nil {
			continue
		}
		drafted := v.Drafted()
		if parent, _ := drafted["parent_id"].(string); parent != "" {
			id := v.Row.ID()
			nested = append(nested, id)
			byID[id] = v
			continue
		}
		slug, _ := drafted["slug"].(string)
		path := "/" + slug
		v.DraftedPath = &path
	}
	if len(nested) == 0 {
		return nil
	}
	paths, err := e.DraftedPaths(ctx, db, siteID, nested)
	if err != nil {
		return fmt.Errorf("drafted paths: %w", err)
	}
	for id, path := range paths {
		byID[id].DraftedPath = &path
	}
	return nil
}

// IsAncestor tells whether page is candidate or one of candidate's
// ancestors in any tree the pending drafts could produce: a revision may
// publish any subset of them, so each page's stored parent and drafted
// parent are both followed (a walk over the union of both edges), in one
// recursive statement. UNION drops pages already reached, so a loop in
// older data ends the walk; a walk of more than 10,000 pages counts as a
// loop.
func (e *Engine) IsAncestor(ctx context.Context, db bun.IDB, siteID, page, candidate uuid.UUID) (bool, error) {
	var found bool
	err := db.NewRaw(`
WITH RECURSIVE up (id) AS (
    SELECT ?1::uuid
  UNION
    SELECT x.parent
    FROM up JOIN pages p ON p.id = up.id AND p.site_id = ?0
    LEFT JOIN drafts d ON d.item_type = 'pages' AND d.item_id = p.id AND d.locale = ''
    CROSS JOIN LATERAL (VALUES (p.parent_id), ((d.drafted ->> 'parent_id')::uuid)) AS x (parent)
    WHERE x.parent IS NOT NULL
)
SELECT count(*) FILTER (WHERE id = ?2) > 0 OR count(*) > 10000 FROM (SELECT id FROM up LIMIT 10001) AS walked`,
		siteID, candidate, page).Scan(ctx, &found)
	if err != nil {
		return false, fmt.Errorf("walk page parents: %w", err)
	}
	return found, nil
}

// DraftsOfItems returns the pending drafts of items, keyed by item id.
func DraftsOfItems(ctx context.Context, db bun.IDB, itemType string, ids []uuid.UUID) (map[uuid.UUID]*Draft, error) {
	return draftsOfItems(ctx, db, itemType, ids, false)
}
