// Command content benchmarks drafts, revisions and page reads against the
// real stack: Postgres, the Temporal dev server, the API and a worker (both
// in this process).
//
//	go run ./bench/content [-duration 10s] [-concurrency 64] [-revisions 20] [-cpuprofile cpu.out] [-gets-only] [-revisions-only]
//
// It uses the services named by the PRESSROOM_TEST_* variables when they
// are set (`go run ./dev/cmd/devstack exec -- go run ./bench/content`),
// else starts a private stack with dev.Up in a temporary directory. On them
// it creates a fresh database (migrated), a site, a user and a token
// (password grant), then measures:
//
//   - POST /revisions latency (p50, p95) for revisions of 1, 10 and 100
//     drafts, -revisions of each, one at a time; the page drafts are created
//     through the API beforehand, outside the timing;
//   - publishing revisions of 1, 100 and 1,000 page drafts, and of 1,000
//     drafts of pages, contents and blocks listed by their blocks only (the
//     closure pulls in the rest): time from POST to published (target under
//     3 s for 1,000), the queries the publishing activity ran (a bun query
//     hook on the worker's own *bun.DB, BEGIN and COMMIT included) and how
//     the time splits between the API, Temporal and the transaction;
//   - GET /pages/:id and GET /pages/:id?include=draft at -concurrency
//     connections for -duration each (targets ≥ 15,000 and ≥ 8,000 req/s,
//     p99 under 10 ms), on one page and in turn over 1,000 pages (each with
//     an update draft), with GET /healthz (no auth, no database) as the
//     baseline of the same run, from a keep-alive client in this process;
//     with the CPU time per request of this process (getrusage) and of the
//     database's Postgres backends (/proc/<pid>/stat), and, with
//     -cpuprofile, one CPU profile per load.
//
// Everything it created is removed at the end.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/uptrace/bun"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/pressroom/pressroom/bench/internal/benchenv"
	"github.com/pressroom/pressroom/worker"
	"github.com/pressroom/pressroom/workflows"
)

type options struct {
	duration      time.Duration
	concurrency   int
	revisions     int
	cpuprofile    string
	getsOnly      bool
	revisionsOnly bool
	plansOnly     bool
	keep          bool
	// locale: with -gets-only, the reads in a locale (locale.go) instead
	// of readLoads'; rounds of them, over records records.
	locale  string
	rounds  int
	records int
}

func main() {
	var o options
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "how long each GET load runs")
	flag.IntVar(&o.concurrency, "concurrency", 64, "connections of the GET loads")
	flag.IntVar(&o.revisions, "revisions", 20, "revisions timed per size (1, 10, 100 drafts)")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of the GET loads (server and client: one process) to this file")
	flag.BoolVar(&o.getsOnly, "gets-only", false, "skip the revision measurements")
	flag.BoolVar(&o.revisionsOnly, "revisions-only", false, "skip the GET loads")
	flag.BoolVar(&o.plansOnly, "plans-only", false, "measure publish plans (POST /publish-plans) only")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (the private stack's logs)")
	flag.StringVar(&o.locale, "locale", "", "with -gets-only: measure reads in this locale (e.g. de) against today's, in alternating rounds (locale.go)")
	flag.IntVar(&o.rounds, "rounds", 3, "with -locale: rounds of the alternating loads")
	flag.IntVar(&o.records, "records", 1000, "with -locale: pages read, and content blocks with 4 KB bodies read")
	flag.Parse()
	log.SetFlags(0)
	if o.concurrency < 1 || o.revisions < 1 || o.duration <= 0 || o.rounds < 1 || o.records < 10 {
		log.Fatal("-concurrency, -revisions and -rounds must be at least 1, -records 10, -duration positive")
	}
	if o.locale != "" && !o.getsOnly {
		log.Fatal("-locale measures reads only: give -gets-only too")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, o)
	stop()
	if err != nil {
		log.Fatal("bench/content: ", err)
	}
}

