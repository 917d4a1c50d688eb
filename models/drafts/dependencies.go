package drafts

import (
	"context"
	"fmt"
	"sort"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/coalesce"
	"github.com/pressroom/pressroom/models"
)

// A draft's relationships publication-dependencies, reversion-dependencies
// and hyperlinks (DESIGN.md §3): what publishing or reverting it would pull
// in, and what links to its item. Every rendered draft carries them, so
// they are read for many drafts at once (a list, or the concurrent reads
// of a DependencyLoader), a few queries whatever their number.

// Dependencies returns, for each draft of ds, the drafts its closure in
// direction dir pulls in besides itself (what Closure of it alone would
// add), sorted by id. The drafts are walked together, one step per round
// for every frontier, so the query count follows the depth, not the
// number of drafts.
func Dependencies(ctx context.Context, db bun.IDB, siteID uuid.UUID, ds []*Draft, dir Direction) (map[uuid.UUID][]*Draft, error) {
	direct := map[uuid.UUID][]*Draft{} // each walked draft's direct pulls
	known := map[uuid.UUID]*Draft{}
	var frontier []*Draft
	for _, d := range ds {
		if known[d.ID] == nil {
			known[d.ID] = d
			frontier = append(frontier, d)
		}
	}
	for len(frontier) > 0 {
		es, err := step(ctx, db, siteID, frontier, dir, false)
		if err != nil {
			return nil, err
		}
		for _, d := range frontier {
			direct[d.ID] = nil
		}
		var next []*Draft
		for _, e := range es {
			to := known[e.to.ID]
			if to == nil {
				to = e.to
				known[to.ID] = to
				next = append(next, to)
			}
			direct[e.from] = append(direct[e.from], to)
		}
		// The drafts walked bound the work: one closure is at most
		// MaxClosure drafts (ErrTooLarge, as Closure answers).
		if len(known) > MaxClosure*len(ds) {
			return nil, ErrTooLarge
		}
		frontier = next
	}
	out := make(map[uuid.UUID][]*Draft, len(ds))
	for _, d := range ds {
		list, err := reach(d, direct)
		if err != nil {
			return nil, err
		}
		out[d.ID] = list
	}
	return out, nil
}

// reach is what d reaches through direct, without d, sorted by id.
func reach(d *Draft, direct map[uuid.UUID][]*Draft) ([]*Draft, error) {
	seen := map[uuid.UUID]bool{d.ID: true}
	stack := []*Draft{d}
	list := []*Draft{}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, y := range direct[x.ID] {
			if !seen[y.ID] {
				seen[y.ID] = true
				list = append(list, y)
				stack = append(stack, y)
			}
		}
		if len(list) >= MaxClosure {
			return nil, ErrTooLarge
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].ID.String() < list[j].ID.String() })
	return list, nil
}

// HyperlinksToDrafts ranks, for each draft (by id, of the site), the links
// HyperlinksTo lists for it, oldest first, and keeps those at (offset,
// offset+limit] (and rank 1, for the totals): one bounded query for all.
// A locale's draft (a German slug) concerns the links of bodies in its
// locale only (they link its paths); the shared draft (a move, a delete)
// the links of every locale.
func HyperlinksToDrafts(ctx context.Context, db bun.IDB, siteID uuid.UUID, draftIDs []uuid.UUID, w models.Window) ([]Ranked, error) {
	if len(draftIDs) == 0 {
		return nil, nil
	}
	q := `WITH b AS (SELECT h.id, t.id AS parent, h.created_at AS pos FROM drafts t /* by id: any locale */ JOIN hyperlinks h
    ON h.site_id = t.site_id AND h.linked_type = t.item_type AND h.linked_id = t.item_id AND h.linkable_id <> t.item_id
    AND (h.draft_id IS NULL OR h.draft_id <> t.id) AND (t.locale = '' OR h.locale = t.locale)
  WHERE t.site_id = ?0 AND t.id IN (?1))`
	rows, err := rankPages(ctx, db, q, siteID, draftIDs, w)
	if err != nil {
		return nil, fmt.Errorf("hyperlinks to drafts: %w", err)
	}
	return rows, nil
}

// DraftLinks is one draft's to-many linkage: its dependencies both ways
// (sorted by id) and the first page of the hyperlinks to its item.
type DraftLinks struct {
	Publication, Reversion []*Draft
	Hyperlinks             []uuid.UUID
	HyperlinksTotal        int
}

// DependencyLoader reads DraftLinks, batching the drafts that concurrent
// requests render (package coalesce): a page read with include=draft, the
// hot path, shares its few queries with the reads that arrive with it.
type DependencyLoader struct {
	batch coalesce.Batcher[*Draft, *DraftLinks]
}

// NewDependencyLoader returns the batched reader through db; each draft's
// hyperlinks are read up to limit.
func NewDependencyLoader(db bun.IDB, limit int) *DependencyLoader {
	l := &DependencyLoader{}
	l.batch.Fetch = func(ctx context.Context, scope string, ds []*Draft) (map[*Draft]*DraftLinks, error) {
		siteID, err := uuid.Parse(scope)
		if err != nil {
			return nil, fmt.Errorf("batched dependencies: bad scope %q: %w", scope, err)
		}
		return LinksOf(ctx, db, siteID, ds, limit)
	}
	return l
}

// Load returns d's links, read with those of the drafts asked for meanwhile.
func (l *DependencyLoader) Load(ctx context.Context, d *Draft) (*DraftLinks, error) {
	return l.batch.Get(ctx, d.SiteID.String(), d)
}

// LinksOf reads the DraftLinks of drafts of one site: both closures and
// the first limit hyperlinks to each.
func LinksOf(ctx context.Context, db bun.IDB, siteID uuid.UUID, ds []*Draft, limit int) (map[*Draft]*DraftLinks, error) {
	pub, err := Dependencies(ctx, db, siteID, ds, Publication)
	if err != nil {
		return nil, err
	}
	rev, err := Dependencies(ctx, db, siteID, ds, Reversion)
	if err != nil {
		return nil, err
	}
	ids := make([]uuid.UUID, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	ranked, err := HyperlinksToDrafts(ctx, db, siteID, ids, models.Window{Limit: limit})
	if err != nil {
		return nil, err
	}
	byDraft := make(map[uuid.UUID]*DraftLinks, len(ds))
	out := make(map[*Draft]*DraftLinks, len(ds))
	for _, d := range ds {
		dl := byDraft[d.ID]
		if dl == nil {
			dl = &DraftLinks{Publication: pub[d.ID], Reversion: rev[d.ID], Hyperlinks: []uuid.UUID{}}
			byDraft[d.ID] = dl
		}
		out[d] = dl
	}
	for _, r := range ranked {
		if dl := byDraft[r.Parent]; dl != nil {
			dl.HyperlinksTotal = r.Total
			dl.Hyperlinks = append(dl.Hyperlinks, r.ID)
		}
	}
	return out, nil
}
