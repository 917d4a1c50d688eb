// Command http measures the API over HTTP with wrk, against the real stack:
// a database seeded with a tree of published pages, the API and a worker in
// this process, and wrk (a separate process) as the client, on loopback.
//
//	go run ./dev/cmd/devstack exec -- go run ./bench/http [-pages 10000] [-duration 10s] [-cpuprofile f]
//
// (bench/http/run.sh does that, installing wrk first if it is missing.)
//
// Every shape is one wrk run of -duration with the Lua script random.lua,
// which picks a random page id per request; the table prints requests per
// second, p99 latency and the ratio of the rate to GET /healthz's. To add a
// shape, add a line to shapes.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pressroom/pressroom/bench/internal/benchenv"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/worker"
)

// shape is one load: what random.lua sends (BENCH_MODE) at how many connections.
type shape struct {
	name  string
	mode  string // healthz, get, getdraft, getrelease, preview, patch, post, delete or login: see random.lua
	conns int
}

var shapes = []shape{
	{"GET /healthz", "healthz", 64},
	{"PATCH /pages/:id (title)", "patch", 16},
	{"PATCH /pages/:id (title)", "patch", 64},
	{"PATCH /pages/:id (title)", "patch", 256},
	{"POST /pages (under a page)", "post", 64},
	{"GET /pages/:id", "get", 64},
	{"GET /pages/:id?include=draft", "getdraft", 64},
	// Issue 29: a preview read of a page in a release of 1,000 drafts, and
	// a live read of the same pages (the target: within 2×).
	{"GET /pages/:id (release pages)", "getrelease", 64},
	{"GET /pages/:id?preview-release", "preview", 64},
	// The password grant: argon2id per request, so a few dozen per second;
	// issue 18 asks for p99 ≤ 2× p50 at 16 connections (arrival order).
	{"POST /oauth/token (password)", "login", 16},
	// Last: the pages it drafts for deletion (with their subtrees) would
	// answer 409 to the PATCHes above.
	{"DELETE /pages/:id", "delete", 64},
}

type options struct {
	pages    int
	duration time.Duration
	keep     bool
	cpuprof  string
	memprof  string
	only     string
	dbConns  int
}

// runs tells whether shape s is part of this run (-only).
func (o options) runs(s shape) bool {
	if o.only == "" || s.mode == "healthz" {
		return true
	}
	for _, m := range strings.Split(o.only, ",") {
		if strings.TrimSpace(m) == s.mode {
			return true
		}
	}
	return false
}

func main() {
	var o options
	flag.IntVar(&o.pages, "pages", 10000, "published pages to seed (a tree: one root per 100 pages, the rest under them)")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "how long each wrk run lasts")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (the private stack's logs)")
	flag.StringVar(&o.only, "only", "", "run only the shapes of these modes (comma-separated, e.g. patch,get); healthz, the baseline, always runs")
	flag.IntVar(&o.dbConns, "dbconns", 0, "size the API's database pool (0: PRESSROOM_DB_MAX_CONNS' default)")
	flag.StringVar(&o.cpuprof, "cpuprofile", "", "write a CPU profile of this process (API and worker) per shape to <file>.<mode>-<conns>")
	flag.StringVar(&o.memprof, "memprofile", "", "write the allocation profile of this process after each shape to <file>.<mode>-<conns> (cumulative: compare two with go tool pprof -diff_base)")
	flag.Parse()
	log.SetFlags(0)
	if o.pages < 100 || o.pages > 100000 || o.duration <= 0 || o.duration > 5*time.Minute || o.dbConns < 0 || o.dbConns > 1000 {
		log.Fatal("-pages must be 100 to 100000, -duration positive and at most 5m, -dbconns 0 to 1000")
	}
	if _, err := exec.LookPath("wrk"); err != nil {
		log.Fatal("bench/http: wrk is not installed (apt-get install wrk, or use bench/http/run.sh)")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, o)
	stop()
	if err != nil {
		log.Fatal("bench/http: ", err)
	}
}

