// Package readcache keeps rendered live documents (GET /pages/:id and the
// other content kinds' reads without a query) so that a read nothing has
// changed since costs no query of its own. docs/caching.md says what is
// kept, for how long, and why no reader sees a document older than a
// change it could know of.
//
// A Cache belongs to one API process (api.Deps.Reads); nothing here is
// global. Entries are dropped by site: a notification of a change to any
// live record of a site (models.ReadsChannel) drops all of the site's.
package readcache

import (
	"context"
	"sync"

	"github.com/google/uuid"
)

// Response is a cached answer: what the handler wrote.
type Response struct {
	Status      int
	ContentType string
	ETag        string
	Body        []byte
}

// Syncer waits until every invalidation committed before the call has
// reached the cache (models.ReadListener.Sync).
type Syncer interface {
	Sync(ctx context.Context) error
}

// Limits bound the memory a Cache holds, counted as the bytes of the keys
// and responses plus entryOverhead per entry.
type Limits struct {
	Bytes     int // all sites together
	SiteBytes int // one site: a large site cannot evict every other
}

// DefaultLimits are serve's: 128 MiB in all, 32 MiB for one site (about
// 18,000 documents of a page of a short title, 1.7 KB each).
var DefaultLimits = Limits{Bytes: 128 << 20, SiteBytes: 32 << 20}

// entryOverhead approximates an entry's bookkeeping (struct, map slot,
// headers).
const entryOverhead = 160

// Cache is a size-bounded LRU of responses, by site and key.
type Cache struct {
	limits Limits
	sync   Syncer

	mu    sync.Mutex
	live  bool // the listener listens: invalidations arrive
	bytes int
	sites map[uuid.UUID]*site
	lru   ring // every entry, most recently used first
}

// site is one site's entries and generation: gen moves at each of the
// site's invalidations, and a fill stores only if it did not move since
// the fill began.
type site struct {
	id      uuid.UUID
	gen     uint64
	fills   int // fills begun and not ended
	bytes   int
	entries map[string]*entry
	lru     ring // the site's entries, most recently used first
}

type entry struct {
	key  string
	site *site
	res  Response
	size int
	all  links // in Cache.lru
	own  links // in site.lru
}

// New is an empty cache; it serves nothing until Live(true) and asks s
// before each hit.
func New(limits Limits, s Syncer) *Cache {
	c := &Cache{limits: limits, sync: s, sites: map[uuid.UUID]*site{}}
	c.lru.init(func(e *entry) *links { return &e.all })
	return c
}

// Get answers a read of key on siteID from the cache, or false. A hit is
// answered only after a Sync that began after the call: every change
// committed before the read arrived has dropped its documents by then.
// synced tells that such a Sync completed (then the request's later
// lookups may use Synced).
func (c *Cache) Get(ctx context.Context, siteID uuid.UUID, key string) (res Response, ok, synced bool) {
	if c == nil {
		return Response{}, false, false
	}
	c.mu.Lock()
	s := c.sites[siteID]
	found := c.live && s != nil && s.entries[key] != nil
	c.mu.Unlock()
	if !found || c.sync.Sync(ctx) != nil {
		return Response{}, false, false
	}
	res, ok = c.Synced(siteID, key)
	return res, ok, true
}

