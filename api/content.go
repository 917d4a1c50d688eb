package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/coalesce"
	"github.com/pressroom/pressroom/models/drafts"
)

// contentHandler serves one draftable kind (pages, contents or
// content-blocks): every write is saved as a draft (DESIGN.md §4).
type contentHandler struct {
	db     *bun.DB
	engine *drafts.Engine
	kind   *drafts.Kind
	links  links
	// Per-kind rules: defaults for a create, and checks of a drafted state.
	defaults map[string]any
	// validate runs inside the write's transaction and queries through db (that
	// transaction), never the pool: a transaction waiting on a second
	// connection can starve the pool for good.
	// prev is the drafted state before an update (nil for a create): a
	// reference that did not change need not be checked again.
	validate func(ctx context.Context, db bun.IDB, h contentHandler, siteID uuid.UUID, id *uuid.UUID, state, prev drafts.Row) error
	filters  map[string]string
	sorts    map[string]string
	// related are the read-only to-many relationships other records make
	// up (content_related.go).
	related []relatedMany
	// loads batches the reads of GET /<kind>/:id: concurrent requests for
	// different records of a site share one query (package coalesce).
	loads *coalesce.Batcher[uuid.UUID, *drafts.View]
}

// withLoads gives h its batched reader.
func (h contentHandler) withLoads() contentHandler {
	h.loads = &coalesce.Batcher[uuid.UUID, *drafts.View]{Fetch: func(ctx context.Context, scope string, ids []uuid.UUID) (map[uuid.UUID]*drafts.View, error) {
		site, withDraft, _ := strings.Cut(scope, " ")
		siteID, err := uuid.Parse(site)
		if err != nil {
			return nil, fmt.Errorf("batched load: bad scope %q: %w", scope, err)
		}
		return h.engine.LoadMany(ctx, h.db, h.kind, siteID, ids, withDraft == "draft")
	}}
	return h
}

// loadScope names the batch a read joins: one site, live or drafted.
func loadScope(siteID uuid.UUID, withDraft bool) string {
	if withDraft {
		return siteID.String() + " draft"
	}
	return siteID.String() + " live"
}

// roAttributes are set by the server; sending one is 422.
var roAttributes = map[string]bool{"path": true, "published-at": true, "trashed-at": true, "created-at": true, "updated-at": true}

// formatTime turns a to_jsonb timestamp into the spec's format.
func formatTime(v any) any {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return timestamp(t)
}

func (h contentHandler) path(id string) string { return "/" + h.kind.Type + "/" + id }

// draftedPaths derives the drafted paths of pages in one query (nil for
// other kinds), so a list renders without a query per page and ancestor.
func (h contentHandler) draftedPaths(ctx context.Context, siteID uuid.UUID, views ...*drafts.View) (map[uuid.UUID]string, error) {
	if h.kind != drafts.Pages {
		return nil, nil
	}
	// A page with no drafted parent needs no query: its path is its slug;
	// nor one whose load derived it (a write's, drafts.LockForWrite).
	out := map[uuid.UUID]string{}
	var nested []uuid.UUID
	for _, v := range views {
		if v.DraftedPath != nil {
			out[v.Row.ID()] = *v.DraftedPath
			continue
		}
		d := v.Drafted()
		if p, _ := d["parent_id"].(string); p != "" {
			nested = append(nested, v.Row.ID())
			continue
		}
		out[v.Row.ID()] = "/" + str(d["slug"])
	}
	if len(nested) == 0 {
		return out, nil
	}
	deep, err := h.engine.DraftedPaths(ctx, h.db, siteID, nested)
	for id, p := range deep {
		out[id] = p
	}
	return out, err
}

