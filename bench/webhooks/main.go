// Command webhooks benchmarks webhook delivery against the real stack:
// 1,000 events fanned out to 3 webhooks whose receiver runs in this
// process, delivered by `pressroom worker` running as a separate process.
//
//	go run ./bench/webhooks [-events 1000] [-webhooks 3] [-concurrency 8] [-keep]
//
// It uses the services named by the PRESSROOM_TEST_* variables when they
// are set, else starts a private stack (benchenv). On a fresh database it
// creates a site, a user, one page draft (the events' subject) and the
// webhooks (through the API), then records -events draft.reverted events
// with models.RecordEvent, one transaction each, -concurrency at once: the
// outbox write a real change makes, without the change's own cost. It
// measures the time from the first commit until every delivery succeeded
// (polled in the database every 100 ms), the deliveries per second, and
// the worker process's CPU time (utime + stime from /proc/<pid>/stat) per
// delivery. It checks that every delivery arrived, signed, exactly once,
// and in event order per webhook.
package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/bench/internal/benchenv"
	"github.com/pressroom/pressroom/dev"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/webhooks"
)

type options struct {
	events, hooks, concurrency int
	keep                       bool
}

func main() {
	var o options
	flag.IntVar(&o.events, "events", 1000, "events to record")
	flag.IntVar(&o.hooks, "webhooks", 3, "webhooks subscribed to every event")
	flag.IntVar(&o.concurrency, "concurrency", 8, "transactions recording events at once")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (logs)")
	flag.Parse()
	log.SetFlags(0)
	if o.events < 1 || o.hooks < 1 || o.hooks > 20 || o.concurrency < 1 {
		log.Fatal("-events and -concurrency must be at least 1, -webhooks 1 to 20")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, o)
	stop()
	if err != nil {
		log.Fatal("bench/webhooks: ", err)
	}
}

// receiver counts what each webhook (by path) got, in order.
type receiver struct {
	mu      sync.Mutex
	secrets map[string]string   // path → secret
	got     map[string][]string // path → webhook-ids in arrival order
	bad     atomic.Int64
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	secret := r.secrets[req.URL.Path]
	r.mu.Unlock()
	if !verify(secret, req.Header, body) {
		r.bad.Add(1)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.got[req.URL.Path] = append(r.got[req.URL.Path], req.Header.Get("webhook-id"))
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// verify is the Standard Webhooks check (HMAC-SHA256 of id.timestamp.body).
func verify(secret string, h http.Header, body []byte) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(h.Get("webhook-id") + "." + h.Get("webhook-timestamp") + "."))
	m.Write(body)
	want := "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
	for _, s := range strings.Fields(h.Get("webhook-signature")) {
		if hmac.Equal([]byte(s), []byte(want)) {
			return true
		}
	}
	return false
}

