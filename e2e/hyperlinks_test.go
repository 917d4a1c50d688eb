package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestDraftHyperlinksShowWhatWouldBreak(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	about, aboutDraft := e.page("About", "about", "")
	home, homeDraft := e.create("pages", map[string]any{"title": "Home", "slug": "", "page-type": "home"}, nil)
	e.mustPublish(aboutDraft, homeDraft)

	// A live block on the home page links to /about; a drafted block too.
	content, contentDraft := e.create("contents", map[string]any{"title": "Main"}, map[string]any{"page": ref("pages", home)})
	_, liveBlock := e.create("content-blocks", map[string]any{"var-name": "intro", "data-type": "html",
		"body": `<p>Read <a href="/about">about us</a> and <a href='/missing'>nothing</a>.</p>`}, map[string]any{"content": ref("contents", content)})
	e.mustPublish(contentDraft, liveBlock)
	_, draftedBlock := e.create("content-blocks", map[string]any{"var-name": "more", "data-type": "html",
		"body": `<a HREF="/about#team">team</a>`}, map[string]any{"content": ref("contents", content)})

	// Drafting the deletion of /about: its draft lists both links.
	del := e.do(http.MethodDelete, "/pages/"+about, nil)
	delDraft := draftOf(t, del.resource(t))
	d := e.do(http.MethodGet, "/drafts/"+delDraft+"?include=hyperlinks", nil)
	var ids []struct{ ID string }
	_ = json.Unmarshal(d.resource(t).Relationships["hyperlinks"].Data, &ids)
	if len(ids) != 2 || strings.Count(string(d.Raw), `"type":"hyperlinks"`) < 2 {
		t.Fatalf("hyperlinks of the delete draft = %s", d.Raw)
	}
	if !linksTo(t, d, about) {
		t.Errorf("hyperlink does not point at the page: %s", d.Raw)
	}
	// Reverting the drafted block removes its link from the list.
	e.do(http.MethodDelete, "/drafts/"+draftedBlock, nil)
	d = e.do(http.MethodGet, "/drafts/"+delDraft, nil)
	_ = json.Unmarshal(d.resource(t).Relationships["hyperlinks"].Data, &ids)
	if len(ids) != 1 {
		t.Errorf("after reverting the drafted block: %d hyperlinks", len(ids))
	}
}