// Synced is Get for a caller that already had a Get of this request
// answer synced: a Sync that began after the request arrived covers
// every later lookup of the request too (docs/caching.md), so no second
// round trip is waited for.
func (c *Cache) Synced(siteID uuid.UUID, key string) (Response, bool) {
	if c == nil {
		return Response{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live {
		return Response{}, false
	}
	// Looked up again: the entry may have been dropped, or another fill
	// stored, during the Sync; whatever is here now is as fresh as it.
	s := c.sites[siteID]
	if s == nil {
		return Response{}, false
	}
	e := s.entries[key]
	if e == nil {
		return Response{}, false
	}
	c.lru.toFront(e)
	s.lru.toFront(e)
	return e.res, true
}

// Fill is a read that may store its answer: Begin before the read's query,
// then Store or End.
type Fill struct {
	c    *Cache
	site *site
	gen  uint64
}

// Begin starts a fill of siteID's key; nil when the cache takes nothing
// (no listener: invalidations would be missed).
func (c *Cache) Begin(siteID uuid.UUID) *Fill {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live {
		return nil
	}
	s := c.sites[siteID]
	if s == nil {
		s = &site{id: siteID, entries: map[string]*entry{}}
		s.lru.init(func(e *entry) *links { return &e.own })
		c.sites[siteID] = s
	}
	s.fills++
	return &Fill{c: c, site: s, gen: s.gen}
}

// Store keeps res under key, unless the site was invalidated since Begin
// (the read may have seen the state before that change), and ends the
// fill.
func (f *Fill) Store(key string, res Response) {
	if f == nil {
		return
	}
	c := f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	defer f.end()
	s := f.site
	size := len(key) + len(res.ContentType) + len(res.ETag) + len(res.Body) + entryOverhead
	if !c.live || s.gen != f.gen || size > c.limits.SiteBytes || size > c.limits.Bytes {
		return
	}
	if old := s.entries[key]; old != nil {
		c.remove(old)
	}
	e := &entry{key: key, site: s, res: res, size: size}
	s.entries[key] = e
	c.lru.pushFront(e)
	s.lru.pushFront(e)
	s.bytes += size
	c.bytes += size
	for s.bytes > c.limits.SiteBytes {
		c.remove(s.lru.back())
	}
	for c.bytes > c.limits.Bytes {
		c.remove(c.lru.back())
	}
}

// End ends a fill that stores nothing.
func (f *Fill) End() {
	if f == nil {
		return
	}
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	f.end()
}

// end, with c.mu held: the fill no longer needs its site's generation.
func (f *Fill) end() {
	f.site.fills--
	f.c.forget(f.site)
}

// Invalidate drops siteID's entries and fails its fills in flight.
func (c *Cache) Invalidate(siteID uuid.UUID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.sites[siteID]; s != nil {
		c.drop(s)
	}
}

// AuthSite holds the token lookups (api/oauth): not a site, the entries
// a notification "auth" drops (a change to access tokens or memberships).
var AuthSite = uuid.Nil

// Notified is the listener's Notified: a site id drops the site's
// documents, "auth" the token lookups; anything else (none is sent
// today) drops everything.
func (c *Cache) Notified(payload string) {
	if payload == "auth" {
		c.Invalidate(AuthSite)
		return
	}
	id, err := uuid.Parse(payload)
	if err != nil {
		c.Flush()
		return
	}
	c.Invalidate(id)
}

// Flush drops every entry and fails every fill in flight.
func (c *Cache) Flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.sites {
		c.drop(s)
	}
}

// Live is the listener's Live: while it is false nothing is served or
// stored, and each change of it flushes (notifications may have been
// missed in between).
func (c *Cache) Live(live bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.live = live
	for _, s := range c.sites {
		c.drop(s)
	}
}

// Len and Bytes are for tests and metrics.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.n
}

// Bytes is the memory the entries are counted as.
func (c *Cache) Bytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// drop, with c.mu held: s's entries go and its generation moves.
func (c *Cache) drop(s *site) {
	s.gen++
	for _, e := range s.entries {
		c.remove(e)
	}
}

// remove, with c.mu held, takes e out of the cache.
func (c *Cache) remove(e *entry) {
	s := e.site
	delete(s.entries, e.key)
	c.lru.unlink(e)
	s.lru.unlink(e)
	s.bytes -= e.size
	c.bytes -= e.size
	c.forget(s)
}

// forget, with c.mu held, lets go of a site with no entries and no fill.
func (c *Cache) forget(s *site) {
	if len(s.entries) == 0 && s.fills == 0 && c.sites[s.id] == s {
		delete(c.sites, s.id)
	}
}