func run(ctx context.Context, o options) error {
	env, err := benchenv.New("pressroom-bench-http-", o.keep)
	if err != nil {
		return err
	}
	defer env.Close()
	if err := env.Up(ctx); err != nil {
		return err
	}
	if o.dbConns > 0 {
		models.SizePool(env.DB, o.dbConns)
	}
	w := worker.New(env.Temporal, worker.Deps{Config: env.Config, DB: env.DB, Storage: env.Storage, Log: env.Log})
	if err := w.Start(); err != nil {
		return err
	}
	env.Defer(w.Stop)
	c, err := env.User(ctx)
	if err != nil {
		return err
	}
	fmt.Println("pressroom HTTP benchmark (wrk)")
	fmt.Printf("machine:  %s, GOMAXPROCS %d\n", benchenv.Machine(), runtime.GOMAXPROCS(0))
	fmt.Printf("services: %s; API and worker in this process, database pool %d connections, request timeout %s\n",
		env.Where, env.DB.DB.Stats().MaxOpenConnections, env.Config.RequestTimeout)
	began := time.Now()
	ids, err := seed(ctx, c, o.pages)
	if err != nil {
		return err
	}
	fmt.Printf("seeded %d published pages in %s\n", len(ids), time.Since(began).Round(time.Second))
	idsFile := filepath.Join(env.Dir, "ids.txt")
	if err := os.WriteFile(idsFile, []byte(strings.Join(ids, "\n")+"\n"), 0o600); err != nil {
		return err
	}
	script, err := filepath.Abs(filepath.Join(env.Root, "bench", "http", "random.lua"))
	if err != nil {
		return err
	}
	var release, releaseFile string
	if o.runs(shape{mode: "preview"}) || o.runs(shape{mode: "getrelease"}) {
		began = time.Now()
		var staged []string
		if release, staged, err = seedRelease(ctx, c, ids); err != nil {
			return err
		}
		releaseFile = filepath.Join(env.Dir, "release-ids.txt")
		if err := os.WriteFile(releaseFile, []byte(strings.Join(staged, "\n")+"\n"), 0o600); err != nil {
			return err
		}
		fmt.Printf("staged %d page drafts in release %s in %s\n", len(staged), release, time.Since(began).Round(time.Second))
	}
	fmt.Printf("load average before the loads: %s\n\n", benchenv.LoadAvg())
	fmt.Printf("%-28s %6s %10s %8s %10s %8s %8s %12s %12s %12s %10s %6s\n", "shape", "conns", "req/s", "p50 ms", "p99 ms", "vs healthz", "non-2xx", "pg µs/req", "proc µs/req", "allocs/req", "KB/req", "GCs")
	var base float64
	for _, s := range shapes {
		if !o.runs(s) {
			continue
		}
		// Statistics as the shapes before left the tables, as autovacuum
		// keeps them within a minute on a running site: a prepared
		// statement's generic plan made while a table was near empty (the
		// drafts after the seeding's publishes) scans it whole, and is kept
		// as it grows until an ANALYZE invalidates it (models/prepared.go).
		// Not measured: it runs before the counters are read.
		if _, err := env.DB.ExecContext(ctx, "ANALYZE"); err != nil {
			return err
		}
		pg0, err := benchenv.PostgresCPU(ctx, env.DB)
		if err != nil {
			return err
		}
		stopProfile := func() {}
		if o.cpuprof != "" {
			f, err := os.Create(fmt.Sprintf("%s.%s-%d", o.cpuprof, s.mode, s.conns))
			if err != nil {
				return err
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				f.Close()
				return err
			}
			stopProfile = func() { pprof.StopCPUProfile(); f.Close() }
		}
		// Allocations per request: load-independent, like the CPU times
		// (the worker in this process is idle during a read shape).
		var mem0, mem1 runtime.MemStats
		runtime.ReadMemStats(&mem0)
		cpu0 := benchenv.ProcessCPU()
		file := idsFile
		if s.mode == "preview" || s.mode == "getrelease" {
			file = releaseFile
		}
		r, err := runWrk(ctx, env.Config.PublicURL, script, file, c.Token, release, s, o.duration)
		stopProfile()
		if err != nil {
			return fmt.Errorf("%s at %d: %w", s.name, s.conns, err)
		}
		cpu := benchenv.ProcessCPU() - cpu0
		runtime.ReadMemStats(&mem1)
		if o.memprof != "" {
			if err := writeAllocs(fmt.Sprintf("%s.%s-%d", o.memprof, s.mode, s.conns)); err != nil {
				return err
			}
		}
		pg1, err := benchenv.PostgresCPU(ctx, env.DB)
		if err != nil {
			return err
		}
		var pgCPU time.Duration
		for pid, t := range pg1 {
			pgCPU += t - pg0[pid] // a backend started meanwhile counts from zero
		}
		reqs := max(1, r.rate*o.duration.Seconds())
		if s.mode == "healthz" && base == 0 {
			base = r.rate
		}
		ratio := "-"
		if base > 0 {
			ratio = fmt.Sprintf("%.3f", r.rate/base)
		}
		fmt.Printf("%-28s %6d %10.0f %8.1f %10.1f %8s %8d %12.0f %12.0f %12.0f %10.1f %6d\n", s.name, s.conns, r.rate, r.p50.Seconds()*1000, r.p99.Seconds()*1000, ratio, r.bad,
			float64(pgCPU.Microseconds())/reqs, float64(cpu.Microseconds())/reqs,
			float64(mem1.Mallocs-mem0.Mallocs)/reqs, float64(mem1.TotalAlloc-mem0.TotalAlloc)/1024/reqs, mem1.NumGC-mem0.NumGC)
	}
	fmt.Printf("\nload average after the loads: %s\n", benchenv.LoadAvg())
	return nil
}

