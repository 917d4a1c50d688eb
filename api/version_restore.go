package api

import (
	"context"
	"errors"
	"fmt"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
)

// POST /versions/:id/restore (docs/history.md): a draft that sets the
// record back to the version's state (a delete's version: the state
// before it). A live record gets an update draft; a deleted one comes
// back under its id as a create draft, with its contents and blocks as
// they were, each a create draft the engine ties to its parent's. Nothing
// goes live until a revision publishes it. A record with a pending draft
// is 409 draft_pending unless replace-draft=true.
//
// In a locale (locale-tag, not the base), a live record's restore drafts
// that locale's values of the version only, into the record's draft of
// that locale (its pending one is what draft_pending names); without, the
// shared attributes and the base locale's, as before locales (plan Q6). A
// deleted record comes back whole, every locale's values with it.

type restorer struct {
	db     *bun.DB
	engine *drafts.Engine
	kinds  map[string]contentHandler
	drafts *draftRenderer
}

// restore serves POST /versions/:id/restore.
func (h restorer) restore(c *fiber.Ctx) error {
	if _, err := parseQuery(c, QuerySpec{Extra: []string{"replace-draft"}}); err != nil {
		return err
	}
	replace := c.Query("replace-draft")
	if replace != "" && replace != "true" && replace != "false" {
		return jsonapi.BadRequest("invalid_query", "replace-draft must be true or false.").AtParameter("replace-draft")
	}
	id, err := idParam(c, "version")
	if err != nil {
		return err
	}
	pr := oauth.PrincipalOf(c)
	v, err := drafts.FindVersion(c.UserContext(), h.db, pr.SiteID, id)
	if err != nil {
		return err
	}
	kh, ok := h.kinds[v.ItemType]
	state, err := v.RestoreState()
	if err != nil {
		return err
	}
	if !ok || state == nil {
		return &models.Error{Kind: models.ErrInvalid, Code: "nothing_to_restore", Detail: "The version keeps no state to restore."}
	}
	var made []*drafts.Draft
	err = runTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
		made = made[:0]
		// Read again, locked: the trash purge may have taken it since.
		v, err := drafts.LockVersion(ctx, tx, pr.SiteID, v.ID, v.ItemType, v.ItemID)
		if err != nil {
			return err
		}
		cur, err := h.engine.LockForWrite(ctx, tx, kh.kind, pr.SiteID, v.ItemID)
		if errors.Is(err, models.ErrNotFound) {
			made, err = h.bringBack(ctx, tx, pr, v, state)
			return err
		}
		if err != nil {
			return err
		}
		d, err := h.setBack(ctx, tx, kh, pr, cur, state, replace == "true", drafts.LocaleOf(ctx))
		made = append(made, d)
		return err
	})
	if err != nil {
		return err
	}
	rs, err := h.drafts.render(c.UserContext(), pr.SiteID, made)
	if err != nil {
		return err
	}
	doc := jsonapi.Document{Data: rs[0], Meta: map[string]any{"drafts": len(made)}}
	if len(rs) > 1 {
		doc.Included = rs[1:]
	}
	c.Set(fiber.HeaderLocation, rs[0].Links.Self)
	return respondIncluded(c, fiber.StatusCreated, doc, len(rs) > 1)
}

// changeFrom is the change that sets a record of k to state: its fields
// (shared, and the base locale's values).
func changeFrom(k *drafts.Kind, state drafts.Row) drafts.Change {
	change := drafts.Change{}
	for _, f := range k.Fields {
		val := state[f.Column]
		if n, ok := val.(float64); ok && f.Type == drafts.Int {
			val = int32(n)
		}
		change[f.Column] = val
	}
	return change
}

// wholeChangeFrom is changeFrom with the values state holds in the site's
// other locales (flat keys "title@de"): a deleted record comes back with
// every locale it had that the site still has.
func wholeChangeFrom(k *drafts.Kind, state drafts.Row, site models.SiteLocales) drafts.Change {
	change := changeFrom(k, state)
	l := drafts.Locale{Base: site.Base}
	for _, f := range k.LocalizedFields() {
		for _, tag := range site.Locales {
			if key := l.Key(f, tag); key != f.Column && state[key] != nil {
				change[key] = state[key]
			}
		}
	}
	return change
}

// localeChangeFrom is the change that sets the values of locale l's
// localized fields of a record of k to state's (a value state lacks:
// cleared, so a read falls back).
func localeChangeFrom(k *drafts.Kind, state drafts.Row, l drafts.Locale) drafts.Change {
	change := drafts.Change{}
	for _, f := range k.LocalizedFields() {
		key := l.Key(f, l.Tag)
		change[key] = state[key]
	}
	return change
}

