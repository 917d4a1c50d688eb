package drafts

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
)

// Plan is a dry run of a publish or a rollback (POST /publish-plans): what
// the POST /revisions of the same body would apply, in order, and why it
// would be refused, computed by the code that publishes (Engine.publication,
// the refusals of Reserve) or reverts (Engine.reversion) without locking
// or changing anything.
type Plan struct {
	// Steps are the records in the order they would be applied (a
	// rollback: the order its versions are written in).
	Steps []PlanStep
	// Listed counts the drafts asked for; the rest of Steps the closure
	// pulled in. 0 for a rollback.
	Listed int
	// BrokenLinks are links from content to pages the publish would
	// delete or move.
	BrokenLinks []BrokenLink
	// Conflicts are why the POST would be refused, one per record: what it
	// answers 409 or 412 (a draft held by another revision, a stale
	// meta.version; for a rollback, records changed since or a revision not
	// published), or a dependency held by another revision, which makes an
	// immediate publish fail. Each error's Meta names the record.
	Conflicts models.Errors
}

// PlanStep is one step of a plan: a draft published, or (Draft nil) a
// record a rollback restores.
type PlanStep struct {
	Draft    *Draft
	ItemType string
	ItemID   uuid.UUID
	Event    string
	// Locale is the locale whose values the step changes ("": shared and
	// the base locale): the draft's, or the reverted version's.
	Locale string
	// Group is shared by the drafts of one dependency cycle (records that
	// point at each other are applied together); every other draft has a
	// group of its own. Groups count from 1 in step order. Every step of
	// a rollback is in group 1: it restores everything together.
	Group int
}

// BrokenLink is a link from a content block's body (live, or a drafted
// body when DraftID is set) to a page the publish deletes (NewPath "") or
// moves.
type BrokenLink struct {
	Hyperlink
	OldPath, NewPath string
}

// Plan computes the publish plan of the drafts ids of the site, at the
// versions want gives them (nil: any), as POST /revisions lists them. An
// unknown draft is 404 at /data/relationships/drafts/data/<i>/id, as for a
// revision; the other refusals of Reserve are the plan's conflicts.
func (e *Engine) Plan(ctx context.Context, db bun.IDB, siteID uuid.UUID, ids []uuid.UUID, want map[uuid.UUID]*int) (*Plan, error) {
	listed, err := Drafts(ctx, db, siteID, ids, false)
	if err != nil {
		return nil, err
	}
	refusals := listedRefusals(ids, listed, want)
	for _, r := range refusals {
		if errors.Is(r, models.ErrNotFound) {
			return nil, r
		}
	}
	set, err := e.publication(ctx, db, siteID, listed, false)
	if err != nil {
		return nil, err
	}
	groups := cycleGroups(set.Drafts)
	p := &Plan{Listed: len(listed), Steps: make([]PlanStep, len(set.Drafts)),
		Conflicts: append(refusals, heldDependencies(set.Drafts, uuid.Nil, ids)...)}
	if set.Refusal != nil {
		p.Conflicts = append(p.Conflicts, DefaultLocaleError(set.Refusal))
	}
	for i, d := range set.Drafts {
		p.Steps[i] = PlanStep{Draft: d, ItemType: d.ItemType, ItemID: d.ItemID, Event: d.Event, Locale: d.Locale, Group: groups[d.ID]}
	}
	if p.BrokenLinks, err = brokenLinks(ctx, db, siteID, set); err != nil {
		return nil, err
	}
	return p, nil
}

// PlanRevert computes the plan of reverting the site's revision targetID
// (force as POST /revisions takes it) with reversion, the code
// RevertRevision runs: its restores as steps, its conflicts, and the
// links its deletions and moves of pages would break. A rule of the
// content that only writing the restores would find broken (a slug taken
// since) is not foreseen.
func (e *Engine) PlanRevert(ctx context.Context, db bun.IDB, siteID, targetID uuid.UUID, force bool) (*Plan, error) {
	rs, err := e.reversion(ctx, db, siteID, targetID, force, false)
	if err != nil {
		return nil, err
	}
	p := &Plan{Steps: make([]PlanStep, len(rs.restores)), Conflicts: rs.conflicts}
	// The restores as the drafts that would make the same changes, for
	// brokenLinks.
	set := &publicationSet{Drafts: make([]*Draft, len(rs.restores))}
	for i, r := range rs.restores {
		p.Steps[i] = PlanStep{ItemType: r.kind.Type, ItemID: r.id, Event: r.event, Locale: r.locale, Group: 1}
		drafted := r.after
		if drafted == nil {
			drafted = r.before
		}
		set.Drafts[i] = &Draft{ItemType: r.kind.Type, ItemID: r.id, Event: r.event, Drafted: drafted, ObjectChanges: changes(r.kind, r.before, r.after)}
	}
	if _, set.ParentPaths, err = liveParents(ctx, db, siteID, set.Drafts); err != nil {
		return nil, err
	}
	if p.BrokenLinks, err = brokenLinks(ctx, db, siteID, set); err != nil {
		return nil, err
	}
	return p, nil
}

