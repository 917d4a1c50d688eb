package api

import (
	"io"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pressroom/pressroom/api/oauth"
)

// Requests that queue behind a run get its status, ETag and body; HEAD and
// another site never share with a GET of this site.
func TestSharedReadsReplayTheRunsResponse(t *testing.T) {
	var runs atomic.Int32
	release, hold := make(chan struct{}), make(chan struct{})
	site, other := uuid.New(), uuid.New()
	app := fiber.New()
	app.Use(func(c *fiber.Ctx) error {
		s := site
		if c.Get("X-Site") == "other" {
			s = other
		}
		oauth.WithPrincipal(c, &oauth.Principal{SiteID: s})
		return c.Next()
	})
	shared := &sharedReads{}
	app.Get("/x", shared.wrap(func(c *fiber.Ctx) error {
		n := runs.Add(1)
		if n == 1 {
			<-release // hold the first run so the others queue behind it
		}
		if c.Get("X-Hold") != "" {
			<-hold
		}
		c.Set(fiber.HeaderETag, `"x.1"`)
		return c.Status(203).SendString("body")
	}))

	type result struct {
		status int
		etag   string
		body   string
	}
	do := func(method, siteHeader string, headers ...string) result {
		req := httptest.NewRequest(method, "/x?a=1", nil)
		req.Header.Set("X-Site", siteHeader)
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := app.Test(req, -1)
		if err != nil {
			t.Error(err)
			return result{}
		}
		b, _ := io.ReadAll(resp.Body)
		return result{resp.StatusCode, resp.Header.Get("ETag"), string(b)}
	}
	first := make(chan result)
	go func() { first <- do("GET", "") }()
	deadline := time.Now().Add(5 * time.Second)
	for runs.Load() != 1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	var wg sync.WaitGroup
	results := make([]result, 8)
	for i := range results {
		wg.Add(1)
		go func() { defer wg.Done(); results[i] = do("GET", "") }()
	}
	time.Sleep(50 * time.Millisecond)
	close(release)
	if r := <-first; r != (result{203, `"x.1"`, "body"}) {
		t.Fatalf("first = %+v", r)
	}
	wg.Wait()
	for i, r := range results {
		if r != (result{203, `"x.1"`, "body"}) {
			t.Errorf("queued request %d = %+v", i, r)
		}
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("8 queued requests ran the handler %d times after the first, want once", n-1)
	}
	// While a GET of this site is held, another site's GET and a HEAD of
	// the same URL run at once: they share nothing with it.
	held := make(chan result)
	go func() { held <- do("GET", "", "X-Hold", "1") }()
	for runs.Load() != 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	for _, method := range []string{"GET", "HEAD"} {
		site := map[string]string{"GET": "other", "HEAD": ""}[method]
		done := make(chan result, 1)
		go func() { done <- do(method, site) }()
		select {
		case r := <-done:
			if r.status != 203 {
				t.Errorf("%s (site %q) = %+v", method, site, r)
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("%s (site %q) waited for another site's or method's run", method, site)
		}
	}
	close(hold)
	<-held
}
