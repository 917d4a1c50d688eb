package readcache_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/readcache"
	"github.com/pressroom/pressroom/testsupport"
)

// TestAChangeCommittedBeforeAGetIsNeverServed runs the cache against
// Postgres: a page's row changed and committed (through the pool, as a
// publish does) drops the site's documents before any Get that began after
// the commit can answer, though nothing waits for the notification.
func TestAChangeCommittedBeforeAGetIsNeverServed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db := testsupport.NewDatabase(t)
	site, err := models.CreateSite(ctx, db, "Cache", "cache")
	if err != nil {
		t.Fatal(err)
	}
	other, err := models.CreateSite(ctx, db, "Other", "other")
	if err != nil {
		t.Fatal(err)
	}
	page := uuid.New()
	if _, err := db.ExecContext(ctx, `INSERT INTO pages (id, site_id, page_type, slug, path, title, published_at)
		VALUES (?, ?, 'page', 'p', '/p', 'v0', now())`, page, site.ID); err != nil {
		t.Fatal(err)
	}
	c, ln := readcache.Listening(db.URL, readcache.DefaultLimits)
	go ln.Run(ctx)
	for deadline := time.Now().Add(10 * time.Second); c.Begin(site.ID) == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the listener never listened")
		}
	}
	key := "/pages/" + page.String()
	for i := 1; i <= 200; i++ {
		c.Begin(site.ID).Store(key, readcache.Response{Status: 200, Body: []byte("stale")})
		c.Begin(other.ID).Store(key, readcache.Response{Status: 200, Body: []byte("other")})
		if _, err := db.ExecContext(ctx, `UPDATE pages SET title = ? WHERE id = ?`, i, page); err != nil {
			t.Fatal(err)
		}
		if r, ok, _ := c.Get(ctx, site.ID, key); ok {
			t.Fatalf("round %d: served %q after the page's change committed", i, r.Body)
		}
		if _, ok, _ := c.Get(ctx, other.ID, key); !ok {
			t.Fatalf("round %d: another site's change dropped this site's document", i)
		}
	}
	// A membership's change drops the token lookups.
	if _, err := models.CreateUser(ctx, db, site.ID, "a@cache.test", "A", "x"); err != nil {
		t.Fatal(err)
	}
	user, err := models.CreateUser(ctx, db, site.ID, "u@cache.test", "U", "x")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`UPDATE memberships SET role = 'viewer' WHERE user_id = ?`, `DELETE FROM memberships WHERE user_id = ?`} {
		c.Begin(readcache.AuthSite).Store("token", readcache.Response{Body: []byte("editor")})
		if _, err := db.ExecContext(ctx, q, user.ID); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := c.Get(ctx, readcache.AuthSite, "token"); ok {
			t.Fatalf("a token's lookup served after %s committed", q)
		}
	}
	// Deletes too.
	c.Begin(site.ID).Store(key, readcache.Response{Status: 200, Body: []byte("stale")})
	if _, err := db.ExecContext(ctx, `DELETE FROM pages WHERE id = ?`, page); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := c.Get(ctx, site.ID, key); ok {
		t.Fatal("served a deleted page")
	}
}
