// Command uploads benchmarks asset ingestion end to end against the real
// stack: the API in this process, `pressroom worker` as a separate process
// (so its memory can be measured on its own), Postgres, Temporal and MinIO.
//
//	go run ./bench/uploads [-n 20] [-concurrency 4]
//
// It uses the services named by the PRESSROOM_TEST_* variables when they
// are set (`go run ./dev/cmd/devstack exec -- go run ./bench/uploads`),
// else starts a private stack with dev.Up in a temporary directory. On them
// it creates a fresh database (migrated), fresh buckets, a site, a user and
// a token, then:
//
//   - uploads a 12-megapixel photo-like JPEG N times, C at a time, each the
//     way a browser does (signature, form POST to storage, POST
//     /asset-uploads, poll GET /asset-uploads/:id every 50 ms, or with
//     -wait D wait with GET /asset-uploads/:id?wait=D), and reports
//     the time from POST /asset-uploads to "finished" (p50, p95, max) and
//     the throughput;
//   - samples the worker's VmRSS every 100 ms and reports the peak, and
//     VmHWM at the end (target: ≤ 400 MB with 4 concurrent ingestions);
//   - uploads a PNG whose header declares 30000×30000 pixels and reports the
//     worker's VmHWM before and after (reset in between through
//     /proc/<pid>/clear_refs) and, in this process, the bytes
//     images.ReadHeader allocates on that file (target: < 16 MB).
//
// Everything it created is removed at the end.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pressroom/pressroom/activities/images"
	"github.com/pressroom/pressroom/bench/internal/benchenv"
	"github.com/pressroom/pressroom/client"
	"github.com/pressroom/pressroom/dev"
	"github.com/pressroom/pressroom/testsupport"
	"github.com/pressroom/pressroom/worker"
)

func main() {
	n := flag.Int("n", 20, "uploads to time")
	concurrency := flag.Int("concurrency", 4, "uploads in flight at once")
	width := flag.Int("width", 4000, "fixture width")
	height := flag.Int("height", 3000, "fixture height")
	quality := flag.Int("quality", 92, "fixture JPEG quality")
	wait := flag.Duration("wait", 0, "wait for each upload with GET /asset-uploads/:id?wait=D (a long poll on the workflow) instead of polling every 50 ms")
	keep := flag.Bool("keep", false, "keep the temporary directory (fixture, worker log, private stack's logs)")
	flag.Parse()
	log.SetFlags(0)
	if *n < 1 || *concurrency < 1 {
		log.Fatal("-n and -concurrency must be at least 1")
	}
	if *wait < 0 || *wait > 20*time.Second {
		log.Fatal("-wait must be between 0 (poll every 50 ms) and 20s (the API's limit)")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *n, *concurrency, *width, *height, *quality, *wait, *keep)
	stop()
	if err != nil {
		log.Fatal("bench/uploads: ", err)
	}
}

