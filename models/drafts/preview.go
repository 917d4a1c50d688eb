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
	// byID are Drafts by id: a read under the preview lays the set's own
	// decoded draft over a row (loadPreview) rather than decoding it again.
	byID map[uuid.UUID]*Draft
	// extra are the set's drafts not staged in the release (the closure
	// pulls them in): SQL names the set as the release's drafts and these
	// (inSet), so a statement carries a short array, not the whole set.
	extra []string
	// extraIDs are extra as uuids (a prepared statement's uuid[]).
	extraIDs []uuid.UUID
	// selfContained: see SelfContained.
	selfContained bool
	// hasLocales: the set holds locale drafts (a read under it then reads
	// each record's, readPreviewQuery).
	hasLocales bool
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

// PreviewSetOf tells whether ctx carries a preview and whether its set is
// self-contained (SelfContained): api's read cache keeps a preview's
// answer only then, since a kept set that is not self-contained may serve
// for previewTTL after a live row changed (its answer is fresh only that
// long, not until the next change is notified).
func PreviewSetOf(ctx context.Context) (previewed, selfContained bool) {
	if p := previewOf(ctx); p != nil {
		return true, p.selfContained
	}
	return false, false
}

// PreviewIdentity names the preview ctx carries ("" for none): reads that
// share a computation (api's shared reads) must carry the same one, or a
// read could be answered through another's older set.
func PreviewIdentity(ctx context.Context) string {
	if p := previewOf(ctx); p != nil {
		return fmt.Sprintf("%p", p)
	}
	return ""
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
	p := &Preview{Release: r.ID, SiteID: siteID, byID: map[uuid.UUID]*Draft{}}
	if len(staged) > 0 {
		set, err := e.publication(ctx, db, siteID, staged, false)
		if err != nil {
			return nil, fmt.Errorf("preview release: %w", err)
		}
		p.Drafts = set.Drafts
	}
	for _, d := range p.Drafts {
		p.byID[d.ID] = d
		p.hasLocales = p.hasLocales || d.Locale != ""
		if d.ReleaseID == nil || *d.ReleaseID != r.ID {
			p.extra = append(p.extra, d.ID.String())
			p.extraIDs = append(p.extraIDs, d.ID)
		}
	}
	p.selfContained = selfContained(p)
	return p, nil
}

// Has tells whether d is in the preview's set.
func (p *Preview) Has(d *Draft) bool { return d != nil && p.byID[d.ID] != nil }

// only is d when p is nil or has it; nil otherwise.
func (p *Preview) only(d *Draft) *Draft {
	if p == nil || p.Has(d) {
		return d
	}
	return nil
}

// onlyLocales are the drafts of ds (locale drafts by tag) that p has, all
// of them when p is nil: under a preview in German, the set's German
// drafts show and no other German draft does.
func (p *Preview) onlyLocales(ds map[string]*Draft) map[string]*Draft {
	if p == nil || len(ds) == 0 {
		return ds
	}
	var out map[string]*Draft
	for tag, d := range ds {
		if p.Has(d) {
			if out == nil {
				out = map[string]*Draft{}
			}
			out[tag] = d
		}
	}
	return out
}