func run(ctx context.Context, o options) (err error) {
	env, err := benchenv.New("pressroom-bench-content-", o.keep)
	if err != nil {
		return err
	}
	defer env.Close()
	if err := env.Up(ctx); err != nil {
		return err
	}
	// The worker, in this process, has a *bun.DB of its own, so its
	// queries can be counted.
	wdb, err := env.OpenDB(ctx)
	if err != nil {
		return err
	}
	counter := &queryCounter{}
	wdb.AddQueryHook(counter)
	w := worker.New(env.Temporal, worker.Deps{Config: env.Config, DB: wdb, Storage: env.Storage, Log: env.Log})
	if err := w.Start(); err != nil {
		return err
	}
	env.Defer(w.Stop)
	bc, err := env.User(ctx)
	if err != nil {
		return err
	}
	c := &apiClient{Client: bc}

	fmt.Println("pressroom content benchmark")
	fmt.Printf("machine:  %s, GOMAXPROCS %d\n", benchenv.Machine(), runtime.GOMAXPROCS(0))
	fmt.Printf("services: %s; API and worker in this process, database pool %d connections each\n", env.Where, env.DB.DB.Stats().MaxOpenConnections)
	fmt.Printf("load average at start: %s\n", benchenv.LoadAvg())

	if o.plansOnly {
		apiCounter := &queryCounter{}
		env.DB.AddQueryHook(apiCounter)
		return planRuns(ctx, c, apiCounter)
	}
	var live []string // published pages, for the reads
	if !o.getsOnly {
		if err := revisionLatency(ctx, c, env.Temporal, o.revisions); err != nil {
			return err
		}
		if live, err = publishRuns(ctx, c, env.Temporal, counter); err != nil {
			return err
		}
	}
	if o.revisionsOnly {
		return nil
	}
	if o.locale != "" {
		return localeReads(ctx, c, env.DB, o)
	}
	return readLoads(ctx, c, env.DB, live, o)
}

// --- POST /publish-plans ---------------------------------------------------------

// planRuns times publish plans of 10, 100 and 1,000 page create drafts, and
// of 1,000 drafts listed by 800 blocks (the closure pulls in the contents
// and pages), counting the queries the API's *bun.DB runs for each (the
// token lookup included). Target: 1,000 drafts in under 200 ms, with a
// query count that does not grow with the number of drafts.
func planRuns(ctx context.Context, c *apiClient, counter *queryCounter) error {
	fmt.Println("\npublish plans (POST /publish-plans), queries counted on the API's *bun.DB:")
	type run struct {
		name          string
		steps, n      int
		p50, p95, max time.Duration
	}
	var runs []run
	measure := func(name string, drafts []string) error {
		const reps = 9
		lats := make([]time.Duration, reps)
		r := run{name: name}
		for i := range reps {
			counter.start()
			t0 := time.Now()
			st, raw, err := c.Send(ctx, http.MethodPost, "/publish-plans", planBody(drafts))
			lats[i] = time.Since(t0)
			n, _, _ := counter.stop()
			if err != nil || st != 200 {
				return fmt.Errorf("POST /publish-plans = %d %.300s: %v", st, raw, err)
			}
			var d struct {
				Data struct {
					Meta struct {
						Count int `json:"drafts-count"`
					}
				}
			}
			_ = json.Unmarshal(raw, &d)
			r.steps, r.n = d.Data.Meta.Count, n
		}
		slices.Sort(lats)
		r.p50, r.p95, r.max = benchenv.Percentile(lats, 50), benchenv.Percentile(lats, 95), lats[len(lats)-1]
		runs = append(runs, r)
		return nil
	}
	for _, size := range []int{10, 100, 1000} {
		_, drafts, err := c.createPages(ctx, size, fmt.Sprintf("plan%d", size), 4)
		if err != nil {
			return err
		}
		if err := measure(fmt.Sprintf("%d pages", size), drafts); err != nil {
			return err
		}
	}
	blocks, err := c.createTree(ctx, 100, 8)
	if err != nil {
		return err
	}
	if err := measure("1000 mixed (800 blocks listed)", blocks); err != nil {
		return err
	}
	fmt.Printf("  %-32s %6s %8s %8s %8s %8s\n", "plan", "steps", "p50", "p95", "max", "queries")
	for _, r := range runs {
		fmt.Printf("  %-32s %6d %8s %8s %8s %8d\n", r.name, r.steps, ms(r.p50), ms(r.p95), ms(r.max), r.n)
	}
	big, mixed := runs[2], runs[3]
	verdict := "met"
	if big.p50 >= 200*time.Millisecond || mixed.p50 >= 200*time.Millisecond {
		verdict = "MISSED"
	}
	fmt.Printf("  (load average: %s)\n", benchenv.LoadAvg())
	fmt.Printf("  target: a plan of 1,000 drafts in under 200 ms (p50): %s (%s pages, %s mixed)\n", verdict, ms(big.p50), ms(mixed.p50))
	growth := "constant"
	if big.n > runs[0].n {
		growth = fmt.Sprintf("GROWS (%d → %d)", runs[0].n, big.n)
	}
	fmt.Printf("  queries from 10 to 1,000 drafts: %s (%d, %d, %d)\n", growth, runs[0].n, runs[1].n, big.n)
	return nil
}

