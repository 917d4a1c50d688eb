package e2e

// A record's history (issue 31, docs/history.md): GET /<kind>/:id/versions
// newest first by cursor, each version's state, and as-of reads.

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

type historyDoc struct {
	Data []struct {
		ID         string
		Attributes struct {
			Event         string
			ObjectChanges map[string]any `json:"object-changes"`
			State         *struct {
				Attributes    map[string]any
				Relationships map[string]struct{ Data *struct{ Type, ID string } }
			}
			CreatedAt string `json:"created-at"`
		}
		Relationships map[string]struct{ Data json.RawMessage }
	}
	Links struct{ Self, First, Next string }
	Meta  map[string]any
}

func (e *editor) history(path string) historyDoc {
	e.t.Helper()
	d := e.do(http.MethodGet, path, nil)
	if d.Status != 200 {
		e.t.Fatalf("GET %s = %d %s", path, d.Status, d.Raw)
	}
	var h historyDoc
	if err := json.Unmarshal(d.Raw, &h); err != nil {
		e.t.Fatal(err)
	}
	return h
}

func TestRecordHistory(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	parent, pd := e.page("Parent", "parent", "")
	id, d0 := e.page("Story", "story", "")
	e.mustPublish(pd, d0)
	var stamps []string // a time after each published change
	mark := func() {
		time.Sleep(5 * time.Millisecond)
		stamps = append(stamps, time.Now().UTC().Format(time.RFC3339Nano))
		time.Sleep(5 * time.Millisecond)
	}
	mark()
	for _, title := range []string{"Story 2", "Story 3", "Story 4"} {
		e.mustPublish(e.update("pages", id, map[string]any{"title": title}, nil))
		mark()
	}
	e.mustPublish(e.update("pages", id, nil, map[string]any{"parent": ref("pages", parent)}))
	mark()

	// Newest first, paged by cursor; each link answers.
	h := e.history("/pages/" + id + "/versions?page[size]=2")
	if len(h.Data) != 2 || h.Links.Next == "" {
		t.Fatalf("first page = %+v", h)
	}
	var all []string
	events := []string{}
	var titles []any
	for next := "/pages/" + id + "/versions?page[size]=2"; next != ""; {
		h := e.history(next)
		for _, v := range h.Data {
			all = append(all, v.ID)
			events = append(events, v.Attributes.Event)
			if v.Attributes.State == nil {
				t.Fatalf("version %s without state", v.ID)
			}
			titles = append(titles, v.Attributes.State.Attributes["title"])
			if len(v.Relationships["revision"].Data) == 0 || len(v.Relationships["user"].Data) == 0 {
				t.Errorf("version relationships = %v", v.Relationships)
			}
		}
		next = ""
		if h.Links.Next != "" {
			u, _ := url.Parse(h.Links.Next)
			next = u.RequestURI()
		}
	}
	if strings.Join(events, ",") != "update,update,update,update,create" {
		t.Fatalf("events = %v", events)
	}
	wantTitles := []any{"Story 4", "Story 4", "Story 3", "Story 2", "Story"}
	for i, w := range wantTitles {
		if titles[i] != w {
			t.Errorf("state %d title = %v, want %v", i, titles[i], w)
		}
	}
	h = e.history("/pages/" + id + "/versions")
	moved := h.Data[0].Attributes
	if moved.State.Relationships["parent"].Data == nil || moved.State.Relationships["parent"].Data.ID != parent ||
		moved.State.Attributes["path"] != "/parent/story" {
		t.Errorf("state after the move = %+v", moved.State)
	}

	// as-of: a version id, and times.
	asOf := func(q string) (int, resource, map[string]any) {
		d := e.do(http.MethodGet, "/pages/"+id+"?as-of="+url.QueryEscape(q), nil)
		var m struct{ Meta map[string]any }
		_ = json.Unmarshal(d.Raw, &m)
		if d.Status != 200 {
			return d.Status, resource{}, nil
		}
		return d.Status, d.resource(t), m.Meta
	}
	if st, r, meta := asOf(all[3]); st != 200 || r.Attributes["title"] != "Story 2" || meta["version-id"] != all[3] {
		t.Errorf("as-of version = %d %v %v", st, r.Attributes, meta)
	}
	if st, r, _ := asOf(stamps[0]); st != 200 || r.Attributes["title"] != "Story" || r.Attributes["path"] != "/story" {
		t.Errorf("as-of %s = %d %v", stamps[0], st, r.Attributes)
	}
	if st, r, _ := asOf(stamps[2]); st != 200 || r.Attributes["title"] != "Story 3" {
		t.Errorf("as-of %s = %d %v", stamps[2], st, r.Attributes)
	}
	if st, _, _ := asOf("2000-01-01T00:00:00Z"); st != 404 {
		t.Errorf("as-of before the create = %d, want 404", st)
	}
	if st := e.status("/pages/" + id + "?as-of=yesterday"); st != 400 {
		t.Errorf("as-of=yesterday = %d, want 400", st)
	}

	// A delete: the history stays, as-of after it is 404, before it 200.
	e.mustPublish(e.remove("pages", id))
	mark()
	h = e.history("/pages/" + id + "/versions")
	if len(h.Data) != 6 || h.Data[0].Attributes.Event != "delete" || h.Data[0].Attributes.State != nil {
		t.Fatalf("history after the delete = %+v", h.Data)
	}
	if st, _, _ := asOf(stamps[len(stamps)-1]); st != 404 {
		t.Errorf("as-of after the delete = %d, want 404", st)
	}
	if st, r, _ := asOf(stamps[len(stamps)-2]); st != 200 || r.Attributes["path"] != "/parent/story" {
		t.Errorf("as-of before the delete = %d %v", st, r.Attributes)
	}

	// Tenancy: another site's editor gets 404 for all of it.
	other := s.editor(t, "editor@other.test")
	for _, p := range []string{"/pages/" + id + "/versions", "/pages/" + id + "?as-of=" + all[0], "/pages/" + parent + "/versions"} {
		if st := other.status(p); st != 404 {
			t.Errorf("other site GET %s = %d, want 404", p, st)
		}
	}
	if st := e.status("/pages/00000000-0000-0000-0000-000000000001/versions"); st != 404 {
		t.Errorf("unknown page's history = %d, want 404", st)
	}
	if st := e.status("/pages/" + id + "/versions?page[after]=nonsense"); st != 400 {
		t.Errorf("bad cursor = %d, want 400", st)
	}
}
