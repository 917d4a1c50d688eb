package readcache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
)

// syncer counts Syncs and runs what a test wants during one (as the
// listener hands notifications to the cache during its round trip).
type syncer struct {
	n      atomic.Int64
	during func()
	err    error
}

func (s *syncer) Sync(context.Context) error {
	s.n.Add(1)
	if s.during != nil {
		s.during()
	}
	return s.err
}

func res(body string) Response {
	return Response{Status: 200, ContentType: "application/vnd.api+json", ETag: `"1"`, Body: []byte(body)}
}

func newLive(l Limits) (*Cache, *syncer) {
	s := &syncer{}
	c := New(l, s)
	c.Live(true)
	return c, s
}

func fill(c *Cache, site uuid.UUID, key, body string) {
	c.Begin(site).Store(key, res(body))
}

func TestMissFillHitAfterSync(t *testing.T) {
	c, s := newLive(DefaultLimits)
	site := uuid.New()
	if _, ok, _ := c.Get(context.Background(), site, "/pages/1"); ok {
		t.Fatal("hit in an empty cache")
	}
	if s.n.Load() != 0 {
		t.Fatal("a miss waited for a Sync")
	}
	fill(c, site, "/pages/1", "one")
	got, ok, _ := c.Get(context.Background(), site, "/pages/1")
	if !ok || string(got.Body) != "one" {
		t.Fatalf("Get = %q, %v", got.Body, ok)
	}
	if s.n.Load() != 1 {
		t.Fatalf("a hit made %d Syncs, want 1", s.n.Load())
	}
	if _, ok, _ := c.Get(context.Background(), uuid.New(), "/pages/1"); ok {
		t.Fatal("another site's read hit the entry")
	}
}

func TestInvalidationDuringTheSyncIsNotServed(t *testing.T) {
	c, s := newLive(DefaultLimits)
	site := uuid.New()
	fill(c, site, "/pages/1", "old")
	s.during = func() { c.Notified(site.String()) }
	if got, ok, _ := c.Get(context.Background(), site, "/pages/1"); ok {
		t.Fatalf("served %q though its site changed before the Sync returned", got.Body)
	}
}

func TestAFillBegunBeforeAnInvalidationIsNotStored(t *testing.T) {
	c, _ := newLive(DefaultLimits)
	site, other := uuid.New(), uuid.New()
	f, g := c.Begin(site), c.Begin(other)
	c.Invalidate(site)
	f.Store("/pages/1", res("read before the change"))
	g.Store("/pages/2", res("other site"))
	if _, ok, _ := c.Get(context.Background(), site, "/pages/1"); ok {
		t.Fatal("stored a fill that began before its site's invalidation")
	}
	if _, ok, _ := c.Get(context.Background(), other, "/pages/2"); !ok {
		t.Fatal("another site's invalidation dropped this site's fill")
	}
	// A fill begun after the invalidation stores.
	fill(c, site, "/pages/1", "new")
	if got, ok, _ := c.Get(context.Background(), site, "/pages/1"); !ok || string(got.Body) != "new" {
		t.Fatalf("Get = %q, %v", got.Body, ok)
	}
}

func TestNothingWithoutTheListener(t *testing.T) {
	s := &syncer{}
	c := New(DefaultLimits, s)
	site := uuid.New()
	if c.Begin(site) != nil {
		t.Fatal("a fill began before the listener listened")
	}
	c.Live(true)
	fill(c, site, "/pages/1", "one")
	f := c.Begin(site)
	c.Live(false) // the connection is lost: notifications may be missed
	f.Store("/pages/2", res("two"))
	if _, ok, _ := c.Get(context.Background(), site, "/pages/1"); ok {
		t.Fatal("served while not listening")
	}
	c.Live(true)
	for _, k := range []string{"/pages/1", "/pages/2"} {
		if _, ok, _ := c.Get(context.Background(), site, k); ok {
			t.Fatalf("%s survived the reconnection", k)
		}
	}
	fill(c, site, "/pages/1", "one")
	s.err = errors.New("sync failed")
	if _, ok, _ := c.Get(context.Background(), site, "/pages/1"); ok {
		t.Fatal("served after a failed Sync")
	}
	if c.Len() != 1 {
		t.Fatalf("Len = %d", c.Len())
	}
	c.Flush()
	if c.Len() != 0 || c.Bytes() != 0 || len(c.sites) != 0 {
		t.Fatalf("after Flush: %d entries, %d bytes, %d sites", c.Len(), c.Bytes(), len(c.sites))
	}
}