func planBody(drafts []string) map[string]any {
	data := make([]map[string]any, len(drafts))
	for i, id := range drafts {
		data[i] = map[string]any{"type": "drafts", "id": id}
	}
	return map[string]any{"data": map[string]any{"type": "publish-plans", "relationships": map[string]any{"drafts": map[string]any{"data": data}}}}
}

// --- POST /revisions latency ---------------------------------------------------

func revisionLatency(ctx context.Context, c *apiClient, tc client.Client, n int) error {
	fmt.Printf("\nPOST /revisions, %d revisions per size, one at a time (page create drafts; 201 when published):\n", n)
	for _, size := range []int{1, 10, 100} {
		_, drafts, err := c.createPages(ctx, n*size, fmt.Sprintf("lat%d", size), 4)
		if err != nil {
			return err
		}
		lats := make([]time.Duration, 0, n)
		phases := make([][]time.Duration, len(phaseNames))
		for i := range n {
			t0 := time.Now()
			rev, status, err := c.postRevision(ctx, drafts[i*size:(i+1)*size])
			if err != nil {
				return err
			}
			t1 := time.Now()
			if status != 201 {
				return fmt.Errorf("POST /revisions of %d drafts = %d (%v), want 201", size, status, rev.Attributes)
			}
			lats = append(lats, t1.Sub(t0))
			if got := rev.Attributes["versions-count"]; got != float64(size) {
				return fmt.Errorf("revision of %d drafts has versions-count %v", size, got)
			}
			if size == 1 {
				p, err := publishPhases(ctx, tc, workflows.PublishRevisionID(rev.ID), t0, t1)
				if err != nil {
					return err
				}
				for k, d := range p {
					phases[k] = append(phases[k], d)
				}
			}
		}
		slices.Sort(lats)
		fmt.Printf("  %4d drafts: p50 %s   p95 %s   min %s   max %s\n", size, ms(benchenv.Percentile(lats, 50)), ms(benchenv.Percentile(lats, 95)), ms(lats[0]), ms(lats[len(lats)-1]))
		if size == 1 {
			fmt.Println("    where the time of a one-draft POST goes (from the workflow history and the client's clock; p50 / p95 of each phase):")
			for k, name := range phaseNames {
				slices.Sort(phases[k])
				fmt.Printf("      %-58s %7s %7s\n", name, ms(benchenv.Percentile(phases[k], 50)), ms(benchenv.Percentile(phases[k], 95)))
			}
		}
	}
	return nil
}

// phaseNames name the phases publishPhases measures, in order.
var phaseNames = []string{
	"API: request sent → workflow started (tx, reserve, start)",
	"workflow task 1 dispatch: scheduled → started",
	"workflow task 1 run: started → completed",
	"activity dispatch: scheduled → started",
	"activity run: started → completed",
	"workflow task 2 dispatch: scheduled → started",
	"workflow task 2 run: started → workflow completed",
	"API: workflow completed → 201 received (result, re-read)",
}

// publishPhases splits one publish, sent at t0 and answered at t1, into
// phaseNames from its workflow history (the API, Temporal and this client
// share the machine's clock).
func publishPhases(ctx context.Context, tc client.Client, wfID string, t0, t1 time.Time) ([]time.Duration, error) {
	r, err := benchenv.ReadRunTimes(ctx, tc, wfID)
	if err != nil {
		return nil, err
	}
	return []time.Duration{
		r.Started.Sub(t0),
		r.FirstTask(),
		r.TaskCompleted[0].Sub(r.TaskStarted[0]),
		r.ActivityStarted.Sub(r.ActivityScheduled),
		r.ActivityCompleted.Sub(r.ActivityStarted),
		r.LastTask(),
		r.Completed.Sub(r.TaskStarted[len(r.TaskStarted)-1]),
		t1.Sub(r.Completed),
	}, nil
}

// --- publishing, with the queries counted --------------------------------------

// queryCounter counts the queries run through a *bun.DB while on.
type queryCounter struct {
	on          atomic.Bool
	mu          sync.Mutex
	n           int
	first, last time.Time
	kinds       map[string]*kindStats
}

// kindStats are the queries of one kind (statement and table).
type kindStats struct {
	n    int
	took time.Duration
}

func (q *queryCounter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	return ctx
}

