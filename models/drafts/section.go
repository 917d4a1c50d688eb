package drafts

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
)

// A membership narrowed to a section (path_prefix, models/roles.go) covers
// the pages under the prefix, their contents and their blocks. A draft is
// in the section when every page it belongs to is, at its stored path and
// at its drafted one: a page moved out of the section, or content moved
// to a page outside it, is outside.

// OutsideSection returns, for each draft of ds outside the section prefix
// (nil: the whole site, so none), the first path that puts it outside. The
// drafts' pages are read in db (the publishing transaction, for Publish).
func (e *Engine) OutsideSection(ctx context.Context, db bun.IDB, siteID uuid.UUID, prefix *string, ds []*Draft) (map[uuid.UUID]string, error) {
	out := map[uuid.UUID]string{}
	if prefix == nil || *prefix == "/" || len(ds) == 0 {
		return out, nil
	}
	pagesOf, err := draftPages(ctx, db, siteID, ds)
	if err != nil {
		return nil, err
	}
	var ids []uuid.UUID
	for _, ps := range pagesOf {
		ids = append(ids, ps...)
	}
	paths, err := e.pagePaths(ctx, db, siteID, ids)
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		for _, p := range pagesOf[d.ID] {
			for _, path := range paths[p] {
				if !models.InSection(prefix, path) {
					out[d.ID] = path
				}
			}
		}
	}
	return out, nil
}

// draftPages are the pages each draft of ds belongs to: a page's own id; a
// content's pages, drafted and stored; a block's contents' pages.
func draftPages(ctx context.Context, db bun.IDB, siteID uuid.UUID, ds []*Draft) (map[uuid.UUID][]uuid.UUID, error) {
	out := map[uuid.UUID][]uuid.UUID{}
	blockContents := map[uuid.UUID][]uuid.UUID{}
	var contents []uuid.UUID
	for _, d := range ds {
		switch d.ItemType {
		case "pages":
			out[d.ID] = append(out[d.ID], d.ItemID)
		case "contents":
			out[d.ID] = append(out[d.ID], parseIDs(refsOf(d, "page_id"))...)
			contents = append(contents, d.ItemID)
		case "content-blocks":
			cs := parseIDs(refsOf(d, "content_id"))
			blockContents[d.ID] = cs
			contents = append(contents, cs...)
		}
	}
	// A block's locale draft names no content: the stored one is its.
	stored, err := localeBlockContents(ctx, db, siteID, ds)
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		if c, ok := stored[d.ItemID]; ok && d.Locale != "" {
			blockContents[d.ID] = append(blockContents[d.ID], c)
			contents = append(contents, c)
		}
	}
	pagesOfContent, err := contentPages(ctx, db, siteID, contents)
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		if d.ItemType == "contents" {
			out[d.ID] = append(out[d.ID], pagesOfContent[d.ItemID]...)
		}
		for _, c := range blockContents[d.ID] {
			out[d.ID] = append(out[d.ID], pagesOfContent[c]...)
		}
	}
	return out, nil
}

// localeBlockContents are the stored contents of the blocks of ds's
// locale drafts, by block id (one query; none without such drafts).
func localeBlockContents(ctx context.Context, db bun.IDB, siteID uuid.UUID, ds []*Draft) (map[uuid.UUID]uuid.UUID, error) {
	var ids []uuid.UUID
	for _, d := range ds {
		if d.ItemType == "content-blocks" && d.Locale != "" {
			ids = append(ids, d.ItemID)
		}
	}
	out := map[uuid.UUID]uuid.UUID{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		ID      uuid.UUID `bun:"id"`
		Content uuid.UUID `bun:"content_id"`
	}
	if err := db.NewSelect().TableExpr("content_blocks").ColumnExpr("id, content_id").
		Where("site_id = ? AND id IN (?)", siteID, bun.In(ids)).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("contents of blocks: %w", err)
	}
	for _, r := range rows {
		out[r.ID] = r.Content
	}
	return out, nil
}

// contentPages are the pages of each content of ids: stored, and drafted
// when the content has a draft.
func contentPages(ctx context.Context, db bun.IDB, siteID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID][]uuid.UUID, error) {
	out := map[uuid.UUID][]uuid.UUID{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		ID      uuid.UUID `bun:"id"`
		Page    uuid.UUID `bun:"page_id"`
		Drafted *string   `bun:"drafted_page"`
	}
	err := db.NewSelect().TableExpr("contents AS c").
		Join("LEFT JOIN drafts AS d ON d.item_type = 'contents' AND d.item_id = c.id AND d.locale = ''").
		ColumnExpr("c.id, c.page_id, d.drafted ->> 'page_id' AS drafted_page").
		Where("c.site_id = ? AND c.id IN (?)", siteID, bun.In(ids)).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("pages of contents: %w", err)
	}
	for _, r := range rows {
		out[r.ID] = append(out[r.ID], r.Page)
		if r.Drafted != nil {
			out[r.ID] = append(out[r.ID], parseIDs([]string{*r.Drafted})...)
		}
	}
	return out, nil
}

