package api

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models/drafts"
)

// The trash (docs/history.md): GET /<kind>?filter[trashed]=true lists the
// records whose deletion a revision published, the latest deleted first,
// each as it was just before (its delete version's snapshot), with
// trashed-at (when the deletion was published) and trashed-by (the
// revision that published it). Their rows are gone, so these resources
// carry no links: GET /<kind>/:id is 404 for them; their history
// (GET /<kind>/:id/versions) and POST /versions/:id/restore answer.

// trashedParam is the filter that asks for the trash.
const trashedParam = "filter[trashed]"

// trashedFilter reads filter[trashed]: true (the trash), false or absent
// (the live records). The trash takes no sort, filter[q], other filter,
// include=draft or preview: 400.
func trashedFilter(q *Query) (bool, error) {
	switch q.Values.Get(trashedParam) {
	case "", "false":
		return false, nil
	case "true":
	default:
		return false, jsonapi.BadRequest("invalid_filter", "filter[trashed] must be true or false.").AtParameter(trashedParam)
	}
	for name := range q.Values {
		switch {
		case name == trashedParam || strings.HasPrefix(name, "page[") || name == "include" || strings.HasPrefix(name, "fields[") || name == localeParam:
		default:
			return false, jsonapi.BadRequest("invalid_filter", "The trash (filter[trashed]=true) takes only page, include, fields and locale-tag.").AtParameter(name)
		}
	}
	if q.Include["draft"] {
		return false, jsonapi.BadRequest("invalid_filter", "The trash (filter[trashed]=true) holds no drafts: include=draft does not apply.").AtParameter("include")
	}
	return true, nil
}

// trash serves GET /<kind>?filter[trashed]=true.
func (h contentHandler) trash(c *fiber.Ctx, q *Query) error {
	ctx, siteID := c.UserContext(), siteOf(c)
	items, total, err := drafts.TrashedItems(ctx, h.db, siteID, h.kind, q.listPage())
	if err != nil {
		return err
	}
	items = cursorRows(q, items)
	rs := make([]*jsonapi.Resource, len(items))
	loc := drafts.LocaleOf(ctx)
	for i, t := range items {
		rs[i] = h.trashedResource(t, loc)
	}
	cd, err := h.compound(ctx, q, siteID, nil, rs, false)
	if err != nil {
		return err
	}
	if q.Page.cursor() {
		// A trashed record's cursor is its delete version (meta.version-id):
		// the trash's rows are versions.
		l := h.links.cursorPage("/"+h.kind.Type, q, total, len(items), func(i int) string { return cursorOf(items[i].Delete.ID.String()) })
		return cd.respond(c, fiber.StatusOK, sparseAll(q, rs), l, nil)
	}
	return cd.respond(c, fiber.StatusOK, sparseAll(q, rs), h.links.collection("/"+h.kind.Type, q, total, rs), map[string]any{"total": total})
}

// trashedResource renders a trashed record: its attributes as they were,
// trashed-at, and its to-one relationships, draft (null) and trashed-by,
// each with data and no links (the record has no endpoints any more); its
// localized attributes in loc, as a live read shows them (meta.fallbacks).
func (h contentHandler) trashedResource(t drafts.Trashed, loc drafts.Locale) *jsonapi.Resource {
	row := t.Row
	id := t.Delete.ItemID.String()
	attrs := make(map[string]any, len(h.kind.Fields)+len(h.kind.Derived)+len(timestampAttributes))
	rels := make(map[string]*jsonapi.Relationship, 4)
	var fallbacks map[string]any
	for _, f := range h.kind.Fields {
		if f.IsRef() {
			var ref *string
			if s, ok := row[f.Column].(string); ok && s != "" {
				ref = &s
			}
			rels[f.Name] = &jsonapi.Relationship{Data: jsonapi.ToOne(f.RefType, ref)}
			continue
		}
		if f.Localized && loc.Tag != "" {
			attrs[f.Name] = localized(row, f, loc, &fallbacks)
			continue
		}
		attrs[f.Name] = row[f.Column]
	}
	for _, f := range h.kind.Derived {
		attrs[f.Name] = row[f.Column]
	}
	for _, ts := range timestampAttributes {
		attrs[ts.name] = formatTime(row[ts.column])
	}
	rev := t.Delete.RevisionID.String()
	rels["draft"] = &jsonapi.Relationship{Data: jsonapi.ToOne("drafts", nil)}
	rels["trashed-by"] = &jsonapi.Relationship{Data: jsonapi.ToOne("revisions", &rev)}
	meta := map[string]any{"version-id": t.Delete.ID.String()}
	if fallbacks != nil {
		meta[fallbacksMeta] = fallbacks
	}
	return &jsonapi.Resource{Type: h.kind.Type, ID: id, Attributes: attrs, Relationships: rels, Meta: meta}
}