func (q *queryCounter) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	if !q.on.Load() {
		return
	}
	now := time.Now()
	q.mu.Lock()
	defer q.mu.Unlock()
	q.n++
	if q.first.IsZero() || e.StartTime.Before(q.first) {
		q.first = e.StartTime
	}
	q.last = now
	k := summarise(e.Query)
	if q.kinds[k] == nil {
		q.kinds[k] = &kindStats{}
	}
	q.kinds[k].n++
	q.kinds[k].took += now.Sub(e.StartTime)
}

func (q *queryCounter) start() {
	q.mu.Lock()
	q.n, q.first, q.last, q.kinds = 0, time.Time{}, time.Time{}, map[string]*kindStats{}
	q.mu.Unlock()
	q.on.Store(true)
}

func (q *queryCounter) stop() (n int, span time.Duration, kinds map[string]*kindStats) {
	q.on.Store(false)
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n, q.last.Sub(q.first), q.kinds
}

var (
	tableRe = regexp.MustCompile(`(?is)\b(?:FROM|INTO|UPDATE)\s+("?[a-z_]+"?)`)
	spaceRe = regexp.MustCompile(`\s+`)
)

// summarise names a query by its statement and first table.
func summarise(q string) string {
	q = strings.TrimSpace(spaceRe.ReplaceAllString(q, " "))
	op, _, _ := strings.Cut(q, " ")
	op = strings.ToUpper(op)
	if op == "WITH" {
		op = "WITH … UPDATE"
	}
	if m := tableRe.FindStringSubmatch(q); m != nil {
		return op + " " + strings.Trim(m[1], `"`)
	}
	return op
}

type publishRun struct {
	name      string
	drafts    int // listed
	versions  int
	total     time.Duration // POST to published
	post      time.Duration // the POST's own answer
	status    int
	queries   int
	txSpan    time.Duration
	kinds     map[string]*kindStats
	scheduled time.Duration // workflow started → activity started
	activity  time.Duration // activity started → completed
}

