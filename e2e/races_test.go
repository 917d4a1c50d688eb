package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
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

// PostgreSQL text cannot hold U+0000. A NUL in a filter, a document member,
// a header or a sign-in form used to reach a query and come back as 500;
// it is refused where the input is parsed.
func TestNULIsRefusedBeforePostgres(t *testing.T) {
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	for _, path := range []string{"/assets?filter%5Btitle%5D=a%00b", "/pages?filter%5Bslug%5D=%00", "/pages?sort=title&page%5Bsize%5D=1&fil%00ter=x"} {
		d := e.do(http.MethodGet, path, nil)
		if d.Status != 400 || len(d.Errors) == 0 || d.Errors[0].Code != "invalid_character" || d.Errors[0].Source.Parameter == "" {
			t.Errorf("GET %s = %d %s; want 400 invalid_character with a parameter", path, d.Status, d.Raw)
		}
	}
	sig := s.signature(t, e.token, "photo.png", "image/png")
	for _, c := range []struct {
		path, pointer string
		body          map[string]any
	}{
		{"/asset-uploads", "/data/attributes/key", map[string]any{"data": map[string]any{"type": "asset-uploads", "attributes": map[string]any{
			"key": sig.Attributes["key"].(string) + "\x00", "file-name": "photo.png", "content-type": "image/png", "file-size": 10}}}},
		{"/pages", "/data/attributes/title", map[string]any{"data": map[string]any{"type": "pages", "attributes": map[string]any{"title": "a\x00b", "slug": "nul"}}}},
		{"/themes", "/data/attributes/title", map[string]any{"data": map[string]any{"type": "themes", "attributes": map[string]any{"title": "\x00"}}}},
	} {
		d := e.do(http.MethodPost, c.path, c.body)
		if d.Status != 422 || len(d.Errors) == 0 || d.Errors[0].Code != "invalid_character" || d.Errors[0].Source.Pointer != c.pointer {
			t.Errorf("POST %s with a NUL = %d %s; want 422 invalid_character at %s", c.path, d.Status, d.Raw, c.pointer)
		}
	}
	// Go's client will not send a NUL in a header; write the request by hand.
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, draftID := e.page("Keyed", "keyed", "")
	body := `{"data":{"type":"revisions","relationships":{"drafts":{"data":[{"type":"drafts","id":"` + draftID + `"}]}}}}`
	fmt.Fprintf(conn, "POST /revisions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nAccept: application/vnd.api+json\r\nContent-Type: application/vnd.api+json\r\nIdempotency-Key: a\x00b\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", e.token, len(body), body)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("Idempotency-Key with a NUL = %d %s; want 400", resp.StatusCode, raw)
	}
	// The token endpoint's form.
	tr, err := s.http.PostForm(s.URL+"/oauth/token", url.Values{"grant_type": {"password"}, "username": {"editor@demo.test\x00"}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ = io.ReadAll(tr.Body)
	tr.Body.Close()
	if tr.StatusCode != 400 || !strings.Contains(string(raw), "invalid_request") {
		t.Errorf("password grant with a NUL = %d %s; want 400 invalid_request", tr.StatusCode, raw)
	}
}
