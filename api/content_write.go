package api

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
)

// changeOf reads the attributes and relationships of a create or update
// document (decodeCreate or decodePatch read the rest) into column changes,
// written in locale l: a localized attribute in another locale than the
// base is keyed by its flat key ("title@de", drafts.Locale.Split), and may
// be null there (the locale's value is cleared; reads fall back).
func (h contentHandler) changeOf(data *jsonapi.RequestResource[map[string]json.RawMessage], l drafts.Locale) (drafts.Change, error) {
	change := drafts.Change{}
	for name, raw := range data.Attributes {
		ptr := "/data/attributes/" + name
		f, ok := h.kind.Field(name)
		if roAttributes[name] {
			return nil, jsonapi.Unprocessable("read_only", name+" is set by the server.").AtPointer(ptr)
		}
		if !ok || f.IsRef() {
			return nil, jsonapi.BadRequest("unknown_member", fmt.Sprintf("%s has no attribute %q.", h.kind.Type, name)).AtPointer(ptr)
		}
		if string(raw) == "null" && f.Localized && !l.IsBase() {
			change[f.Column] = nil
			continue
		}
		v, err := decodeValue(f, raw)
		if err != nil {
			return nil, jsonapi.BadRequest("invalid_member", err.Error()).AtPointer(ptr)
		}
		change[f.Column] = v
	}
	for name, rel := range data.Relationships {
		ptr := "/data/relationships/" + name
		f, ok := h.kind.Field(name)
		if !ok || !f.IsRef() {
			if name == "draft" {
				return nil, jsonapi.Unprocessable("read_only", "draft is set by the server.").AtPointer(ptr)
			}
			return nil, jsonapi.BadRequest("unknown_member", fmt.Sprintf("%s has no relationship %q.", h.kind.Type, name)).AtPointer(ptr)
		}
		ident, err := rel.ToOne()
		if err != nil {
			return nil, jsonapi.BadRequest("invalid_member", err.Error()).AtPointer(ptr)
		}
		if ident == nil {
			if f.Type == drafts.Ref {
				return nil, nullRelationship(name)
			}
			change[f.Column] = nil
			continue
		}
		if ident.Type != f.RefType {
			return nil, wrongRelationshipType(name, f.RefType)
		}
		if _, err := uuid.Parse(ident.ID); err != nil {
			return nil, models.RefNotFound(name, strings.TrimSuffix(f.RefType, "s"))
		}
		change[f.Column] = ident.ID
	}
	shared, local := l.Split(h.kind, change)
	for k, v := range local {
		shared[k] = v
	}
	return shared, nil
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
	data, err := decodeCreate[map[string]json.RawMessage](c, h.kind.Type)
	if err != nil {
		return err
	}
	l := drafts.LocaleOf(c.UserContext())
	change, err := h.changeOf(data, l)
	if err != nil {
		return err
	}
	pr := oauth.PrincipalOf(c)
	state := h.kind.Defaults()
	for k, v := range change {
		state[k] = v
	}
	localeCreate(h.kind, l, change, state)
	var v *drafts.View
	err = runTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
		if err := h.engine.Check(ctx, tx, h.kind, pr.SiteID, nil, state, nil); err != nil {
			return err
		}
		values := drafts.Change{}
		for k, v := range state {
			values[k] = v
		}
		if v, err = h.engine.Create(ctx, tx, h.kind, pr.SiteID, pr.UserID, values); err != nil {
			return err
		}
		auditItem(ctx, v.Row.ID())
		return h.checkSection(ctx, tx, pr, v)
	})
	if err != nil {
		return err
	}
	return h.respondView(c, fiber.StatusCreated, q, pr.SiteID, v, true)
}

// localeCreate completes the state of a create written in locale l, if
// not the base (docs/locales.md): the base values of its localized fields
// stay what their defaults are (a title none: a read falls back to l's),
// but the slug takes l's (the base path must exist: plan Q5).
func localeCreate(k *drafts.Kind, l drafts.Locale, change drafts.Change, state drafts.Row) {
	if l.IsBase() {
		return
	}
	if f, ok := k.Field("slug"); ok && f.Localized {
		if v := change[l.Key(f, l.Tag)]; v != nil {
			state[f.Column] = v
		}
	}
}

// update serves PATCH /<kind>/:id: the change is drafted; live data stays.
func (h contentHandler) update(c *fiber.Ctx) error {
	q, err := parseQuery(c, h.spec(false))
	if err != nil {
		return err
	}
	req, err := decodePatch[map[string]json.RawMessage](c, h.singular(), h.kind.Type)
	if err != nil {
		return err
	}
	change, err := h.changeOf(req.data, drafts.LocaleOf(c.UserContext()))
	if err != nil {
		return err
	}
	id, bodyVersion := req.id, req.bodyVersion
	pr := oauth.PrincipalOf(c)
	v, err := h.write(c, id, bodyVersion, func(ctx context.Context, tx bun.Tx, cur *drafts.View, expect *int) (*drafts.View, error) {
		if cur.Draft != nil && cur.Draft.Event == drafts.EventDelete {
			return nil, drafts.ErrDeleted
		}
		prev := cur.Drafted() // made once: with a draft it copies the row
		state := make(drafts.Row, len(prev)+len(change))
		for k, val := range prev {
			state[k] = val
		}
		for k, val := range change {
			state[k] = val
		}
		if err := h.engine.Check(ctx, tx, h.kind, pr.SiteID, &id, state, prev); err != nil {
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
	siteID := siteOf(c)
	var v *drafts.View
	err := runTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
		cur, err := h.engine.LockForWrite(ctx, tx, h.kind, siteID, id)
		if err != nil {
			return err
		}
		version := cur.Row.Version()
		if err := checkVersion(c, id.String(), version, bodyVersion); err != nil {
			return err
		}
		// A section's author or editor: the record, before and after,
		// lies in the section.
		pr := oauth.PrincipalOf(c)
		if err := h.checkSection(ctx, tx, pr, cur); err != nil {
			return err
		}
		if v, err = fn(ctx, tx, cur, h.expectation(c, version, bodyVersion)); err != nil {
			return err
		}
		return h.checkSection(ctx, tx, pr, v)
	})
	if err != nil {
		return nil, err
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

// checkSection refuses (403, naming the record) the write of a section's
// author or editor to a record outside the section: a page not under the
// prefix (stored or drafted), or content and blocks of such a page.
func (h contentHandler) checkSection(ctx context.Context, tx bun.Tx, pr *oauth.Principal, v *drafts.View) error {
	prefix := sectionOf(pr)
	path, err := h.engine.ViewOutside(ctx, tx, pr.SiteID, prefix, v)
	if err != nil || path == "" {
		return err
	}
	return &models.Error{Kind: models.ErrForbidden, Meta: map[string]any{"permission": string(models.PermEdit), "item": map[string]any{"type": v.Kind.Type, "id": v.Row.ID().String()}},
		Detail: fmt.Sprintf("You lack the permission \"edit\" for %s %s: it is at %s, outside your section %s.", v.Kind.Type, v.Row.ID(), path, *prefix)}
}
