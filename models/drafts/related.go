package drafts

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/pressroom/pressroom/models"
)

// Reads of the records other records make up (a content's content-blocks,
// a block's hyperlinks), one page per parent in one bounded query, and of
// the drafted state the validators judge.

// Ranked is a row of a per-parent page query (models.Ranked).
type Ranked = models.Ranked

// rankPages is models.RankPages: inner defines the CTE b over the site ?0
// and the parents ?1.
func rankPages(ctx context.Context, db bun.IDB, inner string, siteID uuid.UUID, parents []uuid.UUID, w models.Window, extra ...any) ([]Ranked, error) {
	return models.RankPages(ctx, db, inner, siteID, parents, w, extra...)
}

// BlocksOfContents ranks the live blocks of each content (published;
// trashed ones never), or with drafted the blocks whose drafted content is
// the content, by drafted position: unpublished creates and blocks drafted
// for deletion included, as View.Drafted shows them.
func BlocksOfContents(ctx context.Context, db bun.IDB, siteID uuid.UUID, contents []uuid.UUID, drafted bool, w models.Window) ([]Ranked, error) {
	q := `WITH b AS (SELECT b.id, b.content_id AS parent, b.position AS pos FROM content_blocks b
  WHERE b.site_id = ?0 AND b.content_id IN (?1) AND b.published_at IS NOT NULL AND b.trashed_at IS NULL)`
	if p := previewOf(ctx); drafted && p != nil {
		q = previewBlocks
	} else if drafted {
		// The row's values, with a pending update's (or delete's) drafted
		// ones laid over them, as View.Drafted does.
		q = `WITH b AS (SELECT b.id,
    COALESCE(CASE WHEN d.event <> 'create' THEN (d.drafted ->> 'content_id')::uuid END, b.content_id) AS parent,
    COALESCE(CASE WHEN d.event <> 'create' THEN (d.drafted ->> 'position')::int END, b.position) AS pos
  FROM content_blocks b LEFT JOIN drafts d ON d.site_id = b.site_id AND d.item_type = 'content-blocks' AND d.item_id = b.id AND d.locale = ''
  WHERE b.site_id = ?0 AND (b.content_id IN (?1) OR b.id IN (SELECT item_id FROM drafts
    WHERE site_id = ?0 AND item_type = 'content-blocks' AND drafted_parent IN (?1) AND locale = '')))`
	}
	rows, err := rankPages(ctx, db, q, siteID, contents, w, previewArgs(ctx, drafted)...)
	if err != nil {
		return nil, fmt.Errorf("content-blocks of contents: %w", err)
	}
	return rows, nil
}

// HyperlinksOfBlocks ranks the hyperlinks of each block's live body, or
// with drafted those of its drafted bodies, locale by locale: a body
// with a pending create or update draft of its locale (the shared draft
// for the base, a create's for every locale) shows the links recorded
// under that draft, any other its live links (a block drafted for
// deletion keeps its live body's).
func HyperlinksOfBlocks(ctx context.Context, db bun.IDB, siteID uuid.UUID, blocks []uuid.UUID, drafted bool, w models.Window) ([]Ranked, error) {
	q := `WITH b AS (SELECT h.id, h.linkable_id AS parent, h.created_at AS pos FROM hyperlinks h
  WHERE h.site_id = ?0 AND h.linkable_id IN (?1) AND h.draft_id IS NULL)`
	if p := previewOf(ctx); drafted && p != nil {
		q = previewHyperlinks
	} else if drafted {
		// One draft per item and locale (drafts_item_type_item_id_key).
		q = `WITH b AS (SELECT h.id, h.linkable_id AS parent, h.created_at AS pos FROM hyperlinks h
  WHERE h.site_id = ?0 AND h.linkable_id IN (?1) AND CASE
    WHEN h.draft_id IS NULL THEN NOT EXISTS (SELECT 1 FROM drafts d WHERE d.item_type = 'content-blocks' AND d.item_id = h.linkable_id
      AND d.locale = h.locale AND d.event IN ('create', 'update'))
    ELSE EXISTS (SELECT 1 FROM drafts d WHERE d.id = h.draft_id AND d.event IN ('create', 'update')) END)`
	}
	rows, err := rankPages(ctx, db, q, siteID, blocks, w, previewArgs(ctx, drafted)...)
	if err != nil {
		return nil, fmt.Errorf("hyperlinks of content-blocks: %w", err)
	}
	return rows, nil
}

// List loads one page of the site's pending drafts.
func List(ctx context.Context, db bun.IDB, siteID uuid.UUID, page models.Page) ([]*Draft, int64, error) {
	return models.List[*Draft](ctx, db, page, "d.site_id = ?", siteID)
}

