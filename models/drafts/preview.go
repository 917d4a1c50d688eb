package drafts

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/pressroom/pressroom/models"
)

// A release's preview (docs/releases.md, "Preview"): reads of the live
// site with the release's publication set laid over it, and no other
// draft. The set is computed by publication, the function Publish and Plan
// run, so a preview shows what publishing the release would make live.
// Every drafted read (LoadMany, ListViews, BlocksOfContents,
// HyperlinksOfBlocks, DraftedPaths) honours the preview its context
// carries (WithPreview): only the set's drafts are laid over the rows, a
// record the set creates is there, one it deletes is gone.

// Preview is a release's publication set, as reads lay it over the site.
type Preview struct {
	Release uuid.UUID
	SiteID  uuid.UUID
	// Drafts are the staged drafts and their publication closure.
	Drafts []*Draft
	byID   map[uuid.UUID]bool
	// extra are the set's drafts not staged in the release (the closure
	// pulls them in): SQL names the set as the release's drafts and these
	// (inSet), so a statement carries a short array, not the whole set.
	extra []string
	// extraIDs are extra as uuids (a prepared statement's uuid[]).
	extraIDs []uuid.UUID
}

type previewKey struct{}

// WithPreview returns ctx carrying p: the drafted reads under it show p.
func WithPreview(ctx context.Context, p *Preview) context.Context {
	return context.WithValue(ctx, previewKey{}, p)
}

// previewOf is the preview ctx carries (nil: none).
func previewOf(ctx context.Context) *Preview {
	p, _ := ctx.Value(previewKey{}).(*Preview)
	return p
}

// PreviewReleaseOf is the release of the preview ctx carries, if any.
func PreviewReleaseOf(ctx context.Context) (uuid.UUID, bool) {
	if p := previewOf(ctx); p != nil {
		return p.Release, true
	}
	return uuid.Nil, false
}

// DraftSetOf is the set of the preview ctx carries (nil: none), for the
// SQL of models that reads drafts (filter[user]: inSet's condition).
func DraftSetOf(ctx context.Context) *models.DraftSet {
	if p := previewOf(ctx); p != nil {
		return &models.DraftSet{Release: p.Release, Extra: p.extra}
	}
	return nil
}

// Previewing tells whether ctx carries a preview.
func Previewing(ctx context.Context) bool { return previewOf(ctx) != nil }

// PreviewRelease computes the preview of the site's release id (NotFound
// "release" without it): its staged drafts and their publication closure,
// as Publish would apply them now.
func (e *Engine) PreviewRelease(ctx context.Context, db bun.IDB, siteID, id uuid.UUID) (*Preview, error) {
	r, err := FindRelease(ctx, db, siteID, id)
	if err != nil {
		return nil, err
	}
	staged, err := StagedDrafts(ctx, db, siteID, r.ID, false)
	if err != nil {
		return nil, err
	}
	p := &Preview{Release: r.ID, SiteID: siteID, byID: map[uuid.UUID]bool{}}
	if len(staged) > 0 {
		set, err := e.publication(ctx, db, siteID, staged, false)
		if err != nil {
			return nil, fmt.Errorf("preview release: %w", err)
		}
		p.Drafts = set.Drafts
	}
	for _, d := range p.Drafts {
		p.byID[d.ID] = true
		if d.ReleaseID == nil || *d.ReleaseID != r.ID {
			p.extra = append(p.extra, d.ID.String())
			p.extraIDs = append(p.extraIDs, d.ID)
		}
	}
	return p, nil
}

// Has tells whether d is in the preview's set.
func (p *Preview) Has(d *Draft) bool { return d != nil && p.byID[d.ID] }

// only is d when p is nil or has it; nil otherwise.
func (p *Preview) only(d *Draft) *Draft {
	if p == nil || p.Has(d) {
		return d
	}
	return nil
}

// items are the ids (as text) of the records of typ whose drafts of event
// are in the set.
func (p *Preview) items(typ, event string) []string {
	out := []string{}
	for _, d := range p.Drafts {
		if d.ItemType == typ && d.Event == event {
			out = append(out, d.ItemID.String())
		}
	}
	return out
}

// setArgs are the arguments inSet names: the release and the extra drafts.
func (p *Preview) setArgs() []any { return []any{p.Release, pgdialect.Array(p.extra)} }

