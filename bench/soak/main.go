// Command soak runs Pressroom as production does (2 `pressroom serve` and 2
// `pressroom worker` processes behind a round-robin proxy, package
// e2e/replicas) under a steady, rate-limited load shaped like an editing
// team plus a public reader, for a fixed time, with faults injected on a
// schedule, and reports what a leak or a lost write would show:
//
//	go run ./bench/soak [-duration 10m] [-rate 20] [-ci] [-out report.md]
//
// The load is 90 % reads (60 live, 30 with drafts), 8 % writes (page
// title edits), 1 % publishes (half at once, half scheduled 1.5–3 s ahead)
// and 1 % uploads (small PNGs); a webhook of the site, subscribed to the
// revision and upload events, delivers each to a receiver in this process
// (replicas.Receiver). Faults: at a
// quarter of the run worker-1 is SIGKILLed, at half api-2, at three
// quarters worker-2; each is started again 5 s later.
//
// It reports throughput and p50/p99/max per operation, answers by status,
// every process's RSS and goroutine count every 10 s with the slope of
// each over its last incarnation (a leak shows as a steady slope), the
// database's connection count per sample, Temporal's workflows by status
// at the end, and the invariants (replicas.Check, Load.CheckWrites): every
// accepted write is published or still a draft, every upload is done
// exactly once, every revision (scheduled ones too) published exactly once,
// the assets bucket matches the asset rows, and every event was delivered
// to the webhook's receiver, in order, none left pending or failed
// (replicas.CheckWebhook). A broken
// invariant makes it exit 1.
//
// Services come from the PRESSROOM_TEST_* variables (`devstack exec`) or a
// private stack, as for the other benchmarks (bench/internal/benchenv).
// -ci runs 1 minute; soak_test.go runs that in `make test`.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/pressroom/pressroom/bench/internal/benchenv"
	"github.com/pressroom/pressroom/dev"
	"github.com/pressroom/pressroom/e2e/replicas"
)

type options struct {
	duration time.Duration
	rate     float64
	pages    int
	apis     int
	workers  int
	keep     bool
	out      string
	sample   time.Duration
}

func main() {
	o := options{}
	ci := flag.Bool("ci", false, "CI mode: 1 minute")
	flag.DurationVar(&o.duration, "duration", 10*time.Minute, "how long the load runs")
	flag.Float64Var(&o.rate, "rate", 20, "operations per second, all kinds together")
	flag.IntVar(&o.pages, "pages", 60, "pages the load reads and edits")
	flag.IntVar(&o.apis, "apis", 2, "pressroom serve processes")
	flag.IntVar(&o.workers, "workers", 2, "pressroom worker processes")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (process logs)")
	flag.StringVar(&o.out, "out", "", "also write the report to this file")
	flag.Parse()
	log.SetFlags(0)
	if *ci {
		o.duration = time.Minute
	}
	o.sample = 10 * time.Second
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	report, err := run(ctx, o)
	stop()
	fmt.Print(report)
	if o.out != "" {
		_ = os.WriteFile(o.out, []byte(report), 0o644)
	}
	if err != nil {
		log.Fatal("bench/soak: ", err)
	}
}

// errInvariants is returned (with the report) when an invariant broke.
var errInvariants = errors.New("invariants broken")

// sample is one process's figures at one time.
type sample struct {
	at         time.Duration
	pid        int
	rss        int64
	goroutines int
}