func run(ctx context.Context, o options) error {
	env, err := benchenv.New("pressroom-bench-webhooks-", o.keep)
	if err != nil {
		return err
	}
	defer env.Close()
	wait := dev.BuildPressroom(ctx, env.Root, env.Dir)
	if err := env.Up(ctx); err != nil {
		return err
	}
	bin, err := wait()
	if err != nil {
		return err
	}
	proc, logPath, err := env.StartWorker(ctx, bin)
	if err != nil {
		return err
	}
	c, err := env.User(ctx)
	if err != nil {
		return err
	}
	rcv := &receiver{secrets: map[string]string{}, got: map[string][]string{}}
	srv := httptest.NewServer(rcv)
	defer srv.Close()

	fmt.Println("pressroom webhook benchmark")
	fmt.Printf("machine:  %s\n", benchenv.Machine())
	fmt.Printf("services: %s; API in this process, `pressroom worker` as process %d (log %s)\n", env.Where, proc.Pid(), logPath)
	fmt.Printf("load average at start: %s\n", benchenv.LoadAvg())

	// The subject: one page draft, through the API.
	b, err := c.Call(ctx, http.MethodPost, "/pages", map[string]any{"data": map[string]any{"type": "pages",
		"attributes": map[string]any{"title": "Subject", "slug": "subject"}}}, 201)
	if err != nil {
		return err
	}
	var page struct {
		Data struct {
			Relationships struct {
				Draft struct{ Data struct{ ID string } }
			}
		}
	}
	if err := json.Unmarshal(b, &page); err != nil {
		return err
	}
	draftID := uuid.MustParse(page.Data.Relationships.Draft.Data.ID)
	for i := 0; i < o.hooks; i++ {
		path := fmt.Sprintf("/hook-%d", i)
		b, err := c.Call(ctx, http.MethodPost, "/webhooks", map[string]any{"data": map[string]any{"type": "webhooks",
			"attributes": map[string]any{"url": srv.URL + path, "events": []string{webhooks.DraftReverted}}}}, 201)
		if err != nil {
			return err
		}
		var hook struct {
			Data struct{ Attributes struct{ Secret string } }
		}
		if err := json.Unmarshal(b, &hook); err != nil {
			return err
		}
		rcv.secrets[path] = hook.Data.Attributes.Secret
	}
	var site struct {
		ID uuid.UUID `bun:"id"`
	}
	if err := env.DB.NewSelect().Table("sites").Column("id").Where("subdomain_slug = 'bench'").Scan(ctx, &site); err != nil {
		return err
	}

	cpu0, err := processCPU(proc.Pid())
	if err != nil {
		return err
	}
	began := time.Now()
	var next atomic.Int64
	errs := make(chan error, o.concurrency)
	for w := 0; w < o.concurrency; w++ {
		go func() {
			for next.Add(1) <= int64(o.events) {
				err := env.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
					return models.RecordEvent(ctx, tx, models.Event{SiteID: site.ID, Type: webhooks.DraftReverted, SubjectType: "drafts", SubjectID: draftID})
				})
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for w := 0; w < o.concurrency; w++ {
		if err := <-errs; err != nil {
			return err
		}
	}
	recorded := time.Since(began)
	want := o.events * o.hooks
	var succeeded, failed int
	lastReport := time.Now()
	for {
		var counts []struct {
			Status string `bun:"status"`
			N      int    `bun:"n"`
		}
		if err := env.DB.NewSelect().Table("webhook_deliveries").ColumnExpr("status, count(*) AS n").Group("status").Scan(ctx, &counts); err != nil {
			return err
		}
		succeeded, failed = 0, 0
		for _, c := range counts {
			switch c.Status {
			case models.DeliverySucceeded:
				succeeded = c.N
			case models.DeliveryFailed:
				failed = c.N
			}
		}
		if succeeded+failed >= want {
			break
		}
		if time.Since(lastReport) > 10*time.Second {
			fmt.Printf("  … %d of %d delivered after %.0fs\n", succeeded, want, time.Since(began).Seconds())
			lastReport = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	took := time.Since(began)
	cpu1, err := processCPU(proc.Pid())
	if err != nil {
		return err
	}

	// Exactly once and in order: each webhook got every delivery once, in
	// the order of the events (their seq).
	var order []struct {
		ID        string `bun:"id"`
		WebhookID string `bun:"webhook_id"`
		URL       string `bun:"url"`
	}
	if err := env.DB.NewRaw(`SELECT d.id, d.webhook_id, w.url FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id ORDER BY d.seq`).Scan(ctx, &order); err != nil {
		return err
	}
	expected := map[string][]string{}
	for _, d := range order {
		path := d.URL[len(srv.URL):]
		expected[path] = append(expected[path], d.ID)
	}
	rcv.mu.Lock()
	var problems []string
	for path, ids := range expected {
		got := rcv.got[path]
		if strings.Join(got, ",") != strings.Join(ids, ",") {
			problems = append(problems, fmt.Sprintf("%s: got %d requests, want %d in event order (first difference at %d)", path, len(got), len(ids), firstDifference(got, ids)))
		}
	}
	rcv.mu.Unlock()

	fmt.Printf("\n%d events × %d webhooks = %d deliveries (events recorded in %.2fs, %d transactions at once)\n", o.events, o.hooks, want, recorded.Seconds(), o.concurrency)
	fmt.Printf("all delivered after:     %.1fs from the first event (%.0f deliveries/s)\n", took.Seconds(), float64(want)/took.Seconds())
	fmt.Printf("succeeded / failed:      %d / %d; bad signatures at the receiver: %d\n", succeeded, failed, rcv.bad.Load())
	fmt.Printf("worker CPU:              %.2fs in all, %.2f ms per delivery (user+system of the worker process)\n",
		(cpu1 - cpu0).Seconds(), float64((cpu1-cpu0).Microseconds())/1000/float64(want))
	fmt.Printf("load average at end:     %s\n", benchenv.LoadAvg())
	if len(problems) > 0 || failed > 0 || rcv.bad.Load() > 0 {
		return errors.New("deliveries missing, repeated, failed or out of order:\n  " + strings.Join(problems, "\n  "))
	}
	fmt.Println("every delivery arrived once, signed, in event order per webhook")
	return nil
}

func firstDifference(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// processCPU is a process's user + system CPU time from /proc/<pid>/stat.
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name (which may hold spaces) in parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	const ticks = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / ticks, nil
}