// publishRuns measures publishing; it returns the 1,000 pages it published.
func publishRuns(ctx context.Context, c *apiClient, tc client.Client, counter *queryCounter) (live []string, err error) {
	fmt.Println("\npublishing one revision (POST /revisions → published), queries counted on the worker's *bun.DB:")
	var runs []publishRun
	for _, size := range []int{1, 100, 1000} {
		pages, drafts, err := c.createPages(ctx, size, fmt.Sprintf("pub%d", size), 4)
		if err != nil {
			return nil, err
		}
		if size == 1000 {
			live = pages
		}
		r, err := publishOnce(ctx, c, tc, counter, fmt.Sprintf("%d pages", size), drafts)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	// 100 pages × (1 content + 8 blocks): 1,000 drafts, listed by the 800
	// blocks; the closure pulls in the contents, then the pages.
	blocks, err := c.createTree(ctx, 100, 8)
	if err != nil {
		return nil, err
	}
	r, err := publishOnce(ctx, c, tc, counter, "1000 mixed (800 blocks listed)", blocks)
	if err != nil {
		return nil, err
	}
	runs = append(runs, r)

	fmt.Printf("  %-32s %9s %10s %9s %8s %10s %10s %10s\n", "revision", "versions", "POST→done", "POST", "queries", "tx span", "queued", "activity")
	for _, r := range runs {
		fmt.Printf("  %-32s %9d %10s %6s %3d %8d %10s %10s %10s\n", r.name, r.versions, ms(r.total), ms(r.post), r.status, r.queries, ms(r.txSpan), ms(r.scheduled), ms(r.activity))
	}
	fmt.Println("  (POST→done: from sending POST /revisions to seeing status published; POST: the POST's own answer time and status;")
	fmt.Println("   queries: every query of the publish activity, BEGIN and COMMIT included; tx span: first query start to last query end;")
	fmt.Println("   queued: workflow start → activity started; activity: started → completed, from the workflow history;")
	fmt.Println("   published by the local activity: queued is workflow start → first workflow task started, activity that task's run)")
	for _, r := range runs {
		if r.versions >= 1000 {
			fmt.Printf("  queries of %q (count × statement and table: time in it):\n", r.name)
			keys := make([]string, 0, len(r.kinds))
			for k := range r.kinds {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Printf("    %3d × %-24s %8s\n", r.kinds[k].n, k, msf(r.kinds[k].took))
			}
		}
	}
	big := runs[2]
	verdict := "met"
	if big.total >= 3*time.Second {
		verdict = "MISSED"
	}
	fmt.Printf("  (load average: %s)\n", benchenv.LoadAvg())
	fmt.Printf("  target: 1,000 drafts published in under 3 s: %s (%s)\n", verdict, ms(big.total))
	growth := "constant"
	if big.queries > runs[1].queries {
		growth = fmt.Sprintf("GROWS (%d → %d)", runs[1].queries, big.queries)
	}
	fmt.Printf("  queries from 100 to 1,000 drafts: %s (%d, %d); no N+1\n", growth, runs[1].queries, big.queries)
	return live, nil
}

func publishOnce(ctx context.Context, c *apiClient, tc client.Client, counter *queryCounter, name string, drafts []string) (publishRun, error) {
	r := publishRun{name: name, drafts: len(drafts)}
	counter.start()
	t0 := time.Now()
	rev, status, err := c.postRevision(ctx, drafts)
	if err != nil {
		counter.stop()
		return r, err
	}
	r.post, r.status = time.Since(t0), status
	for rev.Attributes["status"] == "publishing" {
		time.Sleep(10 * time.Millisecond)
		if rev, err = c.get(ctx, "/revisions/"+rev.ID); err != nil {
			counter.stop()
			return r, err
		}
		if time.Since(t0) > 5*time.Minute {
			counter.stop()
			return r, fmt.Errorf("revision %s still publishing after 5 minutes", rev.ID)
		}
	}
	r.total = time.Since(t0)
	r.queries, r.txSpan, r.kinds = counter.stop()
	if rev.Attributes["status"] != "published" {
		return r, fmt.Errorf("revision %q ended %v", name, rev.Attributes)
	}
	r.versions = int(rev.Attributes["versions-count"].(float64))
	r.scheduled, r.activity, err = activityTimes(ctx, tc, workflows.PublishRevisionID(rev.ID))
	return r, err
}

// activityTimes reads the workflow history: workflow started → activity
// started, and activity started → completed.
func activityTimes(ctx context.Context, tc client.Client, wfID string) (queued, ran time.Duration, err error) {
	var wfStart, actStart, actDone, wftStart, wftDone time.Time
	it := tc.GetWorkflowHistory(ctx, wfID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return 0, 0, err
		}
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
			wfStart = ev.GetEventTime().AsTime()
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			actStart = ev.GetEventTime().AsTime()
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			actDone = ev.GetEventTime().AsTime()
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
			if wftStart.IsZero() {
				wftStart = ev.GetEventTime().AsTime()
			}
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			if wftDone.IsZero() {
				wftDone = ev.GetEventTime().AsTime()
			}
		}
	}
	if actStart.IsZero() {
		// Published by the local activity (workflows.PublishRevision): it
		// ran inside the first workflow task (its result is a marker).
		return wftStart.Sub(wfStart), wftDone.Sub(wftStart), nil
	}
	return actStart.Sub(wfStart), actDone.Sub(actStart), nil
}

// --- reads under load ---------------------------------------------------------------

type loadResult struct {
	name     string
	requests int
	errors   int
	firstErr string
	elapsed  time.Duration
	lats     []time.Duration
	cpu      time.Duration // this process (API, worker, client)
	pgCPU    time.Duration // Postgres backends of the database
}

func (r loadResult) rate() float64 { return float64(r.requests) / r.elapsed.Seconds() }

