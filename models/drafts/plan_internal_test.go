package drafts

import (
	"testing"

	"github.com/google/uuid"
)

// Records that point at each other share a group; the rest have one each.
func TestCycleGroups(t *testing.T) {
	page := func(event string, parent *Draft) *Draft {
		d := &Draft{ID: uuid.New(), ItemType: "pages", ItemID: uuid.New(), Event: event, Drafted: Row{}, ObjectChanges: map[string]any{}}
		if parent != nil {
			d.Drafted["parent_id"] = parent.ItemID.String()
		}
		return d
	}
	a := page(EventCreate, nil)
	b := page(EventCreate, a)
	a.Drafted["parent_id"] = b.ItemID.String() // a and b point at each other
	c := page(EventCreate, a)                  // needs a, not needed by it
	content := &Draft{ID: uuid.New(), ItemType: "contents", ItemID: uuid.New(), Event: EventCreate,
		Drafted: Row{"page_id": c.ItemID.String()}, ObjectChanges: map[string]any{}}
	// A deleted page and its child's delete: the delete needs the child's,
	// not the other way round.
	gone := page(EventDelete, nil)
	child := page(EventDelete, gone)

	ds := []*Draft{a, b, c, content, gone, child}
	g := cycleGroups(ds)
	if g[a.ID] != g[b.ID] {
		t.Errorf("a and b point at each other but are in groups %d and %d", g[a.ID], g[b.ID])
	}
	seen := map[int]bool{g[a.ID]: true}
	for _, d := range []*Draft{c, content, gone, child} {
		if seen[g[d.ID]] {
			t.Errorf("draft %s shares group %d", d.ItemID, g[d.ID])
		}
		seen[g[d.ID]] = true
	}
	if g[a.ID] != 1 {
		t.Errorf("groups count from 1 in step order: first is %d", g[a.ID])
	}
}
