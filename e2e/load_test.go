package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
)

// rawCall sends one JSON:API request without touching t (for goroutines);
// it returns the status, or an error when no answer came.
func (s *system) rawCall(ctx context.Context, client *http.Client, token, method, path string, body any, headers ...string) (int, http.Header, []byte, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, r)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Accept", "application/vnd.api+json")
	if body != nil {
		req.Header.Set("Content-Type", "application/vnd.api+json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, raw, err
}

// Writes whose validators query (parent checks, loop checks) used to ask
// the pool for a second connection while holding their transaction's: with
// every connection held by a transaction waiting for another, the API hung
// for good. 200 concurrent writes on a pool of 5 must all be answered, most
// of them done, and the API must answer normally right after.
func TestConcurrentWritesOnASmallPoolNeverHang(t *testing.T) {
	s := start(t, func(c *config.Config) { c.RequestTimeout = 10 * time.Second })
	e := s.editor(t, "editor@demo.test")
	var parents, edited, doomed []string
	for i := range 4 {
		id, _ := e.page(fmt.Sprintf("Section %d", i), fmt.Sprintf("section-%d", i), "")
		parents = append(parents, id)
	}
	for i := range 12 {
		id, _ := e.page(fmt.Sprintf("Edited %d", i), fmt.Sprintf("edited-%d", i), parents[i%len(parents)])
		edited = append(edited, id)
	}
	for i := range 67 { // one per DELETE: a never-published page goes at once, a second DELETE is 404
		id, _ := e.page(fmt.Sprintf("Doomed %d", i), fmt.Sprintf("doomed-%d", i), parents[i%len(parents)])
		doomed = append(doomed, id)
	}
	models.SizePool(s.DB.DB, 5)
	t.Cleanup(func() { models.SizePool(s.DB.DB, models.DefaultMaxConns) })

	const n = 200
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: n}}
	statuses := make([]int, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	began := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			parent := parents[rand.IntN(len(parents))]
			var method, path string
			var body any
			switch i % 3 {
			case 0: // a title and a new parent: the parent and loop checks run
				id := edited[rand.IntN(len(edited))]
				method, path = http.MethodPatch, "/pages/"+id
				body = map[string]any{"data": map[string]any{"type": "pages", "id": id,
					"attributes":    map[string]any{"title": fmt.Sprintf("Edited %d", i)},
					"relationships": map[string]any{"parent": ref("pages", parent)}}}
			case 1:
				method, path = http.MethodPost, "/pages"
				body = map[string]any{"data": map[string]any{"type": "pages",
					"attributes":    map[string]any{"title": fmt.Sprintf("New %d", i), "slug": fmt.Sprintf("new-%d", i)},
					"relationships": map[string]any{"parent": ref("pages", parent)}}}
			default:
				method, path = http.MethodDelete, "/pages/"+doomed[(i/3)%len(doomed)]
			}
			statuses[i], _, _, errs[i] = s.rawCall(ctx, client, e.token, method, path, body)
		}()
	}
	wg.Wait()
	took := time.Since(began)
	done, busy := 0, 0
	for i, st := range statuses {
		switch {
		case errs[i] != nil:
			t.Errorf("request %d got no answer: %v", i, errs[i])
		case st >= 200 && st < 300:
			done++
		case st == 409 || st == 412:
		case st == 503:
			busy++
		default:
			t.Errorf("request %d answered %d", i, st)
		}
	}
	t.Logf("%d writes in %s on a pool of 5: %d done, %d answered 503", n, took.Round(time.Millisecond), done, busy)
	// A pool that deadlocks answers (nearly) everything with 503 at each
	// deadline; a working one finishes these small writes long before it.
	if done < n*9/10 {
		t.Errorf("only %d of %d writes were done (%d answered 503): the pool is starved", done, n, busy)
	}
	// The API answers normally right after.
	if d := s.callWith(t, e.token, http.MethodGet, "/pages", nil); d.Status != 200 {
		t.Errorf("GET /pages after the burst = %d %s", d.Status, d.Raw)
	}
	resp, err := s.http.Get(s.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /readyz after the burst = %d", resp.StatusCode)
	}
}

// A request that cannot get a database connection before its deadline is
// answered 503 with Retry-After and the code "unavailable", not left waiting.
func TestRequestDeadlineOnAnExhaustedPoolIs503(t *testing.T) {
	s := start(t, func(c *config.Config) { c.RequestTimeout = 3 * time.Second })
	e := s.editor(t, "editor@demo.test")
	models.SizePool(s.DB.DB, 2)
	t.Cleanup(func() { models.SizePool(s.DB.DB, models.DefaultMaxConns) })
	// Hold every connection of the pool.
	ctx := context.Background()
	var held []io.Closer
	for range 2 {
		conn, err := s.DB.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, conn)
	}
	began := time.Now()
	status, header, raw, err := s.rawCall(ctx, &http.Client{Timeout: 20 * time.Second}, e.token, http.MethodGet, "/pages", nil)
	took := time.Since(began)
	for _, c := range held {
		_ = c.Close()
	}
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	if status != 503 || header.Get("Retry-After") == "" || !contains(string(raw), `"unavailable"`) {
		t.Fatalf("GET with the pool exhausted = %d Retry-After=%q %s", status, header.Get("Retry-After"), raw)
	}
	if took > 10*time.Second {
		t.Errorf("answered after %s, want about the 3s deadline", took)
	}
	if d := s.callWith(t, e.token, http.MethodGet, "/pages", nil); d.Status != 200 {
		t.Errorf("GET once connections are free = %d %s", d.Status, d.Raw)
	}
}

// The first edits of a published page, sent at once, each found no draft
// before waiting for the page's row lock and then inserted one: all but the
// first failed with 500 (a duplicate draft). Every one must be saved.
func TestConcurrentFirstEditsOfAPublishedPage(t *testing.T) {
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	var ids, drafts []string
	for i := range 4 {
		id, d := e.page(fmt.Sprintf("Live %d", i), fmt.Sprintf("live-%d", i), "")
		ids, drafts = append(ids, id), append(drafts, d)
	}
	e.mustPublish(drafts...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := &http.Client{Timeout: 30 * time.Second}
	for _, id := range ids {
		const n = 16
		statuses := make([]int, n)
		bodies := make([][]byte, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		begin := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-begin
				statuses[i], _, bodies[i], errs[i] = s.rawCall(ctx, client, e.token, http.MethodPatch, "/pages/"+id, map[string]any{"data": map[string]any{
					"type": "pages", "id": id, "attributes": map[string]any{"title": fmt.Sprintf("Edit %d", i)}}})
			}()
		}
		close(begin)
		wg.Wait()
		for i := range n {
			if errs[i] != nil || statuses[i] != 200 {
				t.Errorf("PATCH %d of page %s = %d %v %s", i, id, statuses[i], errs[i], bodies[i])
			}
		}
	}
}