func TestBounds(t *testing.T) {
	body := string(make([]byte, 1000-entryOverhead-len("k00")-len(`"1"`)-len("application/vnd.api+json")))
	c, _ := newLive(Limits{Bytes: 10 * 1000, SiteBytes: 4 * 1000})
	a, b, d := uuid.New(), uuid.New(), uuid.New()
	for i := range 6 {
		fill(c, a, fmt.Sprintf("k%02d", i), body)
	}
	if got := c.sites[a].bytes; got != 4000 || c.Len() != 4 {
		t.Fatalf("site a holds %d bytes in %d entries, want 4000 in 4", got, c.Len())
	}
	// The site's least recently used went first: k00, k01.
	if _, ok, _ := c.Get(context.Background(), a, "k01"); ok {
		t.Fatal("k01 kept, k00 and k01 were the oldest")
	}
	if _, ok, _ := c.Get(context.Background(), a, "k02"); !ok { // now the most recent
		t.Fatal("k02 evicted")
	}
	for i := range 4 {
		fill(c, b, fmt.Sprintf("k%02d", i), body)
	}
	for i := range 3 {
		fill(c, d, fmt.Sprintf("k%02d", i), body)
	}
	if c.Bytes() > 10000 {
		t.Fatalf("Bytes = %d over the bound", c.Bytes())
	}
	// Over all sites the least recently used went: a's k03 (k02 was read).
	if _, ok, _ := c.Get(context.Background(), a, "k03"); ok {
		t.Fatal("a's k03 kept")
	}
	if _, ok, _ := c.Get(context.Background(), a, "k02"); !ok {
		t.Fatal("a's k02, read recently, evicted")
	}
	c.Begin(a).Store("huge", Response{Body: make([]byte, 5000)})
	if _, ok, _ := c.Get(context.Background(), a, "huge"); ok {
		t.Fatal("stored an entry larger than a site's bound")
	}
}

// TestConcurrentUse runs fills, hits and invalidations at once (go test
// -race), checking that no hit answers with a body older than the last
// invalidation that returned before the Get began.
func TestConcurrentUse(t *testing.T) {
	c, _ := newLive(Limits{Bytes: 1 << 20, SiteBytes: 1 << 18})
	sites := []uuid.UUID{uuid.New(), uuid.New()}
	var version [2]atomic.Int64  // what a read of the site would see now
	var notified [2]atomic.Int64 // the last version whose notification was handled
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 3000 {
				si := (w + i) % 2
				key := fmt.Sprintf("/pages/%d", i%50)
				if w == 0 && i%10 == 0 {
					version[si].Add(1) // a commit...
					c.Notified(sites[si].String())
					notified[si].Store(version[si].Load())
					continue // ...whose notification was handled
				}
				want := notified[si].Load()
				if r, ok, _ := c.Get(context.Background(), sites[si], key); ok {
					var v int64
					fmt.Sscan(string(r.Body), &v)
					if v < want {
						t.Errorf("hit of version %d after version %d was notified", v, want)
						return
					}
					continue
				}
				f := c.Begin(sites[si])
				f.Store(key, res(fmt.Sprint(version[si].Load())))
			}
		}()
	}
	wg.Wait()
	c.Flush()
	if len(c.sites) != 0 {
		t.Fatalf("%d sites kept after every fill ended and a flush", len(c.sites))
	}
}

// TestSyncedLooksUpWithoutASecondRoundTrip: a request whose first Get
// waited for a Sync looks up the rest with Synced, which waits for none
// and still serves nothing while the listener is down.
func TestSyncedLooksUpWithoutASecondRoundTrip(t *testing.T) {
	c, s := newLive(DefaultLimits)
	site := uuid.New()
	fill(c, AuthSite, "token", "editor")
	fill(c, site, "/pages/1", "one")
	if _, ok, synced := c.Get(context.Background(), site, "/pages/2"); ok || synced {
		t.Fatalf("a miss = %v, synced %v", ok, synced)
	}
	if _, ok, synced := c.Get(context.Background(), AuthSite, "token"); !ok || !synced {
		t.Fatalf("the token's Get = %v, synced %v", ok, synced)
	}
	if got, ok := c.Synced(site, "/pages/1"); !ok || string(got.Body) != "one" || s.n.Load() != 1 {
		t.Fatalf("Synced = %q, %v after %d Syncs, want one, true after 1", got.Body, ok, s.n.Load())
	}
	c.Live(false)
	fill(c, site, "/pages/1", "one")
	if _, ok := c.Synced(site, "/pages/1"); ok {
		t.Fatal("Synced served while not listening")
	}
}
