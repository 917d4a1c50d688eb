package api

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
)

type versionAttributes struct {
	Event string `json:"event" oas:"enum:draft-event"`
	// Locale is the locale whose values the version changed (its
	// object-changes keyed "title@de"); null for a shared version: shared
	// attributes and the base locale's values (docs/locales.md).
	Locale        *string        `json:"locale" oas:"nullable"`
	ObjectChanges map[string]any `json:"object-changes"`
	// State is the record right after the version (null after a delete,
	// and for a version older than the state column that had no row to
	// take it from; docs/history.md).
	State     *versionState `json:"state" oas:"nullable"`
	CreatedAt string        `json:"created-at" oas:"date-time"`
}

// versionState is a record's attributes and relationship identifiers at a
// point of its history.
type versionState struct {
	Attributes    map[string]any `json:"attributes"`
	Relationships map[string]any `json:"relationships"`
}

// renderVersions renders versions, their states in ctx's locale (the
// versions' fetchFunc).
func (h revisionsHandler) renderVersions(ctx context.Context, _ uuid.UUID, vs []drafts.Version) ([]*jsonapi.Resource, error) {
	out := make([]*jsonapi.Resource, len(vs))
	for i := range vs {
		out[i] = versionResource(h.links, &vs[i], drafts.LocaleOf(ctx))
	}
	return out, nil
}

// versionResource renders v, its state's localized attributes in locale l
// (with its fallbacks, as a read in l shows the record).
func versionResource(l links, v *drafts.Version, loc drafts.Locale) *jsonapi.Resource {
	p := "/versions/" + v.ID.String()
	item, rev := v.ItemID.String(), v.RevisionID.String()
	var user *string
	if v.UserID != nil {
		s := v.UserID.String()
		user = &s
	}
	oc := v.ObjectChanges
	if oc == nil {
		oc = map[string]any{}
	}
	return &jsonapi.Resource{Type: "versions", ID: v.ID.String(), Links: l.self(p),
		Attributes: versionAttributes{Event: v.Event, Locale: localeOrNull(v.Locale), ObjectChanges: oc, State: stateOf(v, loc), CreatedAt: timestamp(v.CreatedAt)},
		Relationships: map[string]*jsonapi.Relationship{
			"item":     l.relationship(p, "item", jsonapi.ToOne(v.ItemType, &item)),
			"revision": l.relationship(p, "revision", jsonapi.ToOne("revisions", &rev)),
			"user":     l.relationship(p, "user", jsonapi.ToOne("users", user)),
		}}
}

// stateOf renders v's state as the record's resource shows it in locale
// l: attributes by name (timestamps formatted; localized ones l's value,
// or its chain's), to-one relationships as identifiers.
func stateOf(v *drafts.Version, l drafts.Locale) *versionState {
	k, ok := drafts.KindOf(v.ItemType)
	row, err := v.StateRow()
	if !ok || err != nil || row == nil {
		return nil
	}
	s := &versionState{Attributes: map[string]any{}, Relationships: map[string]any{}}
	for _, f := range k.Fields {
		if !f.IsRef() {
			s.Attributes[f.Name], _ = l.Pick(row, f)
			continue
		}
		var data any
		if id, ok := row[f.Column].(string); ok && id != "" {
			data = map[string]any{"type": f.RefType, "id": id}
		}
		s.Relationships[f.Name] = map[string]any{"data": data}
	}
	for _, f := range k.Derived {
		s.Attributes[f.Name] = row[f.Column]
	}
	for _, ts := range timestampAttributes {
		s.Attributes[ts.name] = formatTime(row[ts.column])
	}
	return s
}

// historyParams are the query parameters GET /<kind>/:id/versions takes.
var historyParams = []string{"page[after]", "page[size]", draftLocaleParam}

func historySpec() QuerySpec { return QuerySpec{Fields: fieldsOf("versions"), Extra: historyParams} }