func readLoads(ctx context.Context, c *apiClient, db *bun.DB, live []string, o options) error {
	// 1,000 live pages (the publish measurement's, or made here), each with
	// a pending update draft: more distinct queries than a connection's
	// statement cache holds (pgx: 512), as on a real site.
	fmt.Println("\npreparing reads: 1,000 live pages with an update draft each")
	if len(live) == 0 {
		pages, drafts, err := c.createPages(ctx, 1000, "read", 4)
		if err != nil {
			return err
		}
		rev, _, err := c.postRevision(ctx, drafts)
		if err != nil {
			return err
		}
		if rev.Attributes["status"] != "published" {
			return fmt.Errorf("read pages not published: %v", rev.Attributes)
		}
		live = pages
	}
	if err := c.parallel(len(live), 4, func(i int) error {
		_, err := c.call(ctx, http.MethodPatch, "/pages/"+live[i], map[string]any{"data": map[string]any{"type": "pages", "id": live[i],
			"attributes": map[string]any{"title": fmt.Sprintf("Drafted title %d", i), "description": "A drafted description"}}}, 200)
		return err
	}); err != nil {
		return err
	}
	pageID := live[0]
	livePaths, draftPaths := make([]string, len(live)), make([]string, len(live))
	for i, id := range live {
		livePaths[i], draftPaths[i] = "/pages/"+id, "/pages/"+id+"?include=draft"
	}

	tr := &http.Transport{MaxIdleConns: 4 * o.concurrency, MaxIdleConnsPerHost: 4 * o.concurrency, IdleConnTimeout: time.Minute, DisableCompression: true}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	targets := []struct {
		name, short string
		paths       []string
		auth        bool
		goal        float64
	}{
		{"GET /healthz (baseline)", "healthz", []string{"/healthz"}, false, 0},
		{"GET /pages/:id (one page)", "live", []string{"/pages/" + pageID}, true, 15000},
		{"GET /pages/:id (1,000 pages)", "live-many", livePaths, true, 15000},
		{"GET /pages/:id?include=draft (one)", "draft", []string{"/pages/" + pageID + "?include=draft"}, true, 8000},
		{"GET …?include=draft (1,000 pages)", "draft-many", draftPaths, true, 8000},
	}
	// Each response is checked once before the load.
	for _, tg := range targets {
		for i, path := range tg.paths {
			st, body, err := c.raw(ctx, hc, path, tg.auth)
			if err != nil || st != 200 {
				return fmt.Errorf("GET %s = %d %v %.200s", path, st, err, body)
			}
			if strings.Contains(path, "include=draft") && !strings.Contains(string(body), "Drafted title") {
				return fmt.Errorf("GET %s does not show the drafted title: %.300s", path, body)
			}
			if i == 0 {
				fmt.Printf("  (%s: %s answers %d bytes)\n", tg.name, path, len(body))
			}
		}
	}

	fmt.Printf("\nreads: %d keep-alive connections, %s each after a 1 s warm-up, load generator in this process (same %d CPUs):\n",
		o.concurrency, o.duration, runtime.NumCPU())
	var results []loadResult
	for _, tg := range targets {
		r, err := measure(ctx, hc, c, db, tg.paths, tg.auth, o, tg.short)
		if err != nil {
			return err
		}
		r.name = tg.name
		results = append(results, r)
	}
	fmt.Printf("  (load average after the loads: %s)\n", benchenv.LoadAvg())
	base := results[0].rate()
	for i, r := range results {
		slices.Sort(r.lats)
		line := fmt.Sprintf("  %-34s %8.0f req/s   p50 %s   p99 %s   max %s   errors %d", r.name, r.rate(),
			msf(benchenv.Percentile(r.lats, 50)), msf(benchenv.Percentile(r.lats, 99)), msf(r.lats[len(r.lats)-1]), r.errors)
		if i > 0 {
			line += fmt.Sprintf("   %.2f× healthz", r.rate()/base)
		}
		fmt.Println(line)
		perReq := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(max(1, r.requests)) }
		fmt.Printf("  %-34s CPU per request: %.0f µs in this process (API + client; %.2f cores busy), %.0f µs in Postgres (%.2f cores)\n",
			"", perReq(r.cpu), r.cpu.Seconds()/r.elapsed.Seconds(), perReq(r.pgCPU), r.pgCPU.Seconds()/r.elapsed.Seconds())
		if r.errors > 0 {
			fmt.Printf("    first error: %s\n", r.firstErr)
		}
	}
	for i, tg := range targets {
		if tg.goal == 0 {
			continue
		}
		r := results[i]
		p99 := benchenv.Percentile(r.lats, 99)
		fmt.Printf("  target %s: ≥ %.0f req/s: %s; p99 < 10 ms: %s\n", tg.name, tg.goal, verdict(r.rate() >= tg.goal), verdict(p99 < 10*time.Millisecond))
	}
	fmt.Printf("  (with %d CPUs to themselves, this process and Postgres would at best serve %d CPUs / CPU per request:\n", runtime.NumCPU(), runtime.NumCPU())
	for _, r := range results {
		per := (r.cpu + r.pgCPU).Seconds() / float64(max(1, r.requests))
		fmt.Printf("   %-34s ≈ %.0f req/s)\n", r.name, float64(runtime.NumCPU())/per)
	}
	if o.cpuprofile != "" {
		fmt.Printf("  CPU profiles (this process: server and client together): %s.{healthz,live,live-many,draft,draft-many} (go tool pprof -top <file>)\n", o.cpuprofile)
	}
	return nil
}