// resource renders a view: the live row, or with drafted the draft's state
// (paths, from draftedPaths, gives drafted pages their paths).
func (h contentHandler) resource(v *drafts.View, drafted bool, paths map[uuid.UUID]string) *jsonapi.Resource {
	row := v.Row
	if drafted {
		row = v.Drafted()
	}
	id := row.ID().String()
	attrs := map[string]any{}
	rels := map[string]*jsonapi.Relationship{}
	for _, f := range h.kind.Fields {
		if f.IsRef() {
			var ref *string
			if s, ok := row[f.Column].(string); ok && s != "" {
				ref = &s
			}
			rels[f.Name] = h.links.relationship(h.path(id), f.Name, jsonapi.ToOne(f.RefType, ref))
			continue
		}
		attrs[f.Name] = row[f.Column]
	}
	if h.kind == drafts.Pages {
		attrs["path"] = row["path"]
		if p, ok := paths[v.Row.ID()]; drafted && ok {
			// Drafted slugs or parents anywhere up the tree move the path.
			attrs["path"] = p
		}
	}
	for _, ts := range []string{"published_at", "trashed_at", "created_at", "updated_at"} {
		attrs[strings.ReplaceAll(ts, "_", "-")] = formatTime(row[ts])
	}
	var draftID *string
	if v.Draft != nil {
		s := v.Draft.ID.String()
		draftID = &s
	}
	rels["draft"] = h.links.relationship(h.path(id), "draft", jsonapi.ToOne("drafts", draftID))
	for _, r := range h.related {
		rels[r.name] = h.links.relationship(h.path(id), r.name, nil) // linkage only when included
	}
	f, _ := v.Row["version"].(float64)
	return versioned(&jsonapi.Resource{Type: h.kind.Type, ID: id, Attributes: attrs, Relationships: rels, Links: h.links.self(h.path(id))}, int(f))
}

func (h contentHandler) spec(collection bool) QuerySpec {
	s := QuerySpec{Includes: []string{"draft"}, Fields: []string{h.kind.Type, "drafts"}}
	for _, r := range h.related {
		s.Includes, s.Fields = append(s.Includes, r.name), append(s.Fields, r.typ)
	}
	if collection {
		s.Collection, s.Filters, s.Sorts, s.DefaultSort = true, h.filters, h.sorts, "created_at, id"
	}
	return s
}

// list serves GET /<kind>: live records, or with include=draft every record
// as drafted (unpublished creates included).
func (h contentHandler) list(c *fiber.Ctx) error {
	q, err := parseQuery(c, h.spec(true))
	if err != nil {
		return err
	}
	siteID := oauth.PrincipalOf(c).SiteID
	withDraft := q.Include["draft"]
	var raws []json.RawMessage
	sel := h.db.NewSelect().TableExpr(h.kind.Table+" AS t").ColumnExpr("to_jsonb(t)").Where("t.site_id = ?", siteID)
	if !withDraft {
		sel = sel.Where("t.published_at IS NOT NULL")
	}
	total, err := q.Apply(sel).ScanAndCount(c.UserContext(), &raws)
	if err != nil {
		return err
	}
	views := make([]*drafts.View, len(raws))
	ids := make([]uuid.UUID, len(raws))
	for i, raw := range raws {
		var r drafts.Row
		if err := json.Unmarshal(raw, &r); err != nil {
			return err
		}
		views[i], ids[i] = &drafts.View{Kind: h.kind, Row: r}, r.ID()
	}
	included := []*jsonapi.Resource{}
	if withDraft {
		ds, err := drafts.DraftsOfItems(c.UserContext(), h.db, h.kind.Type, ids)
		if err != nil {
			return err
		}
		for _, v := range views {
			if v.Draft = ds[v.Row.ID()]; v.Draft != nil {
				included = append(included, q.Sparse(draftResource(h.links, v.Draft)))
			}
		}
	}
	var paths map[uuid.UUID]string
	if withDraft {
		if paths, err = h.draftedPaths(c.UserContext(), siteID, views...); err != nil {
			return err
		}
	}
	data := make([]*jsonapi.Resource, len(views))
	for i, v := range views {
		data[i] = h.resource(v, withDraft, paths)
	}
	more, err := h.includeRelated(c.UserContext(), q, siteID, views, data, withDraft)
	if err != nil {
		return err
	}
	included = append(included, more...)
	data = sparseAll(q, data)
	doc := jsonapi.Document{Data: data, Links: h.links.collection("/"+h.kind.Type, q, total), Meta: map[string]any{"total": total}}
	if len(q.Include) > 0 {
		doc.Included = included
	}
	return respondIncluded(c, fiber.StatusOK, doc, len(q.Include) > 0)
}