// history serves GET /<kind>/:id/versions: the record's versions, newest
// first, by cursor (docs/history.md); a deleted record's too.
func (h contentHandler) history(c *fiber.Ctx) error {
	q, err := parseQuery(c, historySpec())
	if err != nil {
		return err
	}
	id, err := idParam(c, h.singular())
	if err != nil {
		return err
	}
	p := drafts.HistoryPage{Limit: defaultPageSize, After: q.Values.Get("page[after]")}
	if p.Limit, err = pageSizeOf(q.Values); err != nil {
		return err
	}
	if p.Locale, err = draftLocaleFilter(c); err != nil {
		return err
	}
	vs, more, err := drafts.ItemVersions(c.UserContext(), h.db, siteOf(c), h.kind, id, p)
	if errors.Is(err, models.ErrBadCursor) {
		return jsonapi.BadRequest("invalid_page", "page[after] must be a links.next cursor of this list.").AtParameter("page[after]")
	}
	if err != nil {
		return err
	}
	rs := make([]*jsonapi.Resource, len(vs))
	for i, v := range vs {
		rs[i] = q.Sparse(versionResource(h.links, v, drafts.LocaleOf(c.UserContext())))
	}
	path := h.path(id.String()) + "/versions"
	links := &jsonapi.Links{Self: cursorLink(h.links, path, q.Values, "page[after]", ""), First: cursorLink(h.links, path, q.Values, "page[after]", "-")}
	if more {
		last := vs[len(vs)-1]
		links.Next = cursorLink(h.links, path, q.Values, "page[after]", models.Cursor(last.CreatedAt, last.ID))
	}
	return respond(c, fiber.StatusOK, jsonapi.Document{Data: rs, Links: links})
}

// pageSizeOf reads page[size] (1 to maxPageSize, defaultPageSize without).
func pageSizeOf(v url.Values) (int, error) {
	s := v.Get("page[size]")
	if s == "" {
		return defaultPageSize, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxPageSize {
		return 0, jsonapi.BadRequest("invalid_page", fmt.Sprintf("page[size] must be a whole number from 1 to %d.", maxPageSize)).AtParameter("page[size]")
	}
	return n, nil
}

// asOfOf reads as-of: a version id or an RFC 3339 time.
func asOfOf(s string) (drafts.AsOf, error) {
	if id, err := uuid.Parse(s); err == nil {
		return drafts.AsOf{Version: &id}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return drafts.AsOf{}, jsonapi.BadRequest("invalid_query", "as-of must be a version id or a time in RFC 3339 (2026-11-28T07:00:00Z).").AtParameter("as-of")
	}
	return drafts.AsOf{At: &t}, nil
}

// getAsOf serves GET /<kind>/:id?as-of=: the record as it was live at that
// point, from the state of the version in effect then; meta.version-id
// names it. 404 when the record did not exist then. Its to-many linkage
// is today's (each child has its own history).
func (h contentHandler) getAsOf(c *fiber.Ctx, q *Query, id uuid.UUID) error {
	if q.Include["draft"] {
		return jsonapi.BadRequest("invalid_query", "as-of reads a published state; it does not take include=draft.").AtParameter("as-of")
	}
	point, err := asOfOf(q.Values.Get("as-of"))
	if err != nil {
		return err
	}
	ctx, siteID := c.UserContext(), siteOf(c)
	v, err := drafts.VersionAsOf(ctx, h.db, siteID, h.kind, id, point)
	if err != nil {
		return err
	}
	row, err := v.StateRow()
	if err != nil {
		return err
	}
	rs, err := h.render(ctx, siteID, []*drafts.View{{Kind: h.kind, Row: row}}, false)
	if err != nil {
		return err
	}
	r := rs[0]
	meta := map[string]any{"version-id": v.ID.String()}
	if fb, ok := r.Meta[fallbacksMeta]; ok { // in a locale (docs/locales.md)
		meta[fallbacksMeta] = fb
	}
	r.Meta = meta
	doc := jsonapi.Document{Data: q.Sparse(r), Meta: map[string]any{"version-id": v.ID.String()}}
	if len(q.Include) > 0 {
		cd, err := h.compound(ctx, q, siteID, nil, rs, false)
		if err != nil {
			return err
		}
		doc.Included = cd.list
	}
	return respondIncluded(c, fiber.StatusOK, doc, len(q.Include) > 0)
}
