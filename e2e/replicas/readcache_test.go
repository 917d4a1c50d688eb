package replicas_test

import (
	"fmt"
	"net/http"
	"testing"
)

// TestReadCacheAcrossReplicas: each API keeps the live documents it
// served (package readcache, docs/caching.md). Pages are read over and
// over on both replicas, so both hold them, while edits and publishes go
// through one replica and the very next read, through the other, must show
// them: the row's new version right after a PATCH returned (its ETag), the
// new title right after a publish returned, a 404 right after a delete's
// publish returned.
func TestReadCacheAcrossReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three pressroom processes")
	}
	t.Parallel()
	f := newFixture(t, setup{apis: 2, workers: 1})
	a, b := f.APIs[0].URL, f.APIs[1].URL
	tok := map[string]string{a: f.token(t, a, "editor@demo.test"), b: f.token(t, b, "editor@demo.test")}
	const pages = 6
	ids := make([]string, pages)
	for i := range ids {
		r := f.send(a, tok[a], http.MethodPost, "/pages", pageBody("", map[string]any{"title": "t0", "slug": fmt.Sprintf("cached-%d", i)}))
		if r.Status != 201 {
			t.Fatalf("POST /pages = %s", r)
		}
		ids[i] = resourceOf(t, r).ID
		f.publish(t, a, tok[a], resourceOf(t, r).rel("draft"))
	}
	// The load: every page's live read on both replicas, 8 at a time, so
	// each replica's cache holds them and fills and hits race the writes.
	stop := f.loadReads([]string{a, b}, tok, func(i int) string { return "/pages/" + ids[i%pages] },
		func(r result) bool { return r.Status == 200 || r.Status == 404 })
	defer stop()
	for round := 1; round <= 12; round++ {
		write, read := a, b
		if round%2 == 0 {
			write, read = b, a
		}
		id := ids[round%pages]
		live := "/pages/" + id
		title := fmt.Sprintf("t%d", round)
		p := f.send(write, tok[write], http.MethodPatch, live, pageBody(id, map[string]any{"title": title}))
		if p.Status != 200 {
			t.Fatalf("round %d: PATCH on %s = %s", round, write, p)
		}
		for _, rep := range []string{read, write} {
			if r := f.send(rep, tok[rep], http.MethodGet, live, nil); r.Header.Get("ETag") != p.Header.Get("ETag") {
				t.Fatalf("round %d: live read on %s right after the PATCH on %s has ETag %s, want %s (stale)", round, rep, write, r.Header.Get("ETag"), p.Header.Get("ETag"))
			}
		}
		f.publish(t, write, tok[write], resourceOf(t, p).rel("draft"))
		for _, rep := range []string{read, write} {
			r := f.send(rep, tok[rep], http.MethodGet, live, nil)
			if got := resourceOf(t, r).Attributes["title"]; r.Status != 200 || got != title {
				t.Fatalf("round %d: live read on %s right after the publish on %s = %d %v, want %s (stale)", round, rep, write, r.Status, got, title)
			}
		}
	}
	// A deleted page's publish: 404 at once on the other replica.
	d := f.send(a, tok[a], http.MethodDelete, "/pages/"+ids[0], nil)
	if d.Status != 200 && d.Status != 202 {
		t.Fatalf("DELETE /pages/%s = %s", ids[0], d)
	}
	f.publish(t, a, tok[a], resourceOf(t, d).rel("draft"))
	if r := f.send(b, tok[b], http.MethodGet, "/pages/"+ids[0], nil); r.Status != 404 {
		t.Fatalf("live read on B right after the deletion's publish on A = %s, want 404", r)
	}
	if failure, reads := stop(); failure != "" {
		t.Error(failure)
	} else {
		t.Logf("%d reads under load", reads)
	}
}