func run(ctx context.Context, n, concurrency, width, height, quality int, wait time.Duration, keep bool) (err error) {
	env, err := benchenv.New("pressroom-bench-uploads-", keep)
	if err != nil {
		return err
	}
	defer env.Close()
	env.SiteUploadLimit = concurrency
	// The binary builds while the services start.
	build := dev.BuildPressroom(ctx, env.Root, env.Dir)
	if err := env.Up(ctx); err != nil {
		return err
	}
	bc, err := env.User(ctx)
	if err != nil {
		return err
	}
	c := &apiClient{Client: bc, wait: wait}

	// The worker, as a separate process.
	bin, err := build()
	if err != nil {
		return err
	}
	wp, logPath, err := env.StartWorker(ctx, bin)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w (worker log: %s)", err, logPath)
		}
	}()
	pid := wp.Pid()

	// The fixture.
	fixture, err := benchenv.PhotoJPEG(width, height, quality)
	if err != nil {
		return err
	}
	mp := float64(width*height) / 1e6

	fmt.Println("pressroom upload benchmark")
	fmt.Printf("machine:  %s; load average %s\n", benchenv.Machine(), benchenv.LoadAvg())
	fmt.Printf("services: %s\n", env.Where)
	fmt.Printf("worker:   `pressroom worker`, pid %d, separate process; %d activities at once, libvips concurrency %d\n",
		pid, worker.MaxConcurrentImageWork, images.Concurrency)
	fmt.Printf("fixture:  %d×%d (%.1f MP) photo-like JPEG q%d, %.2f MB\n", width, height, mp, quality, float64(len(fixture))/1e6)
	idle, _ := procStatus(pid)
	fmt.Printf("worker idle: VmRSS %s\n", mbString(idle["VmRSS"]))

	// Memory of the worker, sampled while the uploads run.
	sampler := startSampler(pid, 100*time.Millisecond)
	cpuBefore := snapshotCPU(ctx, pid, env.DB)

	type result struct {
		latency time.Duration
		err     error
	}
	results := make([]result, n)
	sem := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	began := time.Now()
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			lat, status, msg, err := c.ingest(ctx, fmt.Sprintf("photo-%02d.jpg", i), "image/jpeg", fixture, 2*time.Minute)
			if err == nil && status != "finished" {
				err = fmt.Errorf("upload %d ended %s: %s", i, status, msg)
			}
			results[i] = result{lat, err}
		})
	}
	wg.Wait()
	wall := time.Since(began)
	cpuAfter := snapshotCPU(ctx, pid, env.DB)
	peakRSS := sampler.stop()
	after, err := procStatus(pid)
	if err != nil {
		return err
	}

	var lats []time.Duration
	var errs []error
	for _, r := range results {
		if r.err != nil {
			errs = append(errs, r.err)
			continue
		}
		lats = append(lats, r.latency)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	slices.Sort(lats)
	how := "polled every 50 ms"
	if wait > 0 {
		how = fmt.Sprintf("GET ?wait=%s, a long poll", wait)
	}
	fmt.Printf("\n%d uploads, %d at a time; POST /asset-uploads → status finished (%s):\n", n, concurrency, how)
	fmt.Printf("  p50 %s   p95 %s   max %s   min %s\n", secs(benchenv.Percentile(lats, 50)), secs(benchenv.Percentile(lats, 95)), secs(lats[len(lats)-1]), secs(lats[0]))
	fmt.Printf("  throughput: %.2f uploads/s, %.1f MP/s (%d uploads in %s, signature to finished)\n",
		float64(n)/wall.Seconds(), float64(n)*mp/wall.Seconds(), n, secs(wall))
	printCPU(cpuBefore, cpuAfter, n)
	fmt.Printf("worker memory: peak VmRSS %s (sampled every 100 ms), VmHWM %s at the end; target ≤ 400 MB\n",
		mbString(peakRSS), mbString(after["VmHWM"]))

	// The decompression bomb.
	bomb := testsupport.BombPNG(30000, 30000)
	fmt.Printf("\ndecompression bomb: PNG declaring 30000×30000 (900 MP), %d bytes\n", len(bomb))
	reset := resetHWM(pid)
	before, err := procStatus(pid)
	if err != nil {
		return err
	}
	lat, status, msg, err := c.ingest(ctx, "bomb.png", "image/png", bomb, time.Minute)
	if err != nil {
		return err
	}
	bombAfter, err := procStatus(pid)
	if err != nil {
		return err
	}
	fmt.Printf("  upload: %s after %s: %q\n", status, secs(lat), msg)
	if reset == nil {
		fmt.Printf("  worker VmHWM: reset to VmRSS before it; %s before, %s after: +%d kB (target < 16 MB)\n",
			mbString(before["VmHWM"]), mbString(bombAfter["VmHWM"]), bombAfter["VmHWM"]-before["VmHWM"])
	} else {
		fmt.Printf("  worker VmHWM (could not reset it: %v): %s before, %s after: +%d kB\n",
			reset, mbString(before["VmHWM"]), mbString(bombAfter["VmHWM"]), bombAfter["VmHWM"]-before["VmHWM"])
	}
	fmt.Printf("  worker VmRSS: %s before, %s after\n", mbString(before["VmRSS"]), mbString(bombAfter["VmRSS"]))
	allocated, mallocs, herr, err := readHeaderAllocs(env.Dir, bomb)
	if err != nil {
		return err
	}
	fmt.Printf("  in-process images.ReadHeader on the file: %d bytes allocated in %d allocations (TotalAlloc delta); %v\n",
		allocated, mallocs, herr)
	if status != "error" {
		return fmt.Errorf("the bomb ended %q, want error", status)
	}
	fmt.Println("\nCPU against vipsthumbnail: see go run ./bench/images")
	return nil
}

// apiClient speaks to the API as the bench user.
type apiClient struct {
	*benchenv.Client
	// wait, when set, makes ingest wait with GET /asset-uploads/:id?wait=
	// instead of polling every 50 ms.
	wait time.Duration
}

type resource struct {
	ID         string         `json:"id"`
	Attributes map[string]any `json:"attributes"`
}