// writeAllocs writes the process's allocation profile (cumulative since it
// started) to file.
func writeAllocs(file string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

type result struct {
	rate     float64
	p50, p99 time.Duration
	bad      int // non-2xx answers and socket errors
}

// runWrk runs one shape; random.lua prints one line "RESULT requests
// duration_us p99_us non2xx socket_errors p50_us" when wrk is done.
func runWrk(ctx context.Context, base, script, ids, token, release string, s shape, d time.Duration) (result, error) {
	threads := min(2, s.conns)
	ctx, cancel := context.WithTimeout(ctx, d+30*time.Second) // bounded even if wrk stalls
	defer cancel()
	cmd := exec.CommandContext(ctx, "wrk", "-t", strconv.Itoa(threads), "-c", strconv.Itoa(s.conns), "-d", strconv.Itoa(int(d.Seconds()))+"s",
		"--timeout", "35s", "-s", script, base)
	cmd.Env = append(os.Environ(), "BENCH_MODE="+s.mode, "BENCH_IDS="+ids, "BENCH_TOKEN="+token, "BENCH_RELEASE="+release,
		"BENCH_EMAIL="+benchenv.Email, "BENCH_PASSWORD="+benchenv.Password)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return result{}, fmt.Errorf("wrk: %w\n%s", err, out)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 7 && f[0] == "RESULT" {
			n, _ := strconv.ParseFloat(f[1], 64)
			us, _ := strconv.ParseFloat(f[2], 64)
			p99, _ := strconv.ParseFloat(f[3], 64)
			bad, _ := strconv.Atoi(f[4])
			sock, _ := strconv.Atoi(f[5])
			p50, _ := strconv.ParseFloat(f[6], 64)
			return result{rate: n / (us / 1e6), p50: time.Duration(p50 * float64(time.Microsecond)),
				p99: time.Duration(p99 * float64(time.Microsecond)), bad: bad + sock}, nil
		}
	}
	return result{}, fmt.Errorf("no RESULT line in wrk's output:\n%s", out)
}