// target reads what every /<kind>/:id route starts with: the query and the id.
func (h contentHandler) target(c *fiber.Ctx) (*Query, uuid.UUID, error) {
	q, err := parseQuery(c, h.spec(false))
	if err != nil {
		return nil, uuid.Nil, err
	}
	id, err := idParam(c, strings.TrimSuffix(h.kind.Type, "s"))
	return q, id, err
}

// get serves GET /<kind>/:id (with include=draft, the drafted view).
func (h contentHandler) get(c *fiber.Ctx) error {
	q, id, err := h.target(c)
	if err != nil {
		return err
	}
	siteID := oauth.PrincipalOf(c).SiteID
	v, err := h.loads.Get(c.UserContext(), loadScope(siteID, q.Include["draft"]), id)
	if err != nil {
		return err
	}
	if v == nil {
		return h.mapError(drafts.ErrNotFound)
	}
	return h.respondView(c, fiber.StatusOK, q, siteID, v, q.Include["draft"])
}

func (h contentHandler) respondView(c *fiber.Ctx, status int, q *Query, siteID uuid.UUID, v *drafts.View, drafted bool) error {
	var paths map[uuid.UUID]string
	if drafted {
		var err error
		if paths, err = h.draftedPaths(c.UserContext(), siteID, v); err != nil {
			return err
		}
	}
	r := h.resource(v, drafted, paths)
	more, err := h.includeRelated(c.UserContext(), q, siteID, []*drafts.View{v}, []*jsonapi.Resource{r}, drafted)
	if err != nil {
		return err
	}
	doc := jsonapi.Document{Data: q.Sparse(r), Included: []*jsonapi.Resource{}}
	if q.Include["draft"] && v.Draft != nil {
		doc.Included = append(doc.Included, q.Sparse(draftResource(h.links, v.Draft)))
	}
	doc.Included = append(doc.Included, more...)
	f, _ := v.Row["version"].(float64)
	setETag(c, r.ID, int(f))
	return respondIncluded(c, status, doc, len(q.Include) > 0)
}

// decodeWrite reads a create or update document into column changes.
func (h contentHandler) decodeWrite(c *fiber.Ctx, id string) (drafts.Change, *int, error) {
	var doc jsonapi.RequestDocument[map[string]json.RawMessage]
	if err := jsonapi.Decode(c.Body(), &doc); err != nil {
		return nil, nil, err
	}
	if doc.Data.Type != h.kind.Type {
		return nil, nil, jsonapi.Conflict("type_mismatch", fmt.Sprintf("data.type must be %q.", h.kind.Type)).AtPointer("/data/type")
	}
	if id == "" && doc.Data.ID != "" {
		return nil, nil, jsonapi.NewError(fiber.StatusForbidden, "client_id_unsupported", "Ids are made by the server.").AtPointer("/data/id")
	}
	if id != "" && doc.Data.ID != "" && doc.Data.ID != id {
		return nil, nil, jsonapi.Conflict("id_mismatch", "data.id does not match the URL.").AtPointer("/data/id")
	}
	version, err := metaVersion(doc.Data.Meta)
	if err != nil {
		return nil, nil, err
	}
	change := drafts.Change{}
	for name, raw := range doc.Data.Attributes {
		ptr := "/data/attributes/" + name
		f, ok := h.kind.Field(name)
		if roAttributes[name] {
			return nil, nil, jsonapi.Unprocessable("read_only", name+" is set by the server.").AtPointer(ptr)
		}
		if !ok || f.IsRef() {
			return nil, nil, jsonapi.BadRequest("unknown_member", fmt.Sprintf("%s has no attribute %q.", h.kind.Type, name)).AtPointer(ptr)
		}
		v, err := decodeValue(f, raw)
		if err != nil {
			return nil, nil, jsonapi.BadRequest("invalid_member", err.Error()).AtPointer(ptr)
		}
		change[f.Column] = v
	}
	for name, rel := range doc.Data.Relationships {
		ptr := "/data/relationships/" + name
		f, ok := h.kind.Field(name)
		if !ok || !f.IsRef() {
			if name == "draft" {
				return nil, nil, jsonapi.Unprocessable("read_only", "draft is set by the server.").AtPointer(ptr)
			}
			return nil, nil, jsonapi.BadRequest("unknown_member", fmt.Sprintf("%s has no relationship %q.", h.kind.Type, name)).AtPointer(ptr)
		}
		ident, err := rel.ToOne()
		if err != nil {
			return nil, nil, jsonapi.BadRequest("invalid_member", err.Error()).AtPointer(ptr)
		}
		if ident == nil {
			if f.Type == drafts.Ref {
				return nil, nil, jsonapi.Unprocessable("required", name+" cannot be null.").AtPointer(ptr + "/data")
			}
			change[f.Column] = nil
			continue
		}
		if ident.Type != f.RefType {
			return nil, nil, jsonapi.Unprocessable("wrong_type", fmt.Sprintf("%s must point to %s.", name, f.RefType)).AtPointer(ptr + "/data/type")
		}
		if _, err := uuid.Parse(ident.ID); err != nil {
			return nil, nil, unknownRelated(name, strings.TrimSuffix(f.RefType, "s"))
		}
		change[f.Column] = ident.ID
	}
	return change, version, nil
}

