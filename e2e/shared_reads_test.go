package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pressroom/pressroom/testsupport"
)

// Identical concurrent reads share one handler run (api/shared_reads.go)
// and one token lookup (api/oauth/verify.go). These tests hammer the shared
// paths while writing, and check the one thing sharing could break: a read
// sent after a write returned must see that write, on both the drafted and
// the live view, and never another site's data.

// hammer runs get on n goroutines until stop is closed, counting requests.
func hammer(n int, stop <-chan struct{}, get func() error) (wait func() (int64, error)) {
	var wg sync.WaitGroup
	var count atomic.Int64
	var first atomic.Pointer[error]
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := get(); err != nil {
					first.CompareAndSwap(nil, &err)
					return
				}
				count.Add(1)
			}
		}()
	}
	return func() (int64, error) {
		wg.Wait()
		if e := first.Load(); e != nil {
			return count.Load(), *e
		}
		return count.Load(), nil
	}
}

// rawGet is a GET for load, without a *testing.T: status and body, and an
// error when the response is not a valid one (checkResponse).
func (s *system) rawGet(token, path string) (int, []byte, error) {
	req, _ := http.NewRequest(http.MethodGet, s.URL+path, nil)
	req.Header.Set("Accept", "application/vnd.api+json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := s.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil {
		err = s.checkResponse(req, resp, b)
	}
	return resp.StatusCode, b, err
}

func titleOf(t *testing.T, b []byte) string {
	t.Helper()
	var d struct {
		Data struct{ Attributes struct{ Title string } }
	}
	testsupport.ValidateJSONAPI(t, b)
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("not a document: %s", b)
	}
	return d.Data.Attributes.Title
}

func TestSharedReadsNeverPredateAReturnedWrite(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	otherToken := s.token(t, "editor@other.test")
	id, draft := e.page("v0", "shared", "")
	e.mustPublish(draft)
	live, drafted := "/pages/"+id, "/pages/"+id+"?include=draft"

	// Neighbours: reads of other pages join the same batched queries.
	var neighbours []string
	for i := range 6 {
		nid, nd := e.page(fmt.Sprintf("Neighbour %d", i), fmt.Sprintf("n%d", i), "")
		e.mustPublish(nd)
		neighbours = append(neighbours, "/pages/"+nid, "/pages/"+nid+"?include=draft")
	}

	stop := make(chan struct{})
	// Load on exactly the paths checked below, so checks share runs with it,
	// and on the neighbours, so they share batches; every answer must be
	// the record asked for.
	var waits []func() (int64, error)
	for _, p := range append([]string{live, drafted}, neighbours...) {
		want := strings.TrimPrefix(strings.TrimSuffix(p, "?include=draft"), "/pages/")
		waits = append(waits, hammer(2, stop, func() error {
			st, b, err := s.rawGet(e.token, p)
			if err != nil || st != 200 {
				return fmt.Errorf("GET %s under load = %d %v %s", p, st, err, b)
			}
			var d struct{ Data struct{ ID string } }
			if json.Unmarshal(b, &d) != nil || d.Data.ID != want {
				return fmt.Errorf("GET %s under load answered another record: %s", p, b)
			}
			return nil
		}))
		// Another site asking for the same path shares nothing with it.
		waits = append(waits, hammer(2, stop, func() error {
			if st, b, err := s.rawGet(otherToken, p); err != nil || st != 404 {
				return fmt.Errorf("another site's GET %s = %d %v %s", p, st, err, b)
			}
			return nil
		}))
	}

	published := "v0"
	for i := 1; i <= 30; i++ {
		title := fmt.Sprintf("v%d", i)
		d := e.do(http.MethodPatch, live, map[string]any{"data": map[string]any{"type": "pages", "id": id, "attributes": map[string]any{"title": title}}})
		if d.Status != 200 {
			t.Fatalf("PATCH = %d %s", d.Status, d.Raw)
		}
		if _, b, _ := s.rawGet(e.token, drafted); titleOf(t, b) != title {
			t.Fatalf("drafted read after PATCH %q returned shows %q", title, titleOf(t, b))
		}
		if _, b, _ := s.rawGet(e.token, live); titleOf(t, b) != published {
			t.Fatalf("live read shows %q before publishing; published is %q", titleOf(t, b), published)
		}
		if i%5 == 0 {
			e.mustPublish(draftOf(t, d.resource(t)))
			published = title
			if _, b, _ := s.rawGet(e.token, live); titleOf(t, b) != published {
				t.Fatalf("live read after the revision returned shows %q, want %q", titleOf(t, b), published)
			}
		}
	}
	close(stop)
	var total int64
	for _, w := range waits {
		n, err := w()
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	t.Logf("%d reads under load", total)
}

// A token revoked out of band (as an operator would, in SQL) is refused by
// the very next request, even while the same token's lookups are shared by
// a crowd of concurrent requests.
func TestRevocationTakesEffectAtOnceUnderLoad(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	id, draft := e.page("Home", "home", "")
	e.mustPublish(draft)

	stop := make(chan struct{})
	var refused atomic.Int64
	wait := hammer(8, stop, func() error {
		st, b, err := s.rawGet(e.token, "/pages/"+id)
		switch {
		case err != nil:
			return err
		case st == 401:
			refused.Add(1)
		case st != 200:
			return fmt.Errorf("GET under load = %d %s", st, b)
		}
		return nil
	})
	// Let the load overlap a few shared lookups first.
	for i := 0; i < 10; i++ {
		if st, _, err := s.rawGet(e.token, "/pages/"+id); err != nil || st != 200 {
			t.Fatalf("before revoking: %d %v", st, err)
		}
	}
	if _, err := s.DB.ExecContext(context.Background(), "UPDATE oauth_access_tokens SET revoked_at = now()"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if st, b, err := s.rawGet(e.token, "/pages/"+id); err != nil || st != 401 {
			t.Fatalf("request %d after the revocation committed = %d %v %s, want 401", i, st, err, b)
		}
	}
	close(stop)
	n, err := wait()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d requests under load, %d of them refused after the revocation", n, refused.Load())
}
