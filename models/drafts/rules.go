package drafts

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
)

// Check judges a drafted state of an item of kind k before it is drafted:
// a create's (id and prev nil) or an update's of item id (prev: the
// drafted state before the change). First the fields' declarations
// (CheckAttributes); then the rules across records, in the caller's
// transaction (db must be it, never the pool: the rules lock, and a
// transaction waiting on a second connection can starve the pool): one
// page of each special type per site, each reference (a record of the
// site, not drafted for deletion; a page not its own ancestor), and one
// page at a path. A refusal is a domain error at the attribute or
// relationship it is about.
func (e *Engine) Check(ctx context.Context, db bun.IDB, k *Kind, siteID uuid.UUID, id *uuid.UUID, state, prev Row) error {
	if err := CheckAttributes(k, state); err != nil {
		return err
	}
	if k == Pages {
		if err := specialPageFree(ctx, db, siteID, id, state); err != nil {
			return err
		}
	}
	for _, f := range k.Fields {
		if !f.IsRef() {
			continue
		}
		// An unchanged parent in a tree was checked when set, and a parent
		// drafted for deletion since takes this item with it (a delete
		// draft, which an update is refused on before validation).
		if f.RefType == k.Type && prev != nil && str(prev[f.Column]) == str(state[f.Column]) {
			continue
		}
		if err := e.checkRef(ctx, db, k, siteID, id, f, state[f.Column]); err != nil {
			return err
		}
	}
	if k == Pages {
		return pathFree(ctx, db, siteID, id, state, prev)
	}
	return nil
}

// specialPageFree refuses a second page of a special type (every type but
// "page") in a site, as drafted (pageTypeTaken, under a lock held by the
// caller's transaction): 422 page_type_taken at page-type.
func specialPageFree(ctx context.Context, db bun.IDB, siteID uuid.UUID, id *uuid.UUID, state Row) error {
	pt := str(state["page_type"])
	if pt == "page" {
		return nil
	}
	taken, err := pageTypeTaken(ctx, db, siteID, pt, id)
	if err != nil || !taken {
		return err
	}
	return models.Invalid("page-type", "page_type_taken", fmt.Sprintf("The site already has a %s page; there can be only one.", pt))
}

// checkRef checks the reference f of item id (nil on a create) to v (an
// id, or nil): required when f is a Ref; a record of the site, drafted
// creates counting (a page may be created under a page created in the
// same session), and not drafted for deletion (publishing the deletion
// would take this item with it, unversioned). A missing record, an id
// that is no UUID and another site's record look alike: 404 at the
// identifier's id (models.RefNotFound). A reference within a tree (a
// page's parent) must not make the item its own ancestor.
func (e *Engine) checkRef(ctx context.Context, db bun.IDB, k *Kind, siteID uuid.UUID, id *uuid.UUID, f Field, v any) error {
	what := (&Kind{Type: f.RefType}).Singular()
	if v == nil {
		if f.Type == Ref {
			return &models.Error{Kind: models.ErrInvalid, Code: "missing_relationship", At: models.Rel(f.Name, models.PartMember),
				Detail: "The " + f.Name + " relationship is required: the " + what + "."}
		}
		return nil
	}
	target, err := uuid.Parse(str(v))
	if err != nil {
		return models.RefNotFound(f.Name, what)
	}
	exists, deleted, err := refState(ctx, db, siteID, f.RefType, target)
	switch {
	case err != nil:
		return err
	case !exists:
		return models.RefNotFound(f.Name, what) // 404; existing but not allowed is 422
	case deleted:
		return &models.Error{Kind: models.ErrInvalid, Code: "drafted_for_deletion", At: models.Rel(f.Name, models.PartData),
			Detail: "That " + what + " is drafted for deletion; revert its delete draft first, or point elsewhere."}
	}
	if f.RefType != k.Type || id == nil {
		return nil
	}
	// A loop could be drafted one edit at a time: drafted parents count.
	loop, err := e.IsAncestor(ctx, db, siteID, *id, target)
	if err != nil || !loop {
		return err
	}
	return &models.Error{Kind: models.ErrInvalid, Code: "parent_loop", At: models.Rel(f.Name, models.PartData),
		Detail: "A " + what + " cannot be its own ancestor."}
}

// pathFree refuses a drafted place (parent and slug) that another page
// holds, live or drafted (pageAt), in the base locale or, on a site with
// several, in any other (pageAtLocale: the slugs resolved along each
// locale's chain): one site cannot serve two pages at one URL in one
// locale. 409 path_taken at the slug, or at the parent when only the
// parent changed, with the other page in meta (and the locale, when it is
// not the base's). A write that moves no slug of any locale and not the
// parent skips it (placesToCheck).
func pathFree(ctx context.Context, db bun.IDB, siteID uuid.UUID, id *uuid.UUID, state, prev Row) error {
	checks, l, err := placesToCheck(ctx, db, siteID, state, prev)
	if err != nil || len(checks) == 0 {
		return err
	}
	if err := lockSlugs(ctx, db, siteID, checks); err != nil {
		return err
	}
	var parent *uuid.UUID
	if p, err := uuid.Parse(str(state["parent_id"])); err == nil {
		parent = &p
	}
	for _, c := range checks {
		var other *uuid.UUID
		if c.tag == "" {
			other, err = pageAt(ctx, db, siteID, id, parent, c.slug)
		} else {
			other, err = pageAtLocale(ctx, db, siteID, id, parent, l, c.tag, c.slug)
		}
		if err != nil {
			return err
		}
		if other != nil {
			return pathTaken(c, *other, prev != nil && str(prev["parent_id"]) != str(state["parent_id"]) && !slugsChanged(state, prev))
		}
	}
	return nil
}

// pathTaken is the 409 of a place page other holds: at the slug, or at
// the parent when only the parent changed (onlyParent).
func pathTaken(c placeCheck, other uuid.UUID, onlyParent bool) error {
	at := models.Attr("slug")
	if onlyParent {
		at = models.Rel("parent", models.PartData)
	}
	meta := map[string]any{"page": itemMeta("pages", other)}
	detail := fmt.Sprintf("Page %s is at that path already (live or drafted): the slug must be unique among a page's siblings. Choose another slug or parent.", other)
	if c.tag != "" {
		meta["locale"] = c.tag
		detail = fmt.Sprintf("Page %s is at that path in %s already (live or drafted; a page without a slug of its own in %s has its fallback's): the slug must be unique among a page's siblings in every locale. Choose another slug or parent.", other, c.tag, c.tag)
	}
	return &models.Error{Kind: models.ErrConflict, Code: PathTaken, At: at, Detail: detail, Meta: meta}
}