// run runs the soak and returns its report; the error is errInvariants
// (wrapped) when the run completed but an invariant broke.
func run(ctx context.Context, o options) (string, error) {
	var rep strings.Builder
	env, err := benchenv.New("pressroom-soak-", o.keep)
	if err != nil {
		return "", err
	}
	defer env.Close()
	env.SiteUploadLimit = 6
	build := dev.BuildPressroom(ctx, env.Root, env.Dir) // while the services start
	if err := env.Up(ctx); err != nil {
		return "", err
	}
	binPath, err := build()
	if err != nil {
		return "", err
	}
	if _, err := env.User(ctx); err != nil { // the site and the bench user
		return "", err
	}
	cfg := env.Config
	cfg.DBMaxConns = 10
	c, err := replicas.Start(ctx, replicas.Options{Bin: binPath, Config: cfg, APIs: o.apis, Workers: o.workers,
		Dir: filepath.Join(env.Dir, "cluster"), Temporal: env.Temporal, Env: []string{"PRESSROOM_LOG_LEVEL=warn"}})
	if err != nil {
		return "", err
	}
	defer c.Close()
	hc := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	tok := replicas.Form(ctx, hc, c.URL, "/oauth/token", url.Values{"grant_type": {"password"}, "username": {benchenv.Email}, "password": {benchenv.Password}})
	token, err := accessToken(tok)
	if err != nil {
		return "", err
	}
	hook := replicas.NewReceiver(env.DB)
	defer hook.Close()
	// 90 / 8 / 1 / 1, the 1 % publishes half scheduled.
	l := &replicas.Load{HTTP: hc, Base: c.URL, Token: token, Rate: o.rate, Conc: 16, Hook: hook,
		Mix: replicas.Mix{ReadLive: 120, ReadDraft: 60, Write: 16, Publish: 1, Schedule: 1, Upload: 2}}
	if err := l.Prepare(ctx, o.pages); err != nil {
		return "", err
	}
	if _, err := replicas.Settle(ctx, env.DB, env.Storage, cfg.Storage, 2*time.Minute); err != nil {
		return "", err
	}

	fmt.Fprintf(&rep, "# Soak: %d APIs + %d workers, %s at %.0f ops/s\n\n", o.apis, o.workers, o.duration, o.rate)
	fmt.Fprintf(&rep, "- machine: %s; load average before: %s\n", benchenv.Machine(), benchenv.LoadAvg())
	fmt.Fprintf(&rep, "- services: %s\n", env.Where)
	fmt.Fprintf(&rep, "- mix: 60 %% live reads, 30 %% reads with drafts, 8 %% writes, 1 %% publishes (half scheduled 1.5–3 s ahead), 1 %% uploads over %d pages, %d senders; "+
		"a webhook subscribed to %s delivers to a receiver in this process\n", o.pages, l.Conc, strings.Join(replicas.HookEvents, ", "))

	// Faults on a schedule.
	procs := append(append([]*replicas.Replica{}, c.APIs...), c.Workers...)
	type fault struct {
		at time.Duration
		r  *replicas.Replica
	}
	var faults []fault
	for i, r := range []*replicas.Replica{c.Workers[0], c.APIs[len(c.APIs)-1], c.Workers[len(c.Workers)-1]} {
		faults = append(faults, fault{at: o.duration * time.Duration(i+1) / 4, r: r})
	}
	var faultLog []string
	var flMu sync.Mutex

	runCtx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	began := time.Now()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); l.Run(runCtx) }()
	for _, f := range faults {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-runCtx.Done():
				return
			case <-time.After(f.at):
			}
			pid := f.r.Pid()
			f.r.Kill()
			time.Sleep(5 * time.Second)
			err := f.r.Start(ctx)
			flMu.Lock()
			defer flMu.Unlock()
			faultLog = append(faultLog, fmt.Sprintf("%5.0fs SIGKILL %s (pid %d), started again after 5 s as pid %d (%v)",
				f.at.Seconds(), f.r.Name, pid, f.r.Pid(), orOK(err)))
		}()
	}
	// Samples every o.sample.
	samples := map[string][]sample{}
	var conns []string
	take := func() {
		at := time.Since(began).Round(time.Second)
		for _, p := range procs {
			if !p.Running() {
				continue
			}
			rss, err1 := p.RSS()
			g, err2 := p.Goroutines(ctx)
			if err1 == nil && err2 == nil {
				samples[p.Name] = append(samples[p.Name], sample{at: at, pid: p.Pid(), rss: rss, goroutines: g})
			}
		}
		var byState []struct {
			State string
			N     int
		}
		if err := env.DB.NewRaw(`SELECT coalesce(state, '?') AS state, count(*) AS n FROM pg_stat_activity
			WHERE datname = current_database() GROUP BY 1 ORDER BY 1`).Scan(ctx, &byState); err == nil {
			var parts []string
			total := 0
			for _, s := range byState {
				parts = append(parts, fmt.Sprintf("%s %d", s.State, s.N))
				total += s.N
			}
			conns = append(conns, fmt.Sprintf("| %4.0fs | %d | %s |", at.Seconds(), total, strings.Join(parts, ", ")))
		}
	}
	take()
	tick := time.NewTicker(o.sample)