func decodeValue(f drafts.Field, raw json.RawMessage) (any, error) {
	if string(raw) == "null" {
		if f.Type == drafts.NullString {
			return nil, nil
		}
		return nil, fmt.Errorf("%s cannot be null", f.Name)
	}
	var err error
	switch f.Type {
	case drafts.Bool:
		var b bool
		err = json.Unmarshal(raw, &b)
		if err == nil {
			return b, nil
		}
		return nil, fmt.Errorf("%s must be true or false", f.Name)
	case drafts.Int:
		var n int32
		if err = json.Unmarshal(raw, &n); err == nil {
			return n, nil
		}
		return nil, fmt.Errorf("%s must be a whole number", f.Name)
	default:
		var s string
		if err = json.Unmarshal(raw, &s); err == nil {
			return cleanText(s), nil
		}
		return nil, fmt.Errorf("%s must be a string", f.Name)
	}
}

// create serves POST /<kind>: the record is created as a draft (201, not
// live until published).
func (h contentHandler) create(c *fiber.Ctx) error {
	q, err := parseQuery(c, h.spec(false))
	if err != nil {
		return err
	}
	change, _, err := h.decodeWrite(c, "")
	if err != nil {
		return err
	}
	pr := oauth.PrincipalOf(c)
	state := drafts.Row{}
	for k, v := range h.defaults {
		state[k] = v
	}
	for k, v := range change {
		state[k] = v
	}
	var v *drafts.View
	err = runTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
		if err := h.validate(ctx, tx, h, pr.SiteID, nil, state, nil); err != nil {
			return err
		}
		values := drafts.Change{}
		for _, f := range h.kind.Fields {
			values[f.Column] = state[f.Column]
		}
		v, err = h.engine.Create(ctx, tx, h.kind, pr.SiteID, pr.UserID, values)
		return err
	})
	if err != nil {
		return h.mapError(err)
	}
	c.Set(fiber.HeaderLocation, h.links.base+h.path(v.Row.ID().String()))
	return h.respondView(c, fiber.StatusCreated, q, pr.SiteID, v, true)
}

// update serves PATCH /<kind>/:id: the change is drafted; live data stays.
func (h contentHandler) update(c *fiber.Ctx) error {
	q, id, err := h.target(c)
	if err != nil {
		return err
	}
	change, bodyVersion, err := h.decodeWrite(c, id.String())
	if err != nil {
		return err
	}
	pr := oauth.PrincipalOf(c)
	v, err := h.write(c, id, bodyVersion, func(ctx context.Context, tx bun.Tx, cur *drafts.View, expect *int) (*drafts.View, error) {
		if cur.Draft != nil && cur.Draft.Event == drafts.Delete {
			return nil, drafts.ErrDeleted
		}
		state := drafts.Row{}
		for k, val := range cur.Drafted() {
			state[k] = val
		}
		for k, val := range change {
			state[k] = val
		}
		if err := h.validate(ctx, tx, h, pr.SiteID, &id, state, cur.Drafted()); err != nil {
			return nil, err
		}
		return h.engine.Update(ctx, tx, cur, pr.SiteID, pr.UserID, change, expect)
	})
	if err != nil {
		return err
	}
	return h.respondView(c, fiber.StatusOK, q, pr.SiteID, v, true)
}

