package e2e

// Publish plans (POST /publish-plans): a dry run computed by the code that
// publishes (docs/drafts.md "Publish plans").

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

type planDoc struct {
	Data struct {
		Type       string
		ID         string
		Attributes struct {
			Steps []struct {
				Draft  string
				Item   struct{ Type, ID string }
				Event  string
				Group  int
				HeldBy *string `json:"held-by"`
			}
			BrokenHyperlinks []struct {
				Block   string
				Draft   *string
				Href    string
				Page    struct{ Type, ID string }
				OldPath string  `json:"old-path"`
				NewPath *string `json:"new-path"`
			} `json:"broken-hyperlinks"`
		}
		Relationships struct {
			Drafts struct{ Data []struct{ Type, ID string } }
		}
		Meta struct {
			DraftsCount   int `json:"drafts-count"`
			PulledInCount int `json:"pulled-in-count"`
		}
	}
	Included []resource
}

func planBody(draftIDs ...string) map[string]any {
	data := make([]map[string]any, len(draftIDs))
	for i, id := range draftIDs {
		data[i] = map[string]any{"type": "drafts", "id": id}
	}
	return map[string]any{"data": map[string]any{"type": "publish-plans", "relationships": map[string]any{"drafts": map[string]any{"data": data}}}}
}

// plan posts a publish plan (200 required).
func (e *editor) plan(query string, draftIDs ...string) planDoc {
	e.t.Helper()
	d := e.do(http.MethodPost, "/publish-plans"+query, planBody(draftIDs...))
	if d.Status != 200 {
		e.t.Fatalf("POST /publish-plans = %d %s", d.Status, d.Raw)
	}
	var p planDoc
	if err := json.Unmarshal(d.Raw, &p); err != nil || p.Data.Type != "publish-plans" {
		e.t.Fatalf("publish plan: %v %s", err, d.Raw)
	}
	return p
}

// TestPlanEqualsPublish runs a publish plan before every publish of the
// rule table (e2e/rules_test.go): its steps are the versions the publish
// then writes, in order, and the plan changes nothing.
func TestPlanEqualsPublish(t *testing.T) {
	t.Parallel()
	s := start(t)
	n := 0
	for _, c := range rlDependencyCases() {
		if len(c.publish) == 0 {
			continue
		}
		n++
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := rlNewWorld(t, s)
			c.build(w)
			ds := make([]string, len(c.publish))
			for i, name := range c.publish {
				ds[i] = w.draft(name)
			}
			before := w.pending()
			p := w.e.plan("", ds...)
			if after := w.pending(); !rlSame(before, after) {
				t.Fatalf("the plan changed the drafts: %v, then %v", before, after)
			}
			steps := make([]string, len(p.Data.Attributes.Steps))
			for i, st := range p.Data.Attributes.Steps {
				steps[i] = w.nameOf(st.Item.ID) + ":" + st.Event
				if st.Group <= 0 || st.HeldBy != nil || st.Draft != p.Data.Relationships.Drafts.Data[i].ID {
					t.Errorf("step %d = %+v", i, st)
				}
			}
			if p.Data.Meta.DraftsCount != len(steps) || p.Data.Meta.PulledInCount != len(steps)-len(ds) {
				t.Errorf("meta = %+v for %d steps, %d listed", p.Data.Meta, len(steps), len(ds))
			}
			rev := w.publish(c.publish...)
			if vs := w.versions(rev); strings.Join(vs, " ") != strings.Join(steps, " ") {
				t.Errorf("plan steps  = %v\npublished   = %v", steps, vs)
			}
		})
	}
	if n < 20 {
		t.Fatalf("only %d publishing cases in the rule table", n)
	}
}

