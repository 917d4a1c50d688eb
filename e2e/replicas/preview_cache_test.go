package replicas_test

import (
	"fmt"
	"net/http"
	"testing"
)

// TestPreviewCacheAcrossReplicas: each API keeps the documents of a
// release's preview it served (docs/caching.md), as it keeps live ones.
// The preview of staged drafts is read over and over on both replicas,
// while drafts are written, unstaged and the release cancelled through
// one replica, and the very next preview read, through the other, must
// show each change: a drafted title right after its PATCH returned, the
// live title right after the draft was unstaged, and never the drafted
// title once the release is cancelled.
func TestPreviewCacheAcrossReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three pressroom processes")
	}
	t.Parallel()
	f := newFixture(t, setup{apis: 2, workers: 1})
	a, b := f.APIs[0].URL, f.APIs[1].URL
	tok := map[string]string{a: f.token(t, a, "editor@demo.test"), b: f.token(t, b, "editor@demo.test")}
	const pages = 4
	ids, drafts := make([]string, pages), make([]string, pages)
	for i := range ids {
		r := f.send(a, tok[a], http.MethodPost, "/pages", pageBody("", map[string]any{"title": "live", "slug": fmt.Sprintf("previewed-%d", i)}))
		if r.Status != 201 {
			t.Fatalf("POST /pages = %s", r)
		}
		ids[i] = resourceOf(t, r).ID
		f.publish(t, a, tok[a], resourceOf(t, r).rel("draft"))
		p := f.send(a, tok[a], http.MethodPatch, "/pages/"+ids[i], pageBody(ids[i], map[string]any{"title": "d0"}))
		if p.Status != 200 {
			t.Fatalf("PATCH /pages/%s = %s", ids[i], p)
		}
		drafts[i] = resourceOf(t, p).rel("draft")
	}
	rel := resourceOf(t, f.send(a, tok[a], http.MethodPost, "/releases", map[string]any{"data": map[string]any{"type": "releases", "attributes": map[string]any{"title": "cached"}}})).ID
	stage := func(method string, ds ...string) {
		t.Helper()
		data := make([]map[string]any, len(ds))
		for i, d := range ds {
			data[i] = map[string]any{"type": "drafts", "id": d}
		}
		if r := f.send(a, tok[a], method, "/releases/"+rel+"/relationships/drafts", map[string]any{"data": data}); r.Status != 204 {
			t.Fatalf("%s /releases/%s/relationships/drafts = %s", method, rel, r)
		}
	}
	stage(http.MethodPost, drafts...)
	preview := func(i int) string { return "/pages/" + ids[i] + "?preview-release=" + rel }
	title := func(rep string, i int) (int, any) {
		r := f.send(rep, tok[rep], http.MethodGet, preview(i), nil)
		if r.Status != 200 {
			return r.Status, nil
		}
		return r.Status, resourceOf(t, r).Attributes["title"]
	}
	// The load: every page's preview on both replicas, 8 at a time, so each
	// replica's cache holds them and fills and hits race the writes.
	stop := f.loadReads([]string{a, b}, tok, func(i int) string { return preview(i % pages) },
		func(r result) bool { return r.Status < 500 })
	defer stop()
	for round := 1; round <= 10; round++ {
		write, read := a, b
		if round%2 == 0 {
			write, read = b, a
		}
		i := round % pages
		want := fmt.Sprintf("d%d", round)
		if p := f.send(write, tok[write], http.MethodPatch, "/pages/"+ids[i], pageBody(ids[i], map[string]any{"title": want})); p.Status != 200 {
			t.Fatalf("round %d: PATCH on %s = %s", round, write, p)
		}
		for _, rep := range []string{read, write} {
			if st, got := title(rep, i); st != 200 || got != want {
				t.Fatalf("round %d: preview on %s right after the PATCH on %s = %d %v, want %s (stale)", round, rep, write, st, got, want)
			}
		}
	}
	// Unstaged: the page's preview is its live document at once.
	stage(http.MethodDelete, drafts[0])
	if st, got := title(b, 0); st != 200 || got != "live" {
		t.Fatalf("preview on B right after unstaging on A = %d %v, want the live title", st, got)
	}
	// Cancelled: no replica shows the release's drafted titles any more.
	if r := f.send(a, tok[a], http.MethodDelete, "/releases/"+rel, nil); r.Status != 204 {
		t.Fatalf("DELETE /releases/%s = %s", rel, r)
	}
	for i := range ids {
		if st, got := title(b, i); st == 200 && got != "live" {
			t.Fatalf("preview of page %d on B right after the release's cancellation on A = %v, want the live title or no preview", i, got)
		}
	}
	if failure, reads := stop(); failure != "" {
		t.Error(failure)
	} else {
		t.Logf("%d preview reads under load", reads)
	}
}