sampling:
	for {
		select {
		case <-runCtx.Done():
			break sampling
		case <-tick.C:
			take()
		}
	}
	tick.Stop()
	wg.Wait()
	elapsed := time.Since(began)
	take()
	fmt.Fprintf(&rep, "- load average after: %s\n\n", benchenv.LoadAvg())

	stats, dropped := l.Stats()
	fmt.Fprintf(&rep, "## Operations (%.0f s; %d ticks dropped with every sender busy)\n\n%s\n", elapsed.Seconds(), dropped, replicas.Report(stats, elapsed))
	total := 0
	for _, s := range stats {
		total += len(s.Latency)
	}
	fmt.Fprintf(&rep, "Throughput: %d operations, %.1f/s.\n\n", total, float64(total)/elapsed.Seconds())
	unavailable, other, noRetry := replicas.Status5xx(stats)
	fmt.Fprintf(&rep, "Errors: %d × 503, %d other 5xx (502s are the proxy's while api-2 was down), %d 503s without Retry-After.\n\n", unavailable, other, noRetry)

	fmt.Fprintf(&rep, "## Faults\n\n")
	sort.Strings(faultLog)
	for _, f := range faultLog {
		fmt.Fprintf(&rep, "- %s\n", f)
	}

	fmt.Fprintf(&rep, "\n## Processes (every %s; slope over the last incarnation, after the first minute when it ran longer)\n\n", o.sample)
	fmt.Fprintf(&rep, "| process | samples | RSS first → last (MB) | RSS slope (MB/min) | goroutines first → last | goroutine slope (/min) |\n|---|---:|---|---:|---|---:|\n")
	for _, p := range procs {
		s := samples[p.Name]
		if len(s) == 0 {
			continue
		}
		last := lastIncarnation(s)
		rs, gs := slopes(last)
		fmt.Fprintf(&rep, "| %s | %d | %.1f → %.1f | %+.2f | %d → %d | %+.2f |\n", p.Name, len(s),
			float64(last[0].rss)/1e6, float64(last[len(last)-1].rss)/1e6, rs, last[0].goroutines, last[len(last)-1].goroutines, gs)
	}
	fmt.Fprintf(&rep, "\n<details><summary>every sample</summary>\n\n| process | at | pid | RSS (MB) | goroutines |\n|---|---:|---:|---:|---:|\n")
	for _, p := range procs {
		for _, s := range samples[p.Name] {
			fmt.Fprintf(&rep, "| %s | %.0fs | %d | %.1f | %d |\n", p.Name, s.at.Seconds(), s.pid, float64(s.rss)/1e6, s.goroutines)
		}
	}
	fmt.Fprintf(&rep, "\n</details>\n\n## PostgreSQL connections to the database\n\n| at | total | by state |\n|---:|---:|---|\n%s\n", strings.Join(conns, "\n"))

	// Settle, then the invariants.
	settleBegan := time.Now()
	counts, settleErr := replicas.Settle(ctx, env.DB, env.Storage, cfg.Storage, 3*time.Minute)
	fmt.Fprintf(&rep, "\n## After the load\n\nSettled in %.1f s: %s\n\n", time.Since(settleBegan).Seconds(), counts)
	wf, err := workflowCounts(ctx, env, cfg.TaskQueue, cfg.PublishTaskQueue, cfg.Webhooks.TaskQueue)
	if err != nil {
		fmt.Fprintf(&rep, "Temporal workflows: %v\n\n", err)
	} else {
		fmt.Fprintf(&rep, "Temporal workflows by status: %s\n\n", wf)
	}
	var bad []string
	if settleErr != nil {
		bad = append(bad, settleErr.Error())
	}
	bad = append(bad, l.CheckWrites(ctx, false)...)
	uploads, revisions := l.Accepted()
	bad = append(bad, replicas.Check(ctx, env.DB, env.Storage, cfg.Storage, uploads, revisions)...)
	hookBad, hookFig := replicas.CheckWebhook(ctx, env.DB, hc, c.URL, token, hook)
	bad = append(bad, hookBad...)
	if noRetry > 0 {
		bad = append(bad, fmt.Sprintf("%d 503s without Retry-After", noRetry))
	}
	for op, s := range stats {
		if n := s.Statuses[http.StatusInternalServerError]; n > 0 {
			bad = append(bad, fmt.Sprintf("%s: %d answers 500", op, n))
		}
	}
	fmt.Fprintf(&rep, "## Invariants\n\n")
	fmt.Fprintf(&rep, "- every accepted write (%d pages checked) is published or still a draft\n", o.pages)
	fmt.Fprintf(&rep, "- every accepted upload (%d) ended finished or error, each finished one made exactly one asset\n", len(uploads))
	fmt.Fprintf(&rep, "- every accepted revision (%d, %d of them scheduled) published, one version per draft, a scheduled one not before its time\n", len(revisions), len(l.Scheduled()))
	fmt.Fprintf(&rep, "- every change is one webhook event, delivered once to the receiver, in event order, none pending or failed: %s\n", hookFig)
	fmt.Fprintf(&rep, "- the assets bucket holds objects of existing assets only, and every asset has its objects; no accepted upload's temporary object is left\n")
	fmt.Fprintf(&rep, "- no 500, and every 503 with Retry-After\n\n")
	if len(bad) > 0 {
		fmt.Fprintf(&rep, "**BROKEN (%d):**\n\n", len(bad))
		for _, b := range bad[:min(len(bad), 50)] {
			fmt.Fprintf(&rep, "- %s\n", b)
		}
		return rep.String(), fmt.Errorf("%w: %d (see the report)", errInvariants, len(bad))
	}
	fmt.Fprintf(&rep, "All held.\n")
	return rep.String(), nil
}