// call sends a JSON:API request and decodes the resource it answers with.
func (c *apiClient) call(ctx context.Context, method, path string, body any, want int) (resource, error) {
	raw, err := c.Call(ctx, method, path, body, want)
	if err != nil {
		return resource{}, err
	}
	var d struct{ Data resource }
	if err := json.Unmarshal(raw, &d); err != nil {
		return resource{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return d.Data, nil
}

// ingest uploads file the way a browser does and polls (or long-polls,
// with c.wait) until the upload leaves "processing". The latency runs from POST /asset-uploads to the
// poll that saw the final status.
func (c *apiClient) ingest(ctx context.Context, filename, contentType string, file []byte, within time.Duration) (time.Duration, string, string, error) {
	sig, err := c.call(ctx, http.MethodPost, "/upload-signatures", map[string]any{"data": map[string]any{
		"type": "upload-signatures", "attributes": map[string]any{"filename": filename, "content-type": contentType}}}, 200)
	if err != nil {
		return 0, "", "", err
	}
	if err := c.browserUpload(ctx, sig.Attributes, file); err != nil {
		return 0, "", "", err
	}
	t0 := time.Now()
	up, err := c.call(ctx, http.MethodPost, "/asset-uploads", map[string]any{"data": map[string]any{"type": "asset-uploads",
		"attributes": map[string]any{"file-name": filename, "key": sig.Attributes["key"], "content-type": contentType,
			"file-size": len(file), "user-agent": "pressroom-bench"}}}, 202)
	if err != nil {
		return 0, "", "", err
	}
	get, pause := "/asset-uploads/"+up.ID, 50*time.Millisecond
	if c.wait > 0 {
		get, pause = get+"?wait="+c.wait.String(), 0
	}
	for {
		r, err := c.call(ctx, http.MethodGet, get, nil, 200)
		if err != nil {
			return 0, "", "", err
		}
		if st, _ := r.Attributes["status"].(string); st != "processing" {
			msg, _ := r.Attributes["error-message"].(string)
			return time.Since(t0), st, msg, nil
		}
		if time.Since(t0) > within {
			return 0, "", "", fmt.Errorf("upload %s still processing after %s", up.ID, within)
		}
		select {
		case <-ctx.Done():
			return 0, "", "", ctx.Err()
		case <-time.After(pause):
		}
	}
}

// browserUpload posts file to storage as a browser form does, with the
// signature's fields under their S3 names.
func (c *apiClient) browserUpload(ctx context.Context, a map[string]any, file []byte) error {
	req, err := client.NewStorageRequest(ctx, a, bytes.NewReader(file), int64(len(file)))
	if err != nil {
		return err
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("storage upload = %d %s", resp.StatusCode, b)
	}
	return nil
}

// procStatus reads the kB figures (VmRSS, VmHWM, ...) of /proc/<pid>/status.
func procStatus(pid int) (map[string]int64, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		fields := strings.Fields(rest)
		if !ok || len(fields) != 2 || fields[1] != "kB" {
			continue
		}
		if v, err := strconv.ParseInt(fields[0], 10, 64); err == nil {
			out[name] = v
		}
	}
	return out, sc.Err()
}

// resetHWM sets the process's VmHWM back to its current VmRSS (Linux ≥ 4.0).
func resetHWM(pid int) error {
	return os.WriteFile("/proc/"+strconv.Itoa(pid)+"/clear_refs", []byte("5"), 0)
}

type sampler struct {
	stopc chan struct{}
	done  chan int64
}

// startSampler reads the process's VmRSS every interval and keeps the peak.
func startSampler(pid int, interval time.Duration) *sampler {
	s := &sampler{stopc: make(chan struct{}), done: make(chan int64)}
	go func() {
		var peak int64
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			if st, err := procStatus(pid); err == nil {
				peak = max(peak, st["VmRSS"])
			}
			select {
			case <-s.stopc:
				s.done <- peak
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *sampler) stop() int64 {
	close(s.stopc)
	return <-s.done
}

// readHeaderAllocs measures what images.ReadHeader allocates on the bomb,
// read from a file as the worker does.
func readHeaderAllocs(dir string, bomb []byte) (allocated, mallocs uint64, headerErr, err error) {
	path := filepath.Join(dir, "bomb.png")
	if err := os.WriteFile(path, bomb, 0o644); err != nil {
		return 0, 0, nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, nil, err
	}
	defer f.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, headerErr = images.ReadHeader(f, images.Limits{})
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, after.Mallocs - before.Mallocs, headerErr, nil
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }

func mbString(kb int64) string { return fmt.Sprintf("%.1f MB", float64(kb)/1024) }
