package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// A site has at most one page of each special type. Concurrent creates of
// such a page, and concurrent edits turning pages into one, used to pass the
// check together (each before the other committed): exactly one may win.
// Each special type gets its own burst, so a lost race shows in one of them.
func TestConcurrentSpecialPagesOneWins(t *testing.T) {
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := &http.Client{Timeout: 30 * time.Second}
	for _, pt := range []string{"search", "not_found", "error", "home"} {
		slug := func(i int) string { return fmt.Sprintf("%s-%d", strings.ReplaceAll(pt, "_", "-"), i) }
		var plain []string
		for i := range 4 {
			id, _ := e.page(fmt.Sprintf("Plain %d", i), "plain-"+slug(i), "")
			plain = append(plain, id)
		}
		const creates = 16
		n := creates + len(plain)
		statuses := make([]int, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		begin := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-begin
				if i < creates {
					statuses[i], _, _, errs[i] = s.rawCall(ctx, client, e.token, http.MethodPost, "/pages", map[string]any{"data": map[string]any{
						"type": "pages", "attributes": map[string]any{"title": "Special", "slug": slug(i), "page-type": pt}}})
					return
				}
				id := plain[i-creates]
				statuses[i], _, _, errs[i] = s.rawCall(ctx, client, e.token, http.MethodPatch, "/pages/"+id, map[string]any{"data": map[string]any{
					"type": "pages", "id": id, "attributes": map[string]any{"page-type": pt}}})
			}()
		}
		close(begin)
		wg.Wait()
		won := 0
		for i, st := range statuses {
			switch {
			case errs[i] != nil:
				t.Fatalf("%s: request %d: %v", pt, i, errs[i])
			case st == 200 || st == 201:
				won++
			case st != 422:
				t.Errorf("%s: request %d answered %d", pt, i, st)
			}
		}
		if won != 1 {
			t.Fatalf("%d writes made a %s page (statuses %v); want exactly 1", won, pt, statuses)
		}
		// The drafted one counts: no second one later either.
		d := e.do(http.MethodPost, "/pages", map[string]any{"data": map[string]any{
			"type": "pages", "attributes": map[string]any{"title": "Special", "slug": slug(99), "page-type": pt}}})
		if d.Status != 422 || len(d.Errors) == 0 || d.Errors[0].Code != "page_type_taken" {
			t.Fatalf("another %s page = %d %s", pt, d.Status, d.Raw)
		}
	}
}

// DELETE /drafts/:id with If-Match checked the version it read before its
// transaction: a write landing between that read and the revert's lock was
// thrown away. The version must be checked again under the lock.
func TestRevertDraftRechecksVersionUnderLock(t *testing.T) {
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	_, draftID := e.page("About", "about", "")
	got := e.do(http.MethodGet, "/drafts/"+draftID, nil)
	if got.Status != 200 {
		t.Fatalf("GET /drafts/:id = %d %s", got.Status, got.Raw)
	}
	tag := got.Header.Get("ETag")

	// A write holds the draft's row lock and moves its version on.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck // committed below
	if _, err := tx.ExecContext(ctx, "UPDATE drafts SET version = version + 1 WHERE id = ?", draftID); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		status int
		raw    []byte
		err    error
	}
	done := make(chan answer, 1)
	go func() {
		st, _, raw, err := s.rawCall(ctx, &http.Client{Timeout: 30 * time.Second}, e.token, http.MethodDelete, "/drafts/"+draftID, nil, "If-Match", tag)
		done <- answer{st, raw, err}
	}()
	// Wait until the revert waits for the lock (its first read, before the
	// transaction, saw the old version and passed).
	deadline := time.Now().Add(20 * time.Second)
	for {
		var waiting int
		if err := s.DB.NewRaw("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'").Scan(ctx, &waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		select {
		case a := <-done:
			t.Fatalf("DELETE answered %d before the write committed: %s", a.status, a.raw)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the DELETE never waited for the draft's lock")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	a := <-done
	if a.err != nil {
		t.Fatal(a.err)
	}
	if a.status != 412 {
		t.Fatalf("DELETE /drafts/:id with a version a write replaced = %d %s; want 412", a.status, a.raw)
	}
	if d := e.do(http.MethodGet, "/drafts/"+draftID, nil); d.Status != 200 {
		t.Fatalf("the draft is gone after a refused revert: %d %s", d.Status, d.Raw)
	}
}