// ListViews loads one page of the site's records of kind k: the live ones,
// or with withDraft every record as drafted (unpublished creates included),
// each with its pending draft.
func ListViews(ctx context.Context, db bun.IDB, k *Kind, siteID uuid.UUID, withDraft bool, page models.Page) ([]*View, int64, error) {
	var raws []json.RawMessage
	sel := db.NewSelect().TableExpr(k.Table+" AS t").ColumnExpr("to_jsonb(t)").Where("t.site_id = ?", siteID)
	p := previewOf(ctx)
	if !withDraft {
		sel = sel.Where("t.published_at IS NOT NULL")
	} else if p != nil {
		// A release's preview: the live records and those it creates,
		// without those it deletes.
		sel = sel.Where("(t.published_at IS NOT NULL OR t.id = ANY(?::uuid[]))", pgdialect.Array(p.items(k.Type, EventCreate))).
			Where("NOT t.id = ANY(?::uuid[])", pgdialect.Array(p.items(k.Type, EventDelete)))
	}
	total, err := page(sel).ScanAndCount(ctx, &raws)
	if err != nil {
		return nil, 0, err
	}
	views := make([]*View, len(raws))
	ids := make([]uuid.UUID, len(raws))
	for i, raw := range raws {
		r, err := decodeRow(raw)
		if err != nil {
			return nil, 0, err
		}
		views[i], ids[i] = &View{Kind: k, Row: r}, r.ID()
	}
	if !withDraft {
		return views, total, nil
	}
	ds, locales, err := draftsOfItemsAllLocales(ctx, db, k.Type, ids)
	if err != nil {
		return nil, 0, err
	}
	for _, v := range views {
		v.Draft, v.LocaleDrafts = p.only(ds[v.Row.ID()]), p.onlyLocales(locales[v.Row.ID()])
	}
	return views, total, nil
}

// refState tells whether the site has the record id of the type typ
// (drafted creates count), and whether that record is drafted for
// deletion.
func refState(ctx context.Context, db bun.IDB, siteID uuid.UUID, typ string, id uuid.UUID) (exists, deleted bool, err error) {
	var found struct {
		Exists  bool `bun:"e"`
		Deleted bool `bun:"d"`
	}
	err = db.NewRaw(`SELECT EXISTS (SELECT 1 FROM ? WHERE id = ?1 AND site_id = ?2) AS e,
  EXISTS (SELECT 1 FROM drafts WHERE item_type = ?3 AND item_id = ?1 AND site_id = ?2 AND locale = '' AND event = 'delete') AS d`, bun.Ident(tableOf(typ)), id, siteID, typ).Scan(ctx, &found)
	return found.Exists, found.Deleted, err
}

// pageTypeTaken tells whether another page of the site (not except) has
// the special page type pt as drafted: a page counts by its drafted type (a
// create draft's row is in pages already; an update draft may change the
// type), and one drafted for deletion does not count. Two writers could
// both find the type free, so the check takes a per-site lock held to the
// end of the caller's transaction (db must be that transaction).
func pageTypeTaken(ctx context.Context, db bun.IDB, siteID uuid.UUID, pt string, except *uuid.UUID) (bool, error) {
	if _, err := db.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('pressroom.page_types:' || ?::text, 0))", siteID); err != nil {
		return false, fmt.Errorf("lock special page types: %w", err)
	}
	q := db.NewSelect().TableExpr("pages AS p").
		Join("LEFT JOIN drafts AS d ON d.item_type = 'pages' AND d.item_id = p.id AND d.locale = ''").
		Where("p.site_id = ?", siteID).
		Where("COALESCE(d.drafted->>'page_type', p.page_type) = ?", pt).
		Where("d.event IS DISTINCT FROM 'delete'")
	if except != nil {
		q = q.Where("p.id <> ?", *except)
	}
	return q.Exists(ctx)
}

// pageAt returns another page of the site (not self; nil on a create)
// that, as drafted, sits under parent (nil: at the root) with slug: the
// page this write drafts there would share its path. A page counts by its
// drafted place (an update draft may move it; a page without a draft is
// where it lives) and one drafted for deletion does not count: publishing
// it frees the path (and a publish that frees nothing is refused by
// pages_live_path_excl and Publish's own check). Two writers could both
// find the place free, so the caller (pathFree) holds the lock of the
// site and slug to the end of its transaction (lockSlugs; db must be that
// transaction) before this reads; nil when the place is free.
func pageAt(ctx context.Context, db bun.IDB, siteID uuid.UUID, self *uuid.UUID, parent *uuid.UUID, slug string) (*uuid.UUID, error) {
	except := uuid.Nil
	if self != nil {
		except = *self
	}
	// Equality on the parent keeps both halves on an index (pages by
	// site, parent and slug; drafts by drafted parent); IS NULL for a root.
	liveParent, draftedParent := "p.parent_id IS NULL", "d.drafted_parent IS NULL"
	args := []any{siteID, slug, except}
	if parent != nil {
		liveParent, draftedParent = "p.parent_id = ?3", "d.drafted_parent = ?3"
		args = append(args, *parent)
	}
	var ids []uuid.UUID
	err := db.NewRaw(`SELECT p.id FROM pages p
    LEFT JOIN drafts d ON d.item_type = 'pages' AND d.item_id = p.id AND d.locale = ''
  WHERE p.site_id = ?0 AND p.slug = ?1 AND `+liveParent+` AND p.id <> ?2
    AND (d.id IS NULL OR (d.event <> 'delete' AND d.drafted ->> 'slug' = ?1 AND `+draftedParent+`))
UNION ALL
SELECT d.item_id FROM drafts d
  WHERE d.site_id = ?0 AND d.item_type = 'pages' AND d.locale = '' AND d.event <> 'delete' AND d.item_id <> ?2
    AND d.drafted ->> 'slug' = ?1 AND `+draftedParent+`
LIMIT 1`, args...).Scan(ctx, &ids)
	if err != nil && !models.IsNoRows(err) {
		return nil, fmt.Errorf("find a page at the drafted path: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return &ids[0], nil
}
