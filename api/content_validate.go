package api

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
)

// Validation of a drafted state of pages, contents and content blocks. A
// validator runs inside the write's transaction and queries through db
// (that transaction), never the pool.

var (
	pageSlugPattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,98}[a-z0-9])?$`)
	varNamePattern  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)
	pageTypes       = map[string]bool{"home": true, "page": true, "not_found": true, "error": true, "search": true}
	dataTypes       = map[string]bool{"text": true, "html": true, "image": true, "link": true, "markdown": true}
)

// textLen checks the length of a text column, trimmed, in characters.
func textLen(state drafts.Row, col, attr string, min, max int) error {
	n := utf8.RuneCountInString(strings.TrimSpace(str(state[col])))
	if n < min || n > max {
		if min > 0 {
			return invalidAttr(attr, "invalid_"+col, fmt.Sprintf("%s must be %d to %d characters.", attr, min, max))
		}
		return invalidAttr(attr, "invalid_"+col, fmt.Sprintf("%s must be at most %d characters.", attr, max))
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
			return missingRelationship(rel, what)
		}
		return nil
	}
	s := str(id)
	if _, err := uuid.Parse(s); err != nil {
		return unknownRelated(rel, what)
	}
	exists, deleted, err := drafts.RefState(ctx, db, siteID, table, s)
	switch {
	case err != nil:
		return err
	case !exists:
		return unknownRelated(rel, what) // 404; existing but not allowed is 422

	case deleted:
		// Publishing the deletion would take this record with it, unversioned.
		return relErr("drafted_for_deletion", rel, "That "+what+" is drafted for deletion; revert its delete draft first, or point elsewhere.")
	}
	return nil
}

func validatePage(ctx context.Context, db bun.IDB, engine *drafts.Engine, siteID uuid.UUID, id *uuid.UUID, s, prev drafts.Row) error {
	pt := str(s["page_type"])
	if !pageTypes[pt] {
		return invalidAttr("page-type", "invalid_page_type", "page-type must be one of home, page, not_found, error, search.")
	}
	slug := str(s["slug"])
	if !(pt == "home" && slug == "") && !pageSlugPattern.MatchString(slug) {
		return invalidAttr("slug", "invalid_slug", "slug must be lowercase letters, digits and inner hyphens (1 to 100); only the home page may have an empty slug.")
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
			return invalidAttr("canonical-url", "invalid_canonical_url", "canonical-url must be an absolute http(s) URL or null.")
		}
	}
	if pt != "page" {
		// One page per site of each special type, as drafted
		// (drafts.PageTypeTaken, under a lock held by the write's transaction).
		taken, err := drafts.PageTypeTaken(ctx, db, siteID, pt, id)
		if err != nil {
			return err
		}
		if taken {
			return invalidAttr("page-type", "page_type_taken", fmt.Sprintf("The site already has a %s page; there can be only one.", pt))
		}
	}
	// An unchanged parent was checked when set, and a parent drafted for
	// deletion since takes this page with it (a delete draft, which an
	// update is refused on before validation).
	if prev == nil || str(prev["parent_id"]) != str(s["parent_id"]) {
		if err := checkParent(ctx, db, engine, siteID, id, s["parent_id"]); err != nil {
			return err
		}
	}
	if err := checkRef(ctx, db, siteID, s["layout_id"], "layouts", "layout", "layout", false); err != nil {
		return err
	}
	return checkPath(ctx, db, siteID, id, s, prev)
}

// checkParent checks a page's new parent: a page of the site, not drafted
// for deletion, and not the page itself or a descendant, following drafted
// parents (a loop could be drafted one edit at a time).
func checkParent(ctx context.Context, db bun.IDB, engine *drafts.Engine, siteID uuid.UUID, id *uuid.UUID, parent any) error {
	if err := checkRef(ctx, db, siteID, parent, "pages", "parent", "page", false); err != nil {
		return err
	}
	if parent == nil || id == nil {
		return nil
	}
	loop, err := engine.IsAncestor(ctx, db, siteID, *id, uuid.MustParse(str(parent)))
	if err != nil {
		return err
	}
	if loop {
		return relErr("parent_loop", "parent", "A page cannot be its own ancestor.")
	}
	return nil
}

// checkPath refuses a drafted place (parent and slug) that another page
// holds, live or drafted (drafts.PageAt): one site cannot serve two pages
// at one URL. 409 path_taken at the slug, or at the parent when only the
// parent changed, with the other page in meta. A title-only write skips it.
func checkPath(ctx context.Context, db bun.IDB, siteID uuid.UUID, id *uuid.UUID, s, prev drafts.Row) error {
	slugChanged := prev == nil || str(prev["slug"]) != str(s["slug"])
	if !slugChanged && str(prev["parent_id"]) == str(s["parent_id"]) {
		return nil
	}
	var parent *uuid.UUID
	if p, err := uuid.Parse(str(s["parent_id"])); err == nil {
		parent = &p
	}
	other, err := drafts.PageAt(ctx, db, siteID, id, parent, str(s["slug"]))
	if err != nil || other == nil {
		return err
	}
	pointer := "/data/attributes/slug"
	if !slugChanged {
		pointer = "/data/relationships/parent/data"
	}
	return &models.Error{Kind: models.ErrConflict, Code: drafts.PathTaken, Pointer: pointer,
		Detail: fmt.Sprintf("Page %s is at that path already (live or drafted): the slug must be unique among a page's siblings. Choose another slug or parent.", other),
		Meta:   map[string]any{"page": map[string]any{"type": "pages", "id": other.String()}}}
}

func validateContent(ctx context.Context, db bun.IDB, engine *drafts.Engine, siteID uuid.UUID, _ *uuid.UUID, s, _ drafts.Row) error {
	if err := textLen(s, "title", "title", 1, 200); err != nil {
		return err
	}
	return checkRef(ctx, db, siteID, s["page_id"], "pages", "page", "page", true)
}

// maxBody bounds a block body (it is also bounded by the request body limit).
const maxBody = 256 << 10

func validateBlock(ctx context.Context, db bun.IDB, engine *drafts.Engine, siteID uuid.UUID, _ *uuid.UUID, s, _ drafts.Row) error {
	if !varNamePattern.MatchString(str(s["var_name"])) {
		return invalidAttr("var-name", "invalid_var_name", "var-name must start with a letter or _ and hold letters, digits, _ or - (at most 64).")
	}
	if !dataTypes[str(s["data_type"])] {
		return invalidAttr("data-type", "invalid_data_type", "data-type must be one of text, html, image, link, markdown.")
	}
	if len(str(s["body"])) > maxBody {
		return invalidAttr("body", "invalid_body", fmt.Sprintf("body must be at most %d bytes.", maxBody))
	}
	if err := checkRef(ctx, db, siteID, s["content_id"], "contents", "content", "content", true); err != nil {
		return err
	}
	return checkRef(ctx, db, siteID, s["asset_id"], "assets", "asset", "asset", false)
}