// remove serves DELETE /<kind>/:id: a delete draft for the record and its
// children (200 with the drafted view, trashed-at set). A record never
// published is removed outright with its create (204).
func (h contentHandler) remove(c *fiber.Ctx) error {
	q, id, err := h.target(c)
	if err != nil {
		return err
	}
	pr := oauth.PrincipalOf(c)
	v, err := h.write(c, id, nil, func(ctx context.Context, tx bun.Tx, cur *drafts.View, expect *int) (*drafts.View, error) {
		return h.engine.Delete(ctx, tx, cur, pr.SiteID, pr.UserID, expect)
	})
	if err != nil {
		return err
	}
	if v == nil {
		return c.SendStatus(fiber.StatusNoContent)
	}
	return h.respondView(c, fiber.StatusOK, q, pr.SiteID, v, true)
}

// write runs a change to an existing record in a transaction: it locks and
// reads the record with its draft (one statement, drafts.LockForWrite),
// checks the client's precondition (If-Match or meta.version) against it,
// and hands fn the version the write must find — the one read under the
// lock, only when the client stated one.
func (h contentHandler) write(c *fiber.Ctx, id uuid.UUID, bodyVersion *int,
	fn func(ctx context.Context, tx bun.Tx, cur *drafts.View, expect *int) (*drafts.View, error)) (*drafts.View, error) {
	siteID := oauth.PrincipalOf(c).SiteID
	var v *drafts.View
	err := runTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
		cur, err := h.engine.LockForWrite(ctx, tx, h.kind, siteID, id)
		if err != nil {
			return err
		}
		f, _ := cur.Row["version"].(float64)
		if err := checkVersion(c, id.String(), int(f), bodyVersion); err != nil {
			return err
		}
		v, err = fn(ctx, tx, cur, h.expectation(c, int(f), bodyVersion))
		return err
	})
	if err != nil {
		return nil, h.mapError(err)
	}
	return v, nil
}

// expectation is the version a write must still find under the lock: the
// one read, when the client stated a precondition (If-Match or meta.version,
// already checked against it); none otherwise.
func (h contentHandler) expectation(c *fiber.Ctx, read int, bodyVersion *int) *int {
	if bodyVersion == nil && strings.TrimSpace(c.Get(fiber.HeaderIfMatch)) == "" {
		return nil
	}
	return &read
}

func (h contentHandler) mapError(err error) error {
	switch {
	case errors.Is(err, drafts.ErrNotFound):
		return jsonapi.NotFound(fmt.Sprintf("No %s with that id.", strings.TrimSuffix(h.kind.Type, "s")))
	case errors.Is(err, drafts.ErrInFlight):
		return jsonapi.Conflict("draft_in_flight", "The draft is being published by a revision in progress; try again when it has finished.")
	case errors.Is(err, drafts.ErrDeleted):
		return jsonapi.Conflict("drafted_for_deletion", "The record is drafted for deletion; revert that draft (DELETE /drafts/:id) before changing it.")
	case errors.Is(err, drafts.ErrStale):
		return stale(0)
	case errors.Is(err, drafts.ErrTooLarge):
		return jsonapi.Unprocessable("too_large", "The change touches more records than one request may.")
	case errors.Is(err, drafts.ErrRetry):
		return jsonapi.Conflict("edited_concurrently", "Other writes to this record kept landing first; try again.")
	}
	return err
}

// --- validation ------------------------------------------------------------------