// setBack drafts the update of a live record back to state, after
// reverting its pending draft when replace (409 draft_pending otherwise):
// in locale l (not the base), that locale's values and draft only.
func (h restorer) setBack(ctx context.Context, tx bun.Tx, kh contentHandler, pr *oauth.Principal, cur *drafts.View, state drafts.Row, replace bool,
	l drafts.Locale) (*drafts.Draft, error) {
	if err := kh.checkSection(ctx, tx, pr, cur); err != nil {
		return nil, err
	}
	pending := cur.Draft
	if !l.IsBase() {
		pending = cur.LocaleDrafts[l.Tag]
	}
	if pending != nil {
		if !replace {
			return nil, &models.Error{Kind: models.ErrConflict, Code: "draft_pending", Meta: map[string]any{"draft": map[string]any{"type": "drafts", "id": pending.ID.String()}},
				Detail: "The record has a pending draft; send replace-draft=true to replace it with the restore."}
		}
		if err := h.engine.RevertDraft(ctx, tx, pr.SiteID, pending.ID, func(locked *drafts.Draft) error { return mayRevert(pr, locked) }); err != nil {
			return nil, err
		}
		var err error
		if cur, err = h.engine.LockForWrite(ctx, tx, kh.kind, pr.SiteID, cur.Row.ID()); err != nil {
			return nil, err
		}
	}
	change := changeFrom(kh.kind, state)
	if !l.IsBase() {
		change = localeChangeFrom(kh.kind, state, l)
	}
	id := cur.Row.ID()
	prev := cur.Drafted()
	next := make(drafts.Row, len(prev))
	for k, val := range prev {
		next[k] = val
	}
	for k, val := range change {
		next[k] = val
	}
	if err := h.engine.Check(ctx, tx, kh.kind, pr.SiteID, &id, next, prev); err != nil {
		return nil, err
	}
	v, err := h.engine.Update(ctx, tx, cur, pr.SiteID, pr.UserID, change, nil)
	if err != nil {
		return nil, err
	}
	made := v.Draft
	if !l.IsBase() {
		made = v.LocaleDrafts[l.Tag]
	}
	if made == nil {
		return nil, &models.Error{Kind: models.ErrInvalid, Code: "nothing_to_restore", Detail: "The record is already as the version left it."}
	}
	return made, kh.checkSection(ctx, tx, pr, v)
}

// bringBack drafts the creates of a deleted record at state, and of the
// records that pointed at it when that state ended (drafts.StateEnd): a
// page's subpages and contents, a content's blocks, down the tree, parents
// first, each a create draft the engine ties to its parent's. At most
// drafts.MaxClosure records.
func (h restorer) bringBack(ctx context.Context, tx bun.Tx, pr *oauth.Principal, v *drafts.Version, state drafts.Row) ([]*drafts.Draft, error) {
	at, err := drafts.LockStateEnd(ctx, tx, v)
	if err != nil {
		return nil, err
	}
	type level struct {
		kh   contentHandler
		rows []drafts.Row
	}
	var made []*drafts.Draft
	queue := []level{{h.kinds[v.ItemType], []drafts.Row{state}}}
	for len(queue) > 0 {
		l := queue[0]
		queue = queue[1:]
		ids := make([]uuid.UUID, 0, len(l.rows))
		for _, row := range l.rows {
			d, err := h.recreate(ctx, tx, l.kh, pr, row)
			if err != nil {
				return nil, err
			}
			made = append(made, d)
			ids = append(ids, row.ID())
		}
		if len(made) > drafts.MaxClosure {
			return nil, drafts.ErrTooLarge
		}
		for _, child := range l.kh.kind.Children {
			kh := h.kinds[child.Type]
			rows, err := drafts.ChildrenAsOf(ctx, tx, pr.SiteID, kh.kind, child.Column, ids, at)
			if err != nil {
				return nil, err
			}
			if len(rows) > 0 {
				queue = append(queue, level{kh, rows})
			}
		}
	}
	return made, nil
}

// recreate drafts the create of the deleted record row of kh's kind,
// under its id, by the rules a POST is held to.
func (h restorer) recreate(ctx context.Context, tx bun.Tx, kh contentHandler, pr *oauth.Principal, row drafts.Row) (*drafts.Draft, error) {
	change := wholeChangeFrom(kh.kind, row, pr.Locales)
	state := kh.kind.Defaults()
	for k, val := range change {
		state[k] = val
	}
	if err := h.engine.Check(ctx, tx, kh.kind, pr.SiteID, nil, state, nil); err != nil {
		return nil, err
	}
	v, err := h.engine.CreateAs(ctx, tx, kh.kind, pr.SiteID, pr.UserID, row.ID(), change)
	if err != nil {
		return nil, fmt.Errorf("restore %s %s: %w", kh.kind.Singular(), row.ID(), err)
	}
	return v.Draft, kh.checkSection(ctx, tx, pr, v)
}