func accessToken(r replicas.Result) (string, error) {
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if r.Err != nil || r.Status != 200 {
		return "", fmt.Errorf("password grant: %s", r)
	}
	if err := json.Unmarshal(r.Raw, &tok); err != nil || tok.AccessToken == "" {
		return "", fmt.Errorf("password grant: %s", r)
	}
	return tok.AccessToken, nil
}

func orOK(err error) string {
	if err == nil {
		return "ready"
	}
	return err.Error()
}

// lastIncarnation is the samples of the process's current pid, from the
// first minute on when there are enough (start-up allocations are not a
// leak).
func lastIncarnation(s []sample) []sample {
	pid := s[len(s)-1].pid
	var out []sample
	for _, x := range s {
		if x.pid == pid {
			out = append(out, x)
		}
	}
	if len(out) >= 8 && out[len(out)-1].at-out[0].at > 2*time.Minute {
		start := out[0].at + time.Minute
		i := slices.IndexFunc(out, func(x sample) bool { return x.at >= start })
		out = out[i:]
	}
	return out
}

// slopes are the least-squares slopes of RSS (MB per minute) and
// goroutines (per minute) over s.
func slopes(s []sample) (rss, goroutines float64) {
	if len(s) < 2 {
		return 0, 0
	}
	fit := func(y func(sample) float64) float64 {
		var sx, sy, sxx, sxy float64
		n := float64(len(s))
		for _, x := range s {
			t := x.at.Minutes()
			sx += t
			sy += y(x)
			sxx += t * t
			sxy += t * y(x)
		}
		d := n*sxx - sx*sx
		if d == 0 {
			return 0
		}
		return (n*sxy - sx*sy) / d
	}
	return fit(func(x sample) float64 { return float64(x.rss) / 1e6 }), fit(func(x sample) float64 { return float64(x.goroutines) })
}

// workflowCounts counts the run's workflows (both task queues) by status.
func workflowCounts(ctx context.Context, env *benchenv.Env, queues ...string) (string, error) {
	var q []string
	for _, tq := range queues {
		q = append(q, fmt.Sprintf("TaskQueue = '%s'", tq))
	}
	counts := map[string]int{}
	var token []byte
	for {
		resp, err := env.Temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: env.Config.TemporalNamespace, PageSize: 1000, NextPageToken: token, Query: strings.Join(q, " OR ")})
		if err != nil {
			return "", err
		}
		for _, e := range resp.GetExecutions() {
			counts[strings.ToLower(strings.TrimPrefix(e.GetStatus().String(), "WORKFLOW_EXECUTION_STATUS_"))]++
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	var parts []string
	for _, s := range []enumspb.WorkflowExecutionStatus{enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING,
		enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT, enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED,
		enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED, enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW} {
		name := strings.ToLower(strings.TrimPrefix(s.String(), "WORKFLOW_EXECUTION_STATUS_"))
		parts = append(parts, fmt.Sprintf("%s %d", name, counts[name]))
	}
	return strings.Join(parts, ", "), nil
}