// measure runs one load of paths after a 1 s warm-up, with the CPU time of
// this process and of the database's Postgres backends during it (and a
// CPU profile named short with -cpuprofile).
func measure(ctx context.Context, hc *http.Client, c *apiClient, db *bun.DB, paths []string, auth bool, o options, short string) (loadResult, error) {
	load(ctx, hc, c, paths, auth, o.concurrency, time.Second) // warm-up
	stopProfile, err := startProfile(o.cpuprofile, short)
	if err != nil {
		return loadResult{}, err
	}
	defer stopProfile()
	pg0, err := benchenv.PostgresCPU(ctx, db)
	if err != nil {
		return loadResult{}, err
	}
	cpu0 := benchenv.ProcessCPU()
	r := load(ctx, hc, c, paths, auth, o.concurrency, o.duration)
	r.cpu = benchenv.ProcessCPU() - cpu0
	pg1, err := benchenv.PostgresCPU(ctx, db)
	if err != nil {
		return loadResult{}, err
	}
	for pid, t := range pg1 {
		r.pgCPU += t - pg0[pid] // a backend started meanwhile counts from zero
	}
	return r, nil
}

// startProfile profiles this process's CPU into path.name until the
// returned function is called; with no path it does nothing.
func startProfile(path, name string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path + "." + name)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