// pagePaths are each page's stored path and drafted path.
func (e *Engine) pagePaths(ctx context.Context, db bun.IDB, siteID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID][]string, error) {
	out := map[uuid.UUID][]string{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		ID   uuid.UUID `bun:"id"`
		Path string    `bun:"path"`
	}
	if err := db.NewSelect().Table("pages").Column("id", "path").Where("site_id = ? AND id IN (?)", siteID, bun.In(ids)).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("paths of pages: %w", err)
	}
	for _, r := range rows {
		out[r.ID] = append(out[r.ID], r.Path)
	}
	drafted, err := e.DraftedPaths(ctx, db, siteID, ids)
	if err != nil {
		return nil, err
	}
	for id, p := range drafted {
		out[id] = append(out[id], p)
	}
	return out, nil
}

func parseIDs(ss []string) []uuid.UUID {
	var out []uuid.UUID
	for _, s := range ss {
		if id, err := uuid.Parse(s); err == nil {
			out = append(out, id)
		}
	}
	return out
}

// checkPublisher refuses, with the first draft outside the publisher's
// rights, a closure the revision's publisher (their membership now, read
// in the publishing transaction) may not publish.
func (e *Engine) checkPublisher(ctx context.Context, tx bun.IDB, rev *Revision, closure []*Draft) error {
	if rev.UserID == nil {
		return nil // the publisher's account is gone; they could when they asked
	}
	m, err := models.MembershipOf(ctx, tx, rev.SiteID, *rev.UserID)
	if models.IsNoRows(err) || (err == nil && !m.Role.Can(models.PermPublish)) {
		return &PublishError{Code: "forbidden", Message: "the publisher may no longer publish on this site"}
	}
	if err != nil || m.Role == models.RoleAdmin {
		return err
	}
	d, path, err := e.FirstOutside(ctx, tx, rev.SiteID, m.PathPrefix, closure)
	if err != nil || d == nil {
		return err
	}
	return &PublishError{Code: "forbidden", Message: fmt.Sprintf("draft %s (%s %s) is at %s, outside the publisher's section %s", d.ID, d.ItemType, d.ItemID, path, *m.PathPrefix),
		Meta: map[string]any{"draft": map[string]any{"type": "drafts", "id": d.ID.String()}}}
}

// FirstOutside is the first draft of closure (in its order) outside the
// section prefix, and the path that puts it there; nil when none is.
func (e *Engine) FirstOutside(ctx context.Context, db bun.IDB, siteID uuid.UUID, prefix *string, closure []*Draft) (*Draft, string, error) {
	outside, err := e.OutsideSection(ctx, db, siteID, prefix, closure)
	if err != nil {
		return nil, "", err
	}
	for _, d := range closure {
		if path, ok := outside[d.ID]; ok {
			return d, path, nil
		}
	}
	return nil, "", nil
}

// CheckPublishable is the API's check of a publish, in the transaction
// that reserves it: the listed drafts' publication closure (locked) must
// lie in the caller's section; the refusal (403) names the first draft
// that does not.
func (e *Engine) CheckPublishable(ctx context.Context, tx bun.Tx, siteID uuid.UUID, prefix *string, ids []uuid.UUID) error {
	if prefix == nil {
		return nil
	}
	listed, err := Drafts(ctx, tx, siteID, ids, true)
	if err != nil {
		return err
	}
	all, err := Closure(ctx, tx, siteID, listed, Publication, true)
	if err != nil {
		return err
	}
	d, path, err := e.FirstOutside(ctx, tx, siteID, prefix, all)
	if err != nil || d == nil {
		return err
	}
	return models.ForbiddenDraft(models.PermPublish, d.ID.String(), d.ItemType, d.ItemID.String(),
		fmt.Sprintf("it is at %s, outside your section %s", path, *prefix))
}

// ViewOutside is the path that puts the record v (as stored and as
// drafted) outside the section prefix, "" when it lies inside: the check
// of a section's author's or editor's write, made in its transaction.
func (e *Engine) ViewOutside(ctx context.Context, db bun.IDB, siteID uuid.UUID, prefix *string, v *View) (string, error) {
	if prefix == nil || v == nil {
		return "", nil
	}
	id := v.Row.ID()
	stored := &Draft{ID: uuid.New(), ItemType: v.Kind.Type, ItemID: id, Drafted: v.Row}
	drafted := &Draft{ID: uuid.New(), ItemType: v.Kind.Type, ItemID: id, Drafted: v.Drafted()}
	outside, err := e.OutsideSection(ctx, db, siteID, prefix, []*Draft{stored, drafted})
	if err != nil {
		return "", err
	}
	for _, d := range []*Draft{stored, drafted} {
		if path, ok := outside[d.ID]; ok {
			return path, nil
		}
	}
	return "", nil
}