var (
	slugPattern2   = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,98}[a-z0-9])?$`)
	varNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)
	pageTypes      = map[string]bool{"home": true, "page": true, "not_found": true, "error": true, "search": true}
	dataTypes      = map[string]bool{"text": true, "html": true, "image": true, "link": true, "markdown": true}
)

func attrErr(code, attr, detail string) error {
	return jsonapi.Unprocessable(code, detail).AtPointer("/data/attributes/" + attr)
}

func relErr(code, rel, detail string) error {
	return jsonapi.Unprocessable(code, detail).AtPointer("/data/relationships/" + rel + "/data")
}

func str(v any) string { s, _ := v.(string); return s }

func textLen(state drafts.Row, col, attr string, min, max int) error {
	n := utf8.RuneCountInString(strings.TrimSpace(str(state[col])))
	if n < min || n > max {
		if min > 0 {
			return attrErr("invalid_"+col, attr, fmt.Sprintf("%s must be %d to %d characters.", attr, min, max))
		}
		return attrErr("invalid_"+col, attr, fmt.Sprintf("%s must be at most %d characters.", attr, max))
	}
	return nil
}

// checkRef checks that a referenced record (id, or nil when optional)
// belongs to the site; drafted records count (a page may be created under a
// page created in the same session). Another site's record is reported as
// missing: 404 at the identifier (unknownRelated).
func checkRef(ctx context.Context, db bun.IDB, siteID uuid.UUID, id any, table, rel, what string, required bool) error {
	if id == nil {
		if required {
			return relErr("required", rel, rel+" is required.")
		}
		return nil
	}
	s := str(id)
	if _, err := uuid.Parse(s); err != nil {
		return unknownRelated(rel, what)
	}
	var found struct {
		Exists  bool `bun:"e"`
		Deleted bool `bun:"d"`
	}
	// The draft is looked up by (item_type, item_id), its unique index: a
	// draft's item type is its table's name (none for layouts and assets).
	err := db.NewRaw(`SELECT EXISTS (SELECT 1 FROM ? WHERE id = ?1 AND site_id = ?2) AS e,
  EXISTS (SELECT 1 FROM drafts WHERE item_type = ?3 AND item_id = ?1 AND site_id = ?2 AND event = 'delete') AS d`, bun.Ident(table), s, siteID, table).Scan(ctx, &found)
	switch {
	case err != nil:
		return err
	case !found.Exists:
		return unknownRelated(rel, what) // 404; existing but not allowed is 422

	case found.Deleted:
		// Publishing the deletion would take this record with it, unversioned.
		return relErr("drafted_for_deletion", rel, "That "+what+" is drafted for deletion; revert its delete draft first, or point elsewhere.")
	}
	return nil
}

func validatePage(ctx context.Context, db bun.IDB, h contentHandler, siteID uuid.UUID, id *uuid.UUID, s, prev drafts.Row) error {
	pt := str(s["page_type"])
	if !pageTypes[pt] {
		return attrErr("invalid_page_type", "page-type", "page-type must be one of home, page, not_found, error, search.")
	}
	slug := str(s["slug"])
	if !(pt == "home" && slug == "") && !slugPattern2.MatchString(slug) {
		return attrErr("invalid_slug", "slug", "slug must be lowercase letters, digits and inner hyphens (1 to 100); only the home page may have an empty slug.")
	}
	if err := textLen(s, "title", "title", 1, 200); err != nil {
		return err
	}
	for col, attr := range map[string]string{"description": "description", "keywords": "keywords"} {
		if err := textLen(s, col, attr, 0, 1000); err != nil {
			return err
		}
	}
	if cu, ok := s["canonical_url"].(string); ok {
		if u, err := url.Parse(cu); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || len(cu) > 2000 {
			return attrErr("invalid_canonical_url", "canonical-url", "canonical-url must be an absolute http(s) URL or null.")
		}
	}
	if pt != "page" {
		// One page per site of each special type, as drafted: a page counts
		// by its drafted type (a create draft's row is in pages already; an
		// update draft may change the type), and one drafted for deletion
		// does not count. Two writers could both find the type free, so the
		// check runs under a per-site lock held to the end of the write's
		// transaction (db is that transaction).
		if _, err := db.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('pressroom.page_types:' || ?::text, 0))", siteID); err != nil {
			return fmt.Errorf("lock special page types: %w", err)
		}
		q := db.NewSelect().TableExpr("pages AS p").
			Join("LEFT JOIN drafts AS d ON d.item_type = 'pages' AND d.item_id = p.id").
			Where("p.site_id = ?", siteID).
			Where("COALESCE(d.drafted->>'page_type', p.page_type) = ?", pt).
			Where("d.event IS DISTINCT FROM 'delete'")
		if id != nil {
			q = q.Where("p.id <> ?", *id)
		}
		taken, err := q.Exists(ctx)
		if err != nil {
			return err
		}
		if taken {
			return attrErr("page_type_taken", "page-type", fmt.Sprintf("The site already has a %s page; there can be only one.", pt))
		}
	}
	if prev != nil && str(prev["parent_id"]) == str(s["parent_id"]) {
		// The parent did not change: it was checked when set, and a parent
		// drafted for deletion since takes this page with it (a delete
		// draft, which an update is refused on before validation).
		return checkRef(ctx, db, siteID, s["layout_id"], "layouts", "layout", "layout", false)
	}
	if err := checkRef(ctx, db, siteID, s["parent_id"], "pages", "parent", "page", false); err != nil {
		return err
	}
	if p := s["parent_id"]; p != nil && id != nil {
		// The parent must not be the page itself or a descendant, following
		// drafted parents (a loop could be drafted one edit at a time).
		loop, err := h.engine.IsAncestor(ctx, db, siteID, *id, uuid.MustParse(str(p)))
		if err != nil {
			return err
		}
		if loop {
			return relErr("parent_loop", "parent", "A page cannot be its own ancestor.")
		}
	}
	return checkRef(ctx, db, siteID, s["layout_id"], "layouts", "layout", "layout", false)
}

func validateContent(ctx context.Context, db bun.IDB, h contentHandler, siteID uuid.UUID, _ *uuid.UUID, s, prev drafts.Row) error {
	if err := textLen(s, "title", "title", 1, 200); err != nil {
		return err
	}
	return checkRef(ctx, db, siteID, s["page_id"], "pages", "page", "page", true)
}

// maxBody bounds a block body (it is also bounded by the request body limit).
const maxBody = 256 << 10

func validateBlock(ctx context.Context, db bun.IDB, h contentHandler, siteID uuid.UUID, _ *uuid.UUID, s, prev drafts.Row) error {
	if !varNamePattern.MatchString(str(s["var_name"])) {
		return attrErr("invalid_var_name", "var-name", "var-name must start with a letter or _ and hold letters, digits, _ or - (at most 64).")
	}
	if !dataTypes[str(s["data_type"])] {
		return attrErr("invalid_data_type", "data-type", "data-type must be one of text, html, image, link, markdown.")
	}
	if len(str(s["body"])) > maxBody {
		return attrErr("invalid_body", "body", fmt.Sprintf("body must be at most %d bytes.", maxBody))
	}
	if err := checkRef(ctx, db, siteID, s["content_id"], "contents", "content", "content", true); err != nil {
		return err
	}
	return checkRef(ctx, db, siteID, s["asset_id"], "assets", "asset", "asset", false)
}

// respondIncluded writes doc, making sure included is present (possibly
// empty) whenever include was asked for, and absent otherwise.
func respondIncluded(c *fiber.Ctx, status int, doc jsonapi.Document, included bool) error {
	if !included {
		doc.Included = nil
		return respond(c, status, doc)
	}
	if doc.Included == nil {
		doc.Included = []*jsonapi.Resource{}
	}
	doc.JSONAPI = jsonapi.V11
	return respondRaw(c, status, struct {
		Data     any                 `json:"data"`
		Included []*jsonapi.Resource `json:"included"`
		Links    *jsonapi.Links      `json:"links,omitempty"`
		Meta     map[string]any      `json:"meta,omitempty"`
		JSONAPI  *jsonapi.Version    `json:"jsonapi"`
	}{doc.Data, doc.Included, doc.Links, doc.Meta, doc.JSONAPI})
}

// runTx runs fn in a transaction, retrying (a bounded number of times) when
// Postgres aborts it for a deadlock or a serialization failure, or the
// engine finds the item drafted under it (drafts.ErrRetry): two writers
// racing for the same records, one of which can simply go again.
func runTx(ctx context.Context, db *bun.DB, fn func(context.Context, bun.Tx) error) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		err = db.RunInTx(ctx, nil, fn)
		var pg *pgconn.PgError
		if errors.Is(err, drafts.ErrRetry) {
			continue
		}
		if !errors.As(err, &pg) || (pg.Code != "40P01" && pg.Code != "40001") {
			return err
		}
	}
	return err
}