// load GETs paths, in turn, on concurrency connections for d.
func load(ctx context.Context, hc *http.Client, c *apiClient, paths []string, auth bool, concurrency int, d time.Duration) loadResult {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	type part struct {
		lats     []time.Duration
		errors   int
		firstErr string
	}
	parts := make([]part, concurrency)
	var wg sync.WaitGroup
	began := time.Now()
	for i := range parts {
		wg.Go(func() {
			p := &parts[i]
			p.lats = make([]time.Duration, 0, 1<<14)
			reqs := make([]*http.Request, len(paths))
			for j, path := range paths {
				reqs[j], _ = c.As(hc, auth).NewRequest(context.Background(), http.MethodGet, path, nil)
			}
			for n := i * 7919; ctx.Err() == nil; n++ {
				req := reqs[n%len(reqs)]
				t0 := time.Now()
				resp, err := hc.Do(req)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err == nil && resp.StatusCode != 200 {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				if err != nil {
					if ctx.Err() != nil {
						break
					}
					if p.errors == 0 {
						p.firstErr = err.Error()
					}
					p.errors++
					continue
				}
				p.lats = append(p.lats, time.Since(t0))
			}
		})
	}
	wg.Wait()
	r := loadResult{elapsed: time.Since(began)}
	for _, p := range parts {
		r.requests += len(p.lats)
		r.lats = append(r.lats, p.lats...)
		r.errors += p.errors
		if r.firstErr == "" {
			r.firstErr = p.firstErr
		}
	}
	if len(r.lats) == 0 {
		r.lats = []time.Duration{0}
	}
	return r
}

// --- the API client --------------------------------------------------------------------

type apiClient struct {
	*benchenv.Client
	pages int // pages created so far
}

type resource struct {
	ID            string         `json:"id"`
	Attributes    map[string]any `json:"attributes"`
	Relationships map[string]struct {
		Data json.RawMessage `json:"data"`
	} `json:"relationships"`
}

func (r resource) rel(name string) string {
	var id struct{ ID string }
	_ = json.Unmarshal(r.Relationships[name].Data, &id)
	return id.ID
}

// call sends a request and decodes the single resource it answers with.
func (c *apiClient) call(ctx context.Context, method, path string, body any, want int) (resource, error) {
	raw, err := c.Call(ctx, method, path, body, want)
	if err != nil {
		return resource{}, err
	}
	var d struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return resource{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	var res resource
	if len(d.Data) > 0 && d.Data[0] == '[' {
		var list []resource
		if err := json.Unmarshal(d.Data, &list); err != nil || len(list) == 0 {
			return resource{}, fmt.Errorf("%s %s: empty list", method, path)
		}
		return list[0], nil
	}
	err = json.Unmarshal(d.Data, &res)
	return res, err
}

func (c *apiClient) get(ctx context.Context, path string) (resource, error) {
	return c.call(ctx, http.MethodGet, path, nil, 200)
}

// raw sends one GET with hc (the load's client) and returns status and body.
func (c *apiClient) raw(ctx context.Context, hc *http.Client, path string, auth bool) (int, []byte, error) {
	r, err := c.As(hc, auth).Send(ctx, http.MethodGet, path, nil)
	if err != nil {
		return 0, nil, err
	}
	return r.Status, r.Raw, nil
}

// postRevision publishes drafts; it returns the revision and the status
// (201 published, 202 still publishing).
func (c *apiClient) postRevision(ctx context.Context, drafts []string) (resource, int, error) {
	data := make([]map[string]any, len(drafts))
	for i, id := range drafts {
		data[i] = map[string]any{"type": "drafts", "id": id}
	}
	st, raw, err := c.Send(ctx, http.MethodPost, "/revisions", map[string]any{"data": map[string]any{"type": "revisions",
		"attributes": map[string]any{"comments": "bench"}, "relationships": map[string]any{"drafts": map[string]any{"data": data}}}})
	if err != nil {
		return resource{}, 0, err
	}
	if st != 201 && st != 202 {
		return resource{}, st, fmt.Errorf("POST /revisions = %d %.500s", st, raw)
	}
	var d struct{ Data resource }
	if err := json.Unmarshal(raw, &d); err != nil {
		return resource{}, st, err
	}
	return d.Data, st, nil
}

// createPages creates n pages through the API, parallel at a time, and
// returns their ids and their create drafts' ids.
func (c *apiClient) createPages(ctx context.Context, n int, prefix string, parallel int) (pages, drafts []string, err error) {
	pages, drafts = make([]string, n), make([]string, n)
	lats := make([]time.Duration, n)
	began := time.Now()
	err = c.parallel(n, parallel, func(i int) error {
		t0 := time.Now()
		r, err := c.call(ctx, http.MethodPost, "/pages", map[string]any{"data": map[string]any{"type": "pages",
			"attributes": map[string]any{"title": fmt.Sprintf("Bench %s %d", prefix, i), "slug": fmt.Sprintf("%s-%d", prefix, i)}}}, 201)
		lats[i] = time.Since(t0)
		pages[i], drafts[i] = r.ID, r.rel("draft")
		return err
	})
	c.pages += n
	if n >= 100 {
		slices.Sort(lats)
		fmt.Printf("    (setup: %d POST /pages, %d at a time, in %s: p50 %s, p95 %s; the site now has %d pages)\n",
			n, parallel, ms(time.Since(began)), ms(benchenv.Percentile(lats, 50)), ms(benchenv.Percentile(lats, 95)), c.pages)
	}
	return pages, drafts, err
}

// createTree creates pages, each with one content of blocks blocks, and
// returns the blocks' create drafts.
func (c *apiClient) createTree(ctx context.Context, pages, blocks int) ([]string, error) {
	_, out, err := c.createBlocks(ctx, pages, blocks, "Tree", func(i, b int) string {
		return fmt.Sprintf("Paragraph %d of page %d: some text that reads like a page would.", b, i)
	})
	return out, err
}

// createBlocks creates pages named "<name> <i>", each with one content of
// blocks blocks whose bodies body gives, and returns the blocks' ids and
// create drafts, page by page.
func (c *apiClient) createBlocks(ctx context.Context, pages, blocks int, name string, body func(page, block int) string) (ids, drafts []string, err error) {
	ids, drafts = make([]string, pages*blocks), make([]string, pages*blocks)
	c.pages += pages
	err = c.parallel(pages, 4, func(i int) error {
		p, err := c.call(ctx, http.MethodPost, "/pages", map[string]any{"data": map[string]any{"type": "pages",
			"attributes": map[string]any{"title": fmt.Sprintf("%s %d", name, i), "slug": fmt.Sprintf("%s-%d", strings.ToLower(name), i)}}}, 201)
		if err != nil {
			return err
		}
		ct, err := c.call(ctx, http.MethodPost, "/contents", map[string]any{"data": map[string]any{"type": "contents",
			"attributes":    map[string]any{"title": "Main"},
			"relationships": map[string]any{"page": map[string]any{"data": map[string]any{"type": "pages", "id": p.ID}}}}}, 201)
		if err != nil {
			return err
		}
		for b := range blocks {
			bl, err := c.call(ctx, http.MethodPost, "/content-blocks", map[string]any{"data": map[string]any{"type": "content-blocks",
				"attributes": map[string]any{"var-name": fmt.Sprintf("block_%d", b), "data-type": "markdown", "position": b,
					"body": body(i, b)},
				"relationships": map[string]any{"content": map[string]any{"data": map[string]any{"type": "contents", "id": ct.ID}}}}}, 201)
			if err != nil {
				return err
			}
			ids[i*blocks+b], drafts[i*blocks+b] = bl.ID, bl.rel("draft")
		}
		return nil
	})
	return ids, drafts, err
}

// parallel runs fn(0..n-1), k at a time, and returns the first error.
func (c *apiClient) parallel(n, k int, fn func(int) error) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	next := make(chan int)
	for range k {
		wg.Go(func() {
			for i := range next {
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

// --- helpers --------------------------------------------------------------------------------

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000) }

func msf(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