// seed creates n pages, one root per 100 and the rest spread under the
// roots, and publishes them (roots first, then the rest in revisions of
// 1,000 drafts). It returns the page ids.
func seed(ctx context.Context, c *benchenv.Client, n int) ([]string, error) {
	roots := n / 100
	ids := make([]string, n)
	drafts := make([]string, n)
	create := func(from, to int) error {
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		next := make(chan int)
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					data := map[string]any{"type": "pages", "attributes": map[string]any{"title": fmt.Sprintf("Page %d", i), "slug": fmt.Sprintf("page-%d", i)}}
					if i >= roots {
						data["relationships"] = map[string]any{"parent": map[string]any{"data": map[string]any{"type": "pages", "id": ids[i%roots]}}}
					}
					raw, err := c.Call(ctx, http.MethodPost, "/pages", map[string]any{"data": data}, http.StatusCreated)
					if err != nil {
						errs <- err
						return
					}
					var doc struct {
						Data struct {
							ID            string
							Relationships struct {
								Draft struct{ Data struct{ ID string } }
							}
						}
					}
					if err := json.Unmarshal(raw, &doc); err != nil {
						errs <- err
						return
					}
					ids[i], drafts[i] = doc.Data.ID, doc.Data.Relationships.Draft.Data.ID
				}
			}()
		}
	feed:
		for i := from; i < to; i++ {
			select {
			case next <- i:
			case err := <-errs:
				close(next)
				wg.Wait()
				return err
			case <-ctx.Done():
				break feed
			}
		}
		close(next)
		wg.Wait()
		select {
		case err := <-errs:
			return err
		default:
			return ctx.Err()
		}
	}
	if err := create(0, roots); err != nil {
		return nil, err
	}
	if err := publish(ctx, c, drafts[:roots]); err != nil {
		return nil, err
	}
	if err := create(roots, n); err != nil {
		return nil, err
	}
	for from := roots; from < n; from += 1000 {
		if err := publish(ctx, c, drafts[from:min(from+1000, n)]); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// publish publishes the drafts in one revision and waits until it is published.
func publish(ctx context.Context, c *benchenv.Client, drafts []string) error {
	data := make([]map[string]any, len(drafts))
	for i, id := range drafts {
		data[i] = map[string]any{"type": "drafts", "id": id}
	}
	status, raw, err := c.Send(ctx, http.MethodPost, "/revisions", map[string]any{"data": map[string]any{"type": "revisions",
		"attributes": map[string]any{"comments": "bench seed"}, "relationships": map[string]any{"drafts": map[string]any{"data": data}}}})
	if err != nil {
		return err
	}
	if status != 201 && status != 202 {
		return fmt.Errorf("POST /revisions = %d %.500s", status, raw)
	}
	var doc struct {
		Data struct {
			ID         string
			Attributes struct{ Status string }
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for doc.Data.Attributes.Status == "publishing" {
		if time.Now().After(deadline) {
			return fmt.Errorf("revision %s still publishing after 2m", doc.Data.ID)
		}
		time.Sleep(50 * time.Millisecond)
		if raw, err = c.Call(ctx, http.MethodGet, "/revisions/"+doc.Data.ID, nil, http.StatusOK); err != nil {
			return err
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			return err
		}
	}
	if doc.Data.Attributes.Status != "published" {
		return fmt.Errorf("revision %s is %s: %.500s", doc.Data.ID, doc.Data.Attributes.Status, raw)
	}
	return nil
}

// releaseSize is how many drafts the preview shapes' release holds.
const releaseSize = 1000

// seedRelease drafts a new title for releaseSize of the pages (the last
// ones: nested pages), stages the drafts in a new release and returns its
// id and the pages' ids.
func seedRelease(ctx context.Context, c *benchenv.Client, ids []string) (string, []string, error) {
	pages := ids[max(0, len(ids)-releaseSize):]
	drafts := make([]string, len(pages))
	for i, id := range pages {
		raw, err := c.Call(ctx, http.MethodPatch, "/pages/"+id, map[string]any{"data": map[string]any{"type": "pages", "id": id,
			"attributes": map[string]any{"title": fmt.Sprintf("Release title %d", i)}}}, http.StatusOK)
		if err != nil {
			return "", nil, err
		}
		var doc struct {
			Data struct {
				Relationships struct {
					Draft struct{ Data struct{ ID string } }
				}
			}
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			return "", nil, err
		}
		drafts[i] = doc.Data.Relationships.Draft.Data.ID
	}
	raw, err := c.Call(ctx, http.MethodPost, "/releases", map[string]any{"data": map[string]any{"type": "releases",
		"attributes": map[string]any{"title": "bench release"}}}, http.StatusCreated)
	if err != nil {
		return "", nil, err
	}
	var rel struct{ Data struct{ ID string } }
	if err := json.Unmarshal(raw, &rel); err != nil {
		return "", nil, err
	}
	data := make([]map[string]any, len(drafts))
	for i, id := range drafts {
		data[i] = map[string]any{"type": "drafts", "id": id}
	}
	status, raw, err := c.Send(ctx, http.MethodPost, "/releases/"+rel.Data.ID+"/relationships/drafts", map[string]any{"data": data})
	if err != nil {
		return "", nil, err
	}
	if status != http.StatusNoContent {
		return "", nil, fmt.Errorf("stage = %d %.500s", status, raw)
	}
	return rel.Data.ID, pages, nil
}