// inSet is the SQL condition that the draft alias d is in the set, with
// the release and the extra drafts as the parameters rel and extra. (The
// set is the staged drafts when computed; a stage or unstage since moves
// the release's version, and the API computes the set again.)
func inSet(d, rel, extra string) string {
	return "(" + d + ".release_id = " + rel + "::uuid OR " + d + ".id = ANY(" + extra + "::uuid[]))"
}

// view is v as the preview shows it, or nil when the preview has no such
// record: a draft not in the set is left off (the live row, or nothing for
// a record never published), a record the set deletes is gone.
func (p *Preview) view(v *View) *View {
	if !p.Has(v.Draft) {
		v.Draft = nil
	}
	if v.Draft == nil && !v.Row.Live() {
		return nil
	}
	if v.Draft != nil && v.Draft.Event == EventDelete {
		return nil
	}
	// v.DraftedPath is the set's (readPreviewQuery walks the set's drafts only).
	return v
}

// previewArgs are the extra arguments of a per-parent page query under a
// preview: ?4 and ?5, the set (inSet).
func previewArgs(ctx context.Context, drafted bool) []any {
	if p := previewOf(ctx); drafted && p != nil {
		return p.setArgs()
	}
	return nil
}

// previewBlocks is BlocksOfContents's CTE under a preview (?4 the set):
// live blocks and those the set creates, with the set's updates laid over
// them, without those it deletes.
var previewBlocks = `WITH b AS (SELECT b.id,
    COALESCE(CASE WHEN d.event = 'update' THEN (d.drafted ->> 'content_id')::uuid END, b.content_id) AS parent,
    COALESCE(CASE WHEN d.event = 'update' THEN (d.drafted ->> 'position')::int END, b.position) AS pos
  FROM content_blocks b LEFT JOIN drafts d ON d.site_id = b.site_id AND d.item_type = 'content-blocks' AND d.item_id = b.id
    AND ` + inSet("d", "?4", "?5") + `
  WHERE b.site_id = ?0 AND b.trashed_at IS NULL AND (b.published_at IS NOT NULL OR d.event = 'create')
    AND d.event IS DISTINCT FROM 'delete'
    AND (b.content_id IN (?1) OR b.id IN (SELECT item_id FROM drafts
      WHERE site_id = ?0 AND item_type = 'content-blocks' AND drafted_parent IN (?1) AND ` + inSet("drafts", "?4", "?5") + `)))`

// previewHyperlinks is HyperlinksOfBlocks's CTE under a preview: a
// block's links are those of its body as the set drafts it.
var previewHyperlinks = `WITH b AS (SELECT h.id, h.linkable_id AS parent, h.created_at AS pos FROM hyperlinks h
  LEFT JOIN drafts d ON d.site_id = h.site_id AND d.item_type = 'content-blocks' AND d.item_id = h.linkable_id
    AND d.event IN ('create', 'update') AND ` + inSet("d", "?4", "?5") + `
  WHERE h.site_id = ?0 AND h.linkable_id IN (?1) AND CASE WHEN d.id IS NULL THEN h.draft_id IS NULL ELSE h.draft_id = d.id END)`

// PreviewStamp tells whether a preview computed earlier still holds: the
// release's version (staging moves it) and status, and the count, latest
// change and versions of the site's drafts (any draft written, published
// or reverted moves one).
type PreviewStamp struct {
	Version  int    `bun:"version"`
	Status   string `bun:"status"`
	Count    int64  `bun:"n"`
	Latest   int64  `bun:"latest"`
	Versions int64  `bun:"versions"`
}

// StampOf is the stamp of the site's release id: NotFound("release")
// without it.
func StampOf(ctx context.Context, db bun.IDB, siteID, id uuid.UUID) (PreviewStamp, error) {
	var s PreviewStamp
	err := db.NewRaw(`SELECT rl.version, rl.status, d.n, d.latest, d.versions FROM releases rl,
  LATERAL (SELECT count(*) AS n, coalesce((extract(epoch FROM max(updated_at)) * 1000000)::bigint, 0) AS latest,
    coalesce(sum(version), 0) AS versions FROM drafts WHERE site_id = rl.site_id) d
WHERE rl.id = ? AND rl.site_id = ?`, id, siteID).Scan(ctx, &s)
	if models.IsNoRows(err) {
		return s, models.NotFound("release")
	}
	if err != nil {
		return s, fmt.Errorf("preview stamp: %w", err)
	}
	return s, nil
}
