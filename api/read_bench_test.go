package api_test

// Benchmarks of the hot read, GET /pages/:id (live and with include=draft),
// through the whole app in process: Fiber's handler called on a fasthttp
// request, with the middleware, the bearer-token check and the batched
// load against a real Postgres, but no socket. allocs/op is exact and
// api-cpu-µs/op is this process's CPU (getrusage) per request, without
// Postgres' or a client's: both hold on a busy machine, where bench/http's
// rates do not. Run with the services (devstack exec):
//
//	go test -run XXX -bench BenchmarkGetPage -benchmem ./api/

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/pressroom/pressroom/api"
	"github.com/pressroom/pressroom/auth"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
	"github.com/pressroom/pressroom/testsupport"
)

func BenchmarkGetPage(b *testing.B) {
	ids, token, handler := readFixture(b, 100)
	for _, query := range []string{"", "?include=draft"} {
		name := "live"
		if query != "" {
			name = "include-draft"
		}
		b.Run(name, func(b *testing.B) { benchGets(b, ids, token, query, handler) })
	}
}

// BenchmarkGetPagePreview is issue 29's read: GET /pages/:id of pages
// whose drafted titles are staged in one release, live and through the
// release's preview (?preview-release, a kept self-contained set),
// alternately, so both see the same machine:
//
//	go test -run XXX -bench BenchmarkGetPagePreview -benchmem -benchtime 20000x ./api/
func BenchmarkGetPagePreview(b *testing.B) {
	f := newReadFixture(b, 1000)
	ctx := context.Background()
	rel := &drafts.Release{SiteRecord: models.NewSiteRecord(f.site), Title: "Bench"}
	if err := drafts.CreateRelease(ctx, f.db, rel); err != nil {
		b.Fatal(err)
	}
	if _, err := f.db.ExecContext(ctx, `INSERT INTO drafts (id, site_id, item_type, item_id, event, drafted, object_changes, created_at, updated_at, version, release_id)
  SELECT gen_random_uuid(), site_id, 'pages', id, 'update', jsonb_build_object('title', title || ', drafted'), '{}', now(), now(), 1, ?
  FROM pages WHERE site_id = ?`, rel.ID, f.site); err != nil {
		b.Fatal(err)
	}
	if _, err := f.db.ExecContext(ctx, "ANALYZE"); err != nil {
		b.Fatal(err)
	}
	for range 2 {
		for _, query := range []string{"", "?preview-release=" + rel.ID.String()} {
			name := "live"
			if query != "" {
				name = "preview"
			}
			b.Run(name, func(b *testing.B) { benchGets(b, f.ids, f.token, query, f.handler) })
		}
	}
}

// benchGets sends GET /pages/<one of ids><query> b.N times, 64 at once.
func benchGets(b *testing.B, ids []string, token, query string, handler fasthttp.RequestHandler) {
	// 64 concurrent requests, as bench/http's 64 connections: the token
	// checks and loads batch as they do there.
	b.SetParallelism(32)
	var next atomic.Int64
	b.ReportAllocs()
	cpu0 := processCPU()
	b.RunParallel(func(pb *testing.PB) {
		var ctx fasthttp.RequestCtx
		var req fasthttp.Request // Init copies it into ctx
		addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
		for pb.Next() {
			req.Reset()
			ctx.Response.Reset()
			ctx.ResetUserValues() // the last request's context, cancelled
			req.SetRequestURI("/pages/" + ids[int(next.Add(1))%len(ids)] + query)
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Accept", "application/vnd.api+json")
			ctx.Init(&req, addr, nil)
			handler(&ctx)
			if ctx.Response.StatusCode() != 200 {
				b.Errorf("GET = %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
				return
			}
		}
	})
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "api-cpu-µs/op")
}

// readFixture is a site with n published pages (roots, no drafts: what a
// publish leaves), a signed-in editor's token and the app's handler.
func readFixture(b *testing.B, n int) (ids []string, token string, handler fasthttp.RequestHandler) {
	f := newReadFixture(b, n)
	return f.ids, f.token, f.handler
}

// readFixtureOf is readFixture's site, with its database.
type readFixtureOf struct {
	db      *testsupport.Database
	site    uuid.UUID
	ids     []string
	token   string
	handler fasthttp.RequestHandler
}

func newReadFixture(b *testing.B, n int) (f readFixtureOf) {
	b.Helper()
	ctx := context.Background()
	db := testsupport.NewDatabase(b)
	cfg := testsupport.Config(b, db, testsupport.Defaults().Storage)
	app, err := api.New(api.Deps{Config: cfg, DB: db.DB, Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))})
	if err != nil {
		b.Fatal(err)
	}
	site, err := models.CreateSite(ctx, db, "Bench", "bench")
	if err != nil {
		b.Fatal(err)
	}
	hash, err := auth.HashPassword("bench-password-1")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := models.CreateUser(ctx, db, site.ID, "bench@example.test", "Bench", hash); err != nil {
		b.Fatal(err)
	}
	now := time.Now().UTC()
	for i := range n {
		id := uuid.New()
		if _, err := db.ExecContext(ctx, `INSERT INTO pages (id, site_id, page_type, slug, path, title, search_engine_indexable,
  search_engine_followable, published_at, created_at, updated_at, version) VALUES (?, ?, 'page', ?, ?, ?, true, true, ?, ?, ?, 2)`,
			id, site.ID, fmt.Sprintf("page-%d", i), fmt.Sprintf("/page-%d", i), fmt.Sprintf("Page %d", i), now, now, now); err != nil {
			b.Fatal(err)
		}
		f.ids = append(f.ids, id.String())
	}
	if _, err := db.ExecContext(ctx, "ANALYZE"); err != nil {
		b.Fatal(err)
	}
	handler := app.Handler()
	var rc fasthttp.RequestCtx
	var req fasthttp.Request
	req.Header.SetMethod("POST")
	req.SetRequestURI("/oauth/token")
	req.Header.SetContentType("application/x-www-form-urlencoded")
	req.SetBodyString("grant_type=password&username=bench%40example.test&password=bench-password-1")
	rc.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}, nil)
	handler(&rc)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(rc.Response.Body(), &tok); err != nil || tok.AccessToken == "" {
		b.Fatalf("password grant = %d %s", rc.Response.StatusCode(), rc.Response.Body())
	}
	f.db, f.site, f.token, f.handler = db, site.ID, strings.TrimSpace(tok.AccessToken), handler
	return f
}

// processCPU is the user and system CPU time of this process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