// refOf is a draft's reference in column: drafted (what it will point to)
// and stored (what it points to now, when a drafted update changes it).
func refsOf(d *Draft, col string) []string {
	var out []string
	if s, _ := d.Drafted[col].(string); s != "" {
		out = append(out, s)
	}
	k := kinds[d.ItemType]
	for _, f := range k.Fields {
		if f.Column != col {
			continue
		}
		if pair, ok := d.ObjectChanges[f.Name+"-id"].([]any); ok && len(pair) == 2 {
			if s, _ := pair[0].(string); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// cycleGroups numbers the strongly connected components of the
// publication rules among ds (in order): the edges are the rules Closure
// follows (a create or update needs the creates of what it points to; a
// delete needs every draft of its children), here within the set.
func cycleGroups(ds []*Draft) map[uuid.UUID]int {
	comp := components(publicationEdges(ds))
	// Number the components by their first step.
	out := map[uuid.UUID]int{}
	number := map[int]int{}
	for i, d := range ds {
		n, ok := number[comp[i]]
		if !ok {
			n = len(number) + 1
			number[comp[i]] = n
		}
		out[d.ID] = n
	}
	return out
}

// publicationEdges is the graph of the publication rules among ds:
// edges[i] are the indexes of the drafts ds[i] needs.
func publicationEdges(ds []*Draft) [][]int {
	byItem := map[string]*Draft{}
	index := map[uuid.UUID]int{}
	for i, d := range ds {
		if d.Locale == "" { // a locale draft is no record's create or delete
			byItem[d.ItemType+"/"+d.ItemID.String()] = d
		}
		index[d.ID] = i
	}
	// children[type/id] are the drafts in the set whose record is (or will
	// be) a child of that record.
	children := map[string][]int{}
	for i, d := range ds {
		for _, parent := range kinds {
			for _, c := range parent.Children {
				if c.Type != d.ItemType {
					continue
				}
				for _, ref := range refsOf(d, c.Column) {
					children[parent.Type+"/"+ref] = append(children[parent.Type+"/"+ref], i)
				}
			}
		}
	}
	edges := make([][]int, len(ds))
	for i, d := range ds {
		switch d.Event {
		case EventCreate, EventUpdate:
			for _, f := range kinds[d.ItemType].Fields {
				if !f.Draftable() {
					continue
				}
				if s, _ := d.Drafted[f.Column].(string); s != "" {
					if t := byItem[f.RefType+"/"+s]; t != nil && t.Event == EventCreate {
						edges[i] = append(edges[i], index[t.ID])
					}
				}
			}
		case EventDelete:
			edges[i] = append(edges[i], children[d.ItemType+"/"+d.ItemID.String()]...)
		}
	}
	return edges
}

// components numbers the strongly connected components of the graph
// edges (a vertex's edges by its index), comp[v] being v's: Tarjan's
// algorithm, iterative over a bounded set (MaxClosure).
func components(edges [][]int) []int {
	comp := make([]int, len(edges))
	for i := range comp {
		comp[i] = -1
	}
	low, num := make([]int, len(edges)), make([]int, len(edges))
	onStack := make([]bool, len(edges))
	var stack []int
	counter, ncomp := 0, 0
	type frame struct{ v, next int }
	for root := range edges {
		if num[root] != 0 {
			continue
		}
		calls := []frame{{root, 0}}
		counter++
		num[root], low[root] = counter, counter
		stack, onStack[root] = append(stack, root), true
		for len(calls) > 0 {
			f := &calls[len(calls)-1]
			if f.next < len(edges[f.v]) {
				w := edges[f.v][f.next]
				f.next++
				if num[w] == 0 {
					counter++
					num[w], low[w] = counter, counter
					stack, onStack[w] = append(stack, w), true
					calls = append(calls, frame{w, 0})
				} else if onStack[w] {
					low[f.v] = min(low[f.v], num[w])
				}
				continue
			}
			v := f.v
			calls = calls[:len(calls)-1]
			if len(calls) > 0 {
				u := calls[len(calls)-1].v
				low[u] = min(low[u], low[v])
			}
			if low[v] == num[v] {
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp[w] = ncomp
					if w == v {
						break
					}
				}
				ncomp++
			}
		}
	}
	return comp
}

// newPaths returns the path a page (by id) will have once pages, the
// set's page drafts by item id, are published: a memoised walk up drafted
// parents, ending at the live path of a parent outside the set
// (parentPaths).
func newPaths(pages map[string]*Draft, parentPaths map[string]string) func(id string, depth int) string {
	newPath := map[string]string{}
	var pathOf func(id string, depth int) string
	pathOf = func(id string, depth int) string {
		if p, ok := newPath[id]; ok {
			return p
		}
		d := pages[id]
		if d == nil || depth > 64 {
			return parentPaths[id]
		}
		slug, _ := d.Drafted["slug"].(string)
		p := "/" + slug
		if parent, _ := d.Drafted["parent_id"].(string); parent != "" {
			p = strings.TrimSuffix(pathOf(parent, depth+1), "/") + "/" + slug
		}
		newPath[id] = p
		return p
	}
	return pathOf
}

// brokenLinks finds the links (live bodies, and drafted bodies other than
// those this publish deletes) to pages the set deletes or moves, with each
// page's path before and after. A moved page moves its live subtree: the
// new paths follow the set's drafted slugs and parents, under the live
// paths of parents outside it. One query, whatever the size of the set.
func brokenLinks(ctx context.Context, db bun.IDB, siteID uuid.UUID, set *publicationSet) ([]BrokenLink, error) {
	pages := map[string]*Draft{}
	deletedBlocks := map[uuid.UUID]bool{}
	for _, d := range set.Drafts {
		if d.Locale != "" {
			// Moves and deletes are shared; a slug in a locale moves
			// only that locale's path (links per locale: §2.10).
			continue
		}
		switch d.ItemType {
		case "pages":
			pages[d.ItemID.String()] = d
		case "content-blocks":
			if d.Event == EventDelete {
				deletedBlocks[d.ItemID] = true
			}
		}
	}
	pathOf := newPaths(pages, set.ParentPaths)
	var gone, moved []uuid.UUID
	for _, d := range pages {
		switch {
		case d.Event == EventDelete:
			gone = append(gone, d.ItemID)
		case d.Event == EventUpdate:
			if _, s := d.ObjectChanges["slug"]; s {
				moved = append(moved, d.ItemID)
			} else if _, p := d.ObjectChanges["parent-id"]; p {
				moved = append(moved, d.ItemID)
			}
		}
	}
	if len(gone)+len(moved) == 0 {
		return nil, nil
	}
	// The affected pages with their live paths: the deleted and moved
	// ones, and the live descendants of the moved ones.
	var rows []struct {
		Hyperlink `bun:"extend"`
		Path      string    `bun:"path"`
		Root      uuid.UUID `bun:"root"`
		RootPath  string    `bun:"root_path"`
	}
	roots := append(append([]uuid.UUID{}, gone...), moved...)
	// The subtrees by stored parent (what moves with a page), each page
	// attributed to its nearest affected ancestor.
	err := db.NewRaw(`
WITH RECURSIVE affected (id, path, root, root_path, depth) AS (
    SELECT id, path, id, path, 0 FROM pages WHERE site_id = ?0 AND id IN (?1)
  UNION ALL
    SELECT c.id, c.path, a.root, a.root_path, a.depth + 1
    FROM pages c JOIN affected a ON c.parent_id = a.id
    WHERE c.site_id = ?0 AND a.depth < 64
)
SELECT DISTINCT ON (h.id) h.*, a.path, a.root, a.root_path
FROM hyperlinks h JOIN affected a ON a.id = h.linked_id
WHERE h.site_id = ?0 AND h.linked_type = 'pages'
ORDER BY h.id, a.depth
LIMIT 1000`, siteID, bun.In(roots)).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("links to moved or deleted pages: %w", err)
	}
	var out []BrokenLink
	for _, r := range rows {
		if deletedBlocks[r.LinkableID] && r.DraftID == nil {
			continue // the linking block goes too
		}
		root := pages[r.Root.String()]
		bl := BrokenLink{Hyperlink: r.Hyperlink, OldPath: r.Path}
		if root.Event != EventDelete {
			bl.NewPath = strings.TrimSuffix(pathOf(r.Root.String(), 0), "/") + strings.TrimPrefix(r.Path, strings.TrimSuffix(r.RootPath, "/"))
			if r.Root.String() == r.LinkedID.String() {
				bl.NewPath = pathOf(r.Root.String(), 0)
			}
		}
		out = append(out, bl)
	}
	return out, nil
}