func TestPublishPlan(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	other := s.editor(t, "editor@other.test")

	about, aboutDraft := e.page("About", "about", "")
	team, teamDraft := e.page("Team", "team", about)
	old, oldDraft := e.page("Old", "old", "")
	home, homeDraft := e.create("pages", map[string]any{"title": "Home", "slug": "", "page-type": "home"}, nil)
	content, contentDraft := e.create("contents", map[string]any{"title": "Main"}, map[string]any{"page": ref("pages", home)})
	block, blockDraft := e.create("content-blocks", map[string]any{"var-name": "intro", "data-type": "html",
		"body": `<a href="/about/team">team</a> <a href="/old">old</a>`}, map[string]any{"content": ref("contents", content)})
	e.mustPublish(aboutDraft, teamDraft, oldDraft, homeDraft, contentDraft, blockDraft)
	_ = team

	// Rename /about (its live child moves too) and delete /old; a new page
	// under a new parent pulls the parent in.
	d := e.do(http.MethodPatch, "/pages/"+about, map[string]any{"data": map[string]any{"type": "pages", "id": about, "attributes": map[string]any{"slug": "about-us"}}})
	rename := draftOf(t, d.resource(t))
	del := draftOf(t, e.do(http.MethodDelete, "/pages/"+old, nil).resource(t))
	parent, parentDraft := e.page("New", "new", "")
	_, childDraft := e.page("Child", "child", parent)

	p := e.plan("?include=drafts", rename, del, childDraft)
	if p.Data.Meta.DraftsCount != 4 || p.Data.Meta.PulledInCount != 1 || len(p.Included) != 4 {
		t.Fatalf("plan meta %+v, %d included", p.Data.Meta, len(p.Included))
	}
	at := map[string]int{}
	for i, st := range p.Data.Attributes.Steps {
		at[st.Draft] = i
	}
	if at[parentDraft] > at[childDraft] {
		t.Errorf("the pulled-in parent comes after its child: %+v", p.Data.Attributes.Steps)
	}
	broken := map[string]string{}
	for _, bl := range p.Data.Attributes.BrokenHyperlinks {
		if bl.Block != block {
			t.Errorf("broken link from %s, want block %s", bl.Block, block)
		}
		np := "<deleted>"
		if bl.NewPath != nil {
			np = *bl.NewPath
		}
		broken[bl.OldPath] = np
	}
	if fmt.Sprint(broken) != fmt.Sprint(map[string]string{"/about/team": "/about-us/team", "/old": "<deleted>"}) {
		t.Errorf("broken hyperlinks = %v", broken)
	}

	// Held drafts show who holds them; the plan itself holds nothing.
	rev := e.mustSchedule(time.Now().Add(time.Hour), del)
	p = e.plan("", rename, del)
	for _, st := range p.Data.Attributes.Steps {
		if held := st.HeldBy != nil && *st.HeldBy == rev.ID; held != (st.Draft == del) {
			t.Errorf("step %+v: held-by want %v", st, st.Draft == del)
		}
	}
	if d := e.do(http.MethodDelete, "/revisions/"+rev.ID, nil); d.Status != 204 {
		t.Fatalf("cancel = %d %s", d.Status, d.Raw)
	}

	// Unknown and other-site drafts are 404 at the identifier.
	for _, who := range []*editor{e, other} {
		ids := []string{rename, "00000000-0000-4000-8000-000000000000"}
		if who == other {
			ids = []string{childDraft}
		}
		d := who.do(http.MethodPost, "/publish-plans", planBody(ids...))
		ptr := fmt.Sprintf("/data/relationships/drafts/data/%d/id", len(ids)-1)
		if d.Status != 404 || d.Errors[0].Source.Pointer != ptr {
			t.Errorf("plan with an unknown draft = %d %s, want 404 at %s", d.Status, d.Raw, ptr)
		}
	}
	if d := e.do(http.MethodPost, "/publish-plans", map[string]any{"data": map[string]any{"type": "revisions"}}); d.Status != 409 {
		t.Errorf("plan of the wrong type = %d %s", d.Status, d.Raw)
	}
	// Publishing now does what the last plan said.
	e.mustPublish(rename, del)
	if st := e.status("/pages/" + old); st != 404 {
		t.Errorf("deleted page = %d", st)
	}
}