// draftsOfItemsAllLocales are the pending drafts of items of itemType, in
// one query: the shared ones by item, and the locale drafts by item and
// tag (a drafted list lays both, as LoadMany does).
func draftsOfItemsAllLocales(ctx context.Context, db bun.IDB, itemType string, ids []uuid.UUID) (map[uuid.UUID]*Draft, map[uuid.UUID]map[string]*Draft, error) {
	shared, locales := map[uuid.UUID]*Draft{}, map[uuid.UUID]map[string]*Draft{}
	if len(ids) == 0 {
		return shared, locales, nil
	}
	var ds []*Draft
	if err := db.NewSelect().Model(&ds).Where("d.item_type = ? AND d.item_id IN (?) /* any locale */", itemType, bun.In(ids)).Scan(ctx); err != nil {
		return nil, nil, fmt.Errorf("load drafts of %s: %w", itemType, err)
	}
	for _, d := range ds {
		if d.Locale == "" {
			shared[d.ItemID] = d
			continue
		}
		if locales[d.ItemID] == nil {
			locales[d.ItemID] = map[string]*Draft{}
		}
		locales[d.ItemID][d.Locale] = d
	}
	return shared, locales, nil
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
	v.LocaleDrafts = p.onlyLocales(v.LocaleDrafts)
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
  FROM content_blocks b LEFT JOIN drafts d ON d.site_id = b.site_id AND d.item_type = 'content-blocks' AND d.item_id = b.id AND d.locale = ''
    AND ` + inSet("d", "?4", "?5") + `
  WHERE b.site_id = ?0 AND b.trashed_at IS NULL AND (b.published_at IS NOT NULL OR d.event = 'create')
    AND d.event IS DISTINCT FROM 'delete'
    AND (b.content_id IN (?1) OR b.id IN (SELECT item_id FROM drafts
      WHERE site_id = ?0 AND item_type = 'content-blocks' AND drafted_parent IN (?1) AND locale = '' AND ` + inSet("drafts", "?4", "?5") + `)))`

// previewHyperlinks is HyperlinksOfBlocks's CTE under a preview: a
// block's links are those of its body as the set drafts it.
var previewHyperlinks = `WITH b AS (SELECT h.id, h.linkable_id AS parent, h.created_at AS pos FROM hyperlinks h
  LEFT JOIN drafts d ON d.site_id = h.site_id AND d.item_type = 'content-blocks' AND d.item_id = h.linkable_id AND d.locale = ''
    AND d.event IN ('create', 'update') AND ` + inSet("d", "?4", "?5") + `
  WHERE h.site_id = ?0 AND h.linkable_id IN (?1) AND CASE WHEN d.id IS NULL THEN h.draft_id IS NULL ELSE h.draft_id = d.id END)`

// ReleaseStamp is what a kept preview of a self-contained set
// (Preview.SelfContained) depends on: the release's row. Its version moves
// with every stage, unstage and change of the release, its drafts_version
// with every write of a draft staged in it (before or after the write; a
// trigger in the writing transaction, migration 20261201020000), and its
// status with publishing and cancelling.
type ReleaseStamp struct {
	Version       int    `bun:"version"`
	DraftsVersion int64  `bun:"drafts_version"`
	Status        string `bun:"status"`
}

// ReleaseStamps are the stamps of the site's releases among ids, by id (a
// release the site does not have is left out): one statement for the
// preview reads of a moment (api's previews batch them).
func ReleaseStamps(ctx context.Context, db bun.IDB, siteID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]ReleaseStamp, error) {
	var rows []struct {
		ID uuid.UUID `bun:"id,type:uuid"`
		ReleaseStamp
	}
	err := db.NewRaw(`SELECT r.id, r.version, v.version AS drafts_version, r.status FROM releases r
  JOIN release_draft_versions v ON v.release_id = r.id WHERE r.site_id = ? AND r.id IN (?)`,
		siteID, bun.In(ids)).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("release stamps: %w", err)
	}
	out := make(map[uuid.UUID]ReleaseStamp, len(rows))
	for _, r := range rows {
		out[r.ID] = r.ReleaseStamp
	}
	return out, nil
}

// SelfContained tells whether the set depends on the release's own drafts
// only, so that ReleaseStamp alone tells whether it still holds: every
// draft of the set is staged in the release (the closure pulled in none
// from elsewhere) and none deletes. Why that suffices: a create or update
// pulls in the create drafts of what it points to (Closure); with none
// pulled in, what it points to is live or the release's own, and a live
// record never gains a create draft, so only a write of the release's
// drafts (which moves drafts_version) can change the set. A delete pulls
// in the drafts of its children, which anyone may draft at any time
// without touching the release, and a draft pulled in from elsewhere
// changes without touching it either: those sets are checked against the
// whole site (SiteDraftsStampOf).
func (p *Preview) SelfContained() bool { return p.selfContained }

func selfContained(p *Preview) bool {
	if len(p.extra) > 0 {
		return false
	}
	for _, d := range p.Drafts {
		if d.Event == EventDelete {
			return false
		}
	}
	return true
}

// SiteDraftsStamp tells whether a preview that is not self-contained still
// holds: the count, latest change and versions of the site's drafts (any
// draft written, published or reverted moves one).
type SiteDraftsStamp struct {
	Count    int64 `bun:"n"`
	Latest   int64 `bun:"latest"`
	Versions int64 `bun:"versions"`
}

// SiteDraftsStampOf is the stamp of the site's drafts (an aggregate over
// all of them: only previews that are not self-contained pay it).
func SiteDraftsStampOf(ctx context.Context, db bun.IDB, siteID uuid.UUID) (SiteDraftsStamp, error) {
	var s SiteDraftsStamp
	err := db.NewRaw(`SELECT count(*) AS n, coalesce((extract(epoch FROM max(updated_at)) * 1000000)::bigint, 0) AS latest,
    coalesce(sum(version), 0) AS versions FROM drafts WHERE site_id = ?`, siteID).Scan(ctx, &s)
	if err != nil {
		return s, fmt.Errorf("drafts stamp: %w", err)
	}
	return s, nil
}
