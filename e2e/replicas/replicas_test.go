package replicas_test

// What each API process keeps for itself (verified token claims, signing
// keys, shared reads, the throttle's queues) checked against what another
// process just did. Every request here is aimed at one replica by its own
// URL, so "on A ... on B" is literal.

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestAcrossReplicas runs on one cluster of 2 APIs and 2 workers, with
// signing keys that rotate every 20 s so rotation happens during the test.
func TestAcrossReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four pressroom processes")
	}
	t.Parallel()
	f := newFixture(t, setup{apis: 2, workers: 2, env: []string{"PRESSROOM_SIGNING_KEY_ROTATION=20s"}})
	a, b := f.APIs[0].URL, f.APIs[1].URL

	t.Run("revocation on A is refused on B at once", func(t *testing.T) {
		t.Parallel()
		for i := range 10 {
			tok := f.token(t, a, "editor@demo.test")
			// B verifies it first, so B's claim cache holds it, and keeps
			// verifying it under load while A revokes it: shared lookups
			// in flight must not answer for a request sent after the
			// revocation returned.
			if r := f.send(b, tok, http.MethodGet, "/users/me", nil); r.Status != 200 {
				t.Fatalf("GET /users/me on B = %s", r)
			}
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for range 3 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-stop:
							return
						default:
							f.send(b, tok, http.MethodGet, "/users/me", nil)
						}
					}
				}()
			}
			time.Sleep(50 * time.Millisecond)
			rv := f.form(a, "/oauth/revoke", url.Values{"token": {tok}, "client_id": {"pressroom"}})
			after := f.send(b, tok, http.MethodGet, "/users/me", nil)
			close(stop)
			wg.Wait()
			if rv.Err != nil || rv.Status != 200 {
				t.Fatalf("revoke on A = %s", rv)
			}
			if after.Status != 401 {
				t.Fatalf("round %d: a token revoked on A, presented to B right after = %s, want 401", i, after)
			}
		}
	})

	t.Run("rotation on A: B accepts new and old tokens", func(t *testing.T) {
		t.Parallel()
		old := f.token(t, a, "second@demo.test")
		oldKid := kid(t, old)
		if r := f.send(b, old, http.MethodGet, "/users/me", nil); r.Status != 200 {
			t.Fatalf("old token on B = %s", r)
		}
		// Wait for the key to retire (PRESSROOM_SIGNING_KEY_ROTATION=20s);
		// then A's next signing makes the next key.
		var retire time.Time
		if err := f.DB.NewRaw("SELECT retire_at FROM oauth_signing_keys WHERE id = ?", oldKid).Scan(context.Background(), &retire); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(retire) + 500*time.Millisecond)
		// Just before A makes the next key, B is shown a token naming a
		// key nobody has: B reloads its keys (at most once per 5 s) and
		// refuses it. The key A makes next must still be accepted on B at
		// once, although B may not reload the whole list again so soon.
		if r := f.send(b, forgeKid(t, old, uuid.NewString()), http.MethodGet, "/users/me", nil); r.Status != 401 {
			t.Fatalf("a token naming an unknown key on B = %s, want 401", r)
		}
		fresh := f.token(t, a, "second@demo.test")
		newKid := kid(t, fresh)
		if newKid == oldKid {
			t.Fatalf("A still signs with the key %s that retired at %s", oldKid, retire)
		}
		for name, tok := range map[string]string{"new": fresh, "old": old} {
			for _, rep := range []string{b, a} {
				if r := f.send(rep, tok, http.MethodGet, "/users/me", nil); r.Status != 200 {
					t.Errorf("%s token (signed by A) on %s = %s", name, rep, r)
				}
			}
		}
		// B signs with the key A made (it does not make a third one).
		if k := kid(t, f.token(t, b, "second@demo.test")); k != newKid {
			var n int
			_ = f.DB.NewRaw("SELECT count(*) FROM oauth_signing_keys WHERE created_at > (SELECT created_at FROM oauth_signing_keys WHERE id = ?)", oldKid).Scan(context.Background(), &n)
			if n > 1 {
				t.Errorf("B signs with %s, A with %s: %d keys were made after %s for one rotation", k, newKid, n, oldKid)
			}
		}
	})

	t.Run("a publish through A is live on B at once", func(t *testing.T) {
		t.Parallel()
		tokA, tokB := f.token(t, a, "editor@demo.test"), f.token(t, b, "editor@demo.test")
		created := f.send(a, tokA, http.MethodPost, "/pages", pageBody("", map[string]any{"title": "v0", "slug": "ryw"}))
		if created.Status != 201 {
			t.Fatalf("POST /pages on A = %s", created)
		}
		id := resourceOf(t, created).ID
		live, drafted := "/pages/"+id, "/pages/"+id+"?include=draft"
		// Reads of exactly these paths keep running on both replicas, so
		// every check below may share a run (or a batch) with one of them.
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var loadErr atomic.Value
		for _, rep := range []string{a, b} {
			for _, p := range []string{live, drafted} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						if r := f.send(rep, tokB, http.MethodGet, p, nil); r.Err != nil || (r.Status != 200 && r.Status != 404) {
							loadErr.Store(fmt.Sprintf("GET %s on %s under load = %s", p, rep, r))
						}
					}
				}()
			}
		}
		defer func() { close(stop); wg.Wait() }()
		draft := resourceOf(t, created).rel("draft")
		for i := 1; i <= 8; i++ {
			write, read := a, b
			if i%2 == 0 {
				write, read = b, a
			}
			tokW := map[string]string{a: tokA, b: tokB}[write]
			title := fmt.Sprintf("v%d", i)
			if i > 1 {
				p := f.send(write, tokW, http.MethodPatch, "/pages/"+id, pageBody(id, map[string]any{"title": title}))
				if p.Status != 200 {
					t.Fatalf("PATCH on %s = %s", write, p)
				}
				draft = resourceOf(t, p).rel("draft")
				// The drafted view on the other replica shows the edit at once.
				if got := resourceOf(t, f.send(read, tokB, http.MethodGet, drafted, nil)).Attributes["title"]; got != title {
					t.Fatalf("round %d: drafted read on %s right after the PATCH on %s = %v, want %s", i, read, write, got, title)
				}
			} else {
				title = "v0"
			}
			f.publish(t, write, tokW, draft)
			r := f.send(read, tokB, http.MethodGet, live, nil)
			if r.Status != 200 {
				t.Fatalf("round %d: live read on %s right after the publish on %s = %s", i, read, write, r)
			}
			if got := resourceOf(t, r).Attributes["title"]; got != title {
				t.Fatalf("round %d: live read on %s right after the publish on %s = %v, want %s (stale)", i, read, write, got, title)
			}
		}
		if e := loadErr.Load(); e != nil {
			t.Error(e)
		}
	})

	t.Run("a preview read on one replica shows a write on the other at once", func(t *testing.T) {
		t.Parallel()
		tokA, tokB := f.token(t, a, "editor@demo.test"), f.token(t, b, "editor@demo.test")
		created := f.send(a, tokA, http.MethodPost, "/pages", pageBody("", map[string]any{"title": "p0", "slug": "preview-ryw"}))
		if created.Status != 201 {
			t.Fatalf("POST /pages on A = %s", created)
		}
		id := resourceOf(t, created).ID
		rel := f.send(a, tokA, http.MethodPost, "/releases", map[string]any{"data": map[string]any{"type": "releases", "attributes": map[string]any{"title": "replicas"}}})
		if rel.Status != 201 {
			t.Fatalf("POST /releases on A = %s", rel)
		}
		release := resourceOf(t, rel).ID
		stage := map[string]any{"data": []map[string]any{{"type": "drafts", "id": resourceOf(t, created).rel("draft")}}}
		if r := f.send(a, tokA, http.MethodPost, "/releases/"+release+"/relationships/drafts", stage); r.Status != 204 {
			t.Fatalf("stage on A = %s", r)
		}
		preview := "/pages/" + id + "?preview-release=" + release
		for i := 1; i <= 8; i++ {
			write, read := a, b
			if i%2 == 0 {
				write, read = b, a
			}
			tokW := map[string]string{a: tokA, b: tokB}[write]
			// Both replicas keep the release's preview computed before the write.
			for _, rep := range []string{a, b} {
				if r := f.send(rep, tokB, http.MethodGet, preview, nil); r.Status != 200 {
					t.Fatalf("round %d: preview read on %s = %s", i, rep, r)
				}
			}
			title := fmt.Sprintf("p%d", i)
			if p := f.send(write, tokW, http.MethodPatch, "/pages/"+id, pageBody(id, map[string]any{"title": title})); p.Status != 200 {
				t.Fatalf("PATCH on %s = %s", write, p)
			}
			if got := resourceOf(t, f.send(read, tokB, http.MethodGet, preview, nil)).Attributes["title"]; got != title {
				t.Fatalf("round %d: preview read on %s right after the PATCH on %s = %v, want %s (stale)", i, read, write, got, title)
			}
		}
		// The set itself changes: the staged page moves under a page created
		// outside the release on A, whose create draft the closure then pulls
		// in; B, which kept the set without it, shows it at once.
		parent := f.send(a, tokA, http.MethodPost, "/pages", pageBody("", map[string]any{"title": "outside", "slug": "preview-ryw-parent"}))
		if parent.Status != 201 {
			t.Fatalf("POST /pages on A = %s", parent)
		}
		pid := resourceOf(t, parent).ID
		if r := f.send(b, tokB, http.MethodGet, "/pages/"+pid+"?preview-release="+release, nil); r.Status != 404 {
			t.Fatalf("preview of a page outside the release on B = %s, want 404", r)
		}
		move := map[string]any{"data": map[string]any{"type": "pages", "id": id, "relationships": map[string]any{"parent": map[string]any{"data": map[string]any{"type": "pages", "id": pid}}}}}
		if p := f.send(a, tokA, http.MethodPatch, "/pages/"+id, move); p.Status != 200 {
			t.Fatalf("PATCH parent on A = %s", p)
		}
		if r := f.send(b, tokB, http.MethodGet, "/pages/"+pid+"?preview-release="+release, nil); r.Status != 200 {
			t.Fatalf("preview of the pulled-in parent on B right after the PATCH on A = %s, want 200 (stale set)", r)
		}
	})

	t.Run("password guesses over both replicas stop at the limit", func(t *testing.T) {
		t.Parallel()
		// 5 failures per user (PRESSROOM_LOGIN_MAX_FAILURES) lock sign-in;
		// 16 concurrent guesses, half on each replica.
		var mu sync.Mutex
		statuses := map[int]int{}
		var wg sync.WaitGroup
		for i := range 16 {
			rep := []string{a, b}[i%2]
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := f.form(rep, "/oauth/token", url.Values{"grant_type": {"password"}, "username": {"guessed@demo.test"}, "password": {fmt.Sprintf("wrong-%d", i)}})
				mu.Lock()
				defer mu.Unlock()
				if r.Err != nil {
					statuses[-1]++
					return
				}
				statuses[r.Status]++
			}()
		}
		wg.Wait()
		t.Logf("16 concurrent wrong guesses over 2 replicas: statuses %v", statuses)
		// A guess may also be turned away busy (503: no hashing memory
		// free within PRESSROOM_HASH_WAIT on a loaded machine); it was not
		// checked, so more guesses follow, one at a time, alternating
		// replicas, until sign-in is locked. Over all of them exactly 5 are
		// checked.
		for i := 0; statuses[429] == 0 && i < 10; i++ {
			r := f.form([]string{a, b}[i%2], "/oauth/token", url.Values{"grant_type": {"password"}, "username": {"guessed@demo.test"}, "password": {"again"}})
			statuses[r.Status]++
		}
		if statuses[400] != 5 || statuses[429] == 0 || statuses[500] > 0 {
			t.Errorf("statuses %v: want exactly 5 guesses checked (400 invalid_grant) and the rest refused (429) or busy (503)", statuses)
		}
		for _, rep := range []string{a, b} {
			r := f.form(rep, "/oauth/token", url.Values{"grant_type": {"password"}, "username": {"guessed@demo.test"}, "password": {password}})
			if r.Status != 429 || r.Header.Get("Retry-After") == "" {
				t.Errorf("the right password on %s while locked = %s (Retry-After %q), want 429 with Retry-After", rep, r, r.Header.Get("Retry-After"))
			}
		}
	})
}

// forgeKid returns jwt with its header's key id replaced by kid (the
// signature no longer matches, and no key has that id).
func forgeKid(t *testing.T, jwt, kid string) string {
	t.Helper()
	_, rest, _ := strings.Cut(jwt, ".")
	h := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","kid":"` + kid + `","typ":"JWT"}`))
	return h + "." + rest
}
