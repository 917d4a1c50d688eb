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
//     /asset-uploads, poll GET /asset-uploads/:id every 50 ms), and reports
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
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"log"
	"log/slog"
	"math"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/minio/minio-go/v7"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/pressroom/pressroom/activities/images"
	"github.com/pressroom/pressroom/api"
	"github.com/pressroom/pressroom/auth"
	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/dev"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/storage"
	"github.com/pressroom/pressroom/worker"
)

const (
	email    = "bench@bench.test"
	password = "pressroom-bench"
)

func main() {
	n := flag.Int("n", 20, "uploads to time")
	concurrency := flag.Int("concurrency", 4, "uploads in flight at once")
	width := flag.Int("width", 4000, "fixture width")
	height := flag.Int("height", 3000, "fixture height")
	quality := flag.Int("quality", 92, "fixture JPEG quality")
	keep := flag.Bool("keep", false, "keep the temporary directory (fixture, worker log, private stack's logs)")
	flag.Parse()
	log.SetFlags(0)
	if *n < 1 || *concurrency < 1 {
		log.Fatal("-n and -concurrency must be at least 1")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *n, *concurrency, *width, *height, *quality, *keep)
	stop()
	if err != nil {
		log.Fatal("bench/uploads: ", err)
	}
}

// cleanups run in reverse order when run returns.
type cleanups []func()

func (c *cleanups) add(fn func()) { *c = append(*c, fn) }

func (c cleanups) run() {
	for i := len(c) - 1; i >= 0; i-- {
		c[i]()
	}
}

func run(ctx context.Context, n, concurrency, width, height, quality int, keep bool) (err error) {
	var done cleanups
	defer done.run()

	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	root, err := dev.RepoRoot(cwd)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "pressroom-bench-uploads-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Println("keeping", dir)
	} else {
		done.add(func() { os.RemoveAll(dir) })
	}

	// The binary builds while the services start.
	bin := filepath.Join(dir, "pressroom")
	buildErr := make(chan error, 1)
	go func() {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/pressroom")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			err = fmt.Errorf("go build ./cmd/pressroom: %w\n%s", err, out)
		}
		buildErr <- err
	}()

	svc, where, err := services(ctx, root, dir, &done)
	if err != nil {
		return err
	}
	suffix := randomSuffix()

	// A fresh database, migrated.
	dbName := "pr_bench_" + suffix
	if err := withServer(ctx, svc.postgres, func(conn *pgx.Conn) error { return dev.CreateDatabase(ctx, conn, dbName, "") }); err != nil {
		return err
	}
	done.add(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = withServer(ctx, svc.postgres, func(conn *pgx.Conn) error {
			_, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{dbName}.Sanitize()+" WITH (FORCE)")
			return err
		})
	})
	dbURL, err := withDatabase(svc.postgres, dbName)
	if err != nil {
		return err
	}
	db, err := models.Open(ctx, dbURL)
	if err != nil {
		return err
	}
	done.add(func() { db.Close() })
	m, err := models.NewMigrator(db)
	if err != nil {
		return err
	}
	if _, err := m.Up(ctx); err != nil {
		return err
	}

	// Fresh buckets.
	st := svc.storage
	st.UploadsBucket, st.AssetsBucket = "bench-"+suffix+"-uploads", "bench-"+suffix+"-assets"
	mc, err := storage.NewClient(st)
	if err != nil {
		return err
	}
	if err := storage.EnsureBuckets(ctx, mc, st); err != nil {
		return err
	}
	done.add(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, b := range []string{st.UploadsBucket, st.AssetsBucket} {
			_ = mc.RemoveBucketWithOptions(ctx, b, minio.RemoveBucketOptions{ForceDelete: true})
		}
	})

	cfg, err := config.FromEnv(func(string) string { return "" })
	if err != nil {
		return err
	}
	cfg.DatabaseURL, cfg.TemporalAddress, cfg.TaskQueue, cfg.Storage = dbURL, svc.temporal, "bench-"+suffix, st
	cfg.AutoMigrate = false

	// The API, in this process.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	cfg.PublicURL = "http://" + ln.Addr().String()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	tc, err := client.Dial(client.Options{HostPort: cfg.TemporalAddress, Namespace: cfg.TemporalNamespace, Logger: quietLogger{}})
	if err != nil {
		return fmt.Errorf("temporal: %w", err)
	}
	done.add(tc.Close)
	app, err := api.New(api.Deps{Config: cfg, DB: db, Temporal: tc, Storage: mc, Log: quiet})
	if err != nil {
		return err
	}
	go app.Listener(ln) //nolint:errcheck // ends with Shutdown
	done.add(func() { _ = app.Shutdown() })

	site, err := models.CreateSite(ctx, db, "Bench", "bench")
	if err != nil {
		return err
	}
	hash, err := auth.HashPassword(password)
	if err != nil {
		return err
	}
	if _, err := models.CreateUser(ctx, db, site.ID, email, "Bench", hash); err != nil {
		return err
	}
	c := &apiClient{base: cfg.PublicURL, http: &http.Client{Timeout: time.Minute}}
	if err := c.signIn(ctx); err != nil {
		return err
	}

	// The worker, as a separate process.
	if err := <-buildErr; err != nil {
		return err
	}
	logPath := filepath.Join(dir, "worker.log")
	wlog, err := os.Create(logPath)
	if err != nil {
		return err
	}
	done.add(func() { wlog.Close() })
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return err
	}
	wp, err := dev.StartProcess("worker", bin, []string{"worker"}, workerEnv(cfg, tmp), wlog, nil)
	if err != nil {
		return err
	}
	done.add(func() { _ = wp.Stop(15 * time.Second) })
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w (worker log: %s)", err, logPath)
		}
	}()
	if err := wp.WaitFor(ctx, time.Minute, func(ctx context.Context) error { return polled(ctx, tc, cfg.TaskQueue) }); err != nil {
		return err
	}
	pid := wp.Pid()

	// The fixture.
	fixture, err := photoJPEG(width, height, quality)
	if err != nil {
		return err
	}
	mp := float64(width*height) / 1e6

	fmt.Println("pressroom upload benchmark")
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("machine:  %s/%s, %d CPUs, %s; load average %s\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(),
		strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " "))
	fmt.Printf("services: %s\n", where)
	fmt.Printf("worker:   `pressroom worker`, pid %d, separate process; %d activities at once, libvips concurrency %d\n",
		pid, worker.MaxConcurrentImageWork, images.Concurrency)
	fmt.Printf("fixture:  %d×%d (%.1f MP) photo-like JPEG q%d, %.2f MB\n", width, height, mp, quality, float64(len(fixture))/1e6)
	idle, _ := procStatus(pid)
	fmt.Printf("worker idle: VmRSS %s\n", mbString(idle["VmRSS"]))

	// Memory of the worker, sampled while the uploads run.
	sampler := startSampler(pid, 100*time.Millisecond)

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
	fmt.Printf("\n%d uploads, %d at a time; POST /asset-uploads → status finished (polled every 50 ms):\n", n, concurrency)
	fmt.Printf("  p50 %s   p95 %s   max %s   min %s\n", secs(percentile(lats, 50)), secs(percentile(lats, 95)), secs(lats[len(lats)-1]), secs(lats[0]))
	fmt.Printf("  throughput: %.2f uploads/s, %.1f MP/s (%d uploads in %s, signature to finished)\n",
		float64(n)/wall.Seconds(), float64(n)*mp/wall.Seconds(), n, secs(wall))
	fmt.Printf("worker memory: peak VmRSS %s (sampled every 100 ms), VmHWM %s at the end; target ≤ 400 MB\n",
		mbString(peakRSS), mbString(after["VmHWM"]))

	// The decompression bomb.
	bomb := bombPNG(30000, 30000)
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
	allocated, mallocs, herr, err := readHeaderAllocs(dir, bomb)
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

// svcs are the running dependencies.
type svcs struct {
	postgres string // server URL (maintenance database)
	temporal string
	storage  config.Storage
}

// services returns the stack named by PRESSROOM_TEST_*, else starts one.
func services(ctx context.Context, root, dir string, done *cleanups) (svcs, string, error) {
	defaults, err := config.FromEnv(func(string) string { return "" })
	if err != nil {
		return svcs{}, "", err
	}
	if pg := os.Getenv(dev.EnvTestPostgres); pg != "" {
		st := defaults.Storage
		st.Endpoint = os.Getenv(dev.EnvTestS3Endpoint)
		st.PublicEndpoint = st.Endpoint
		st.AccessKey, st.SecretKey = os.Getenv(dev.EnvTestS3AccessKey), os.Getenv(dev.EnvTestS3SecretKey)
		return svcs{postgres: pg, temporal: os.Getenv(dev.EnvTestTemporal), storage: st}, "from PRESSROOM_TEST_* (devstack exec)", nil
	}
	fmt.Fprintln(os.Stderr, "starting a private stack (no PRESSROOM_TEST_* variables)...")
	stack, err := dev.Up(ctx, dev.StackOptions{
		RepoRoot: root, StateDir: filepath.Join(dir, "stack"), DatabaseURL: os.Getenv("DATABASE_URL"), Database: "pressroom", Log: os.Stderr,
	})
	if err != nil {
		return svcs{}, "", err
	}
	done.add(func() {
		if err := stack.Down(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the stack:", err)
		}
	})
	return svcs{postgres: stack.Postgres.ServerURL, temporal: stack.TemporalAddress, storage: stack.Storage}, "private stack (dev.Up)", nil
}

// workerEnv is the environment that points `pressroom worker` at cfg.
func workerEnv(cfg config.Config, tmp string) []string {
	st := cfg.Storage
	return []string{
		"DATABASE_URL=" + cfg.DatabaseURL,
		"TEMPORAL_ADDRESS=" + cfg.TemporalAddress,
		"TEMPORAL_NAMESPACE=" + cfg.TemporalNamespace,
		"PRESSROOM_TASK_QUEUE=" + cfg.TaskQueue,
		"PRESSROOM_S3_ENDPOINT=" + st.Endpoint,
		"PRESSROOM_S3_PUBLIC_ENDPOINT=" + st.PublicEndpoint,
		"PRESSROOM_S3_ACCESS_KEY=" + st.AccessKey,
		"PRESSROOM_S3_SECRET_KEY=" + st.SecretKey,
		"PRESSROOM_S3_REGION=" + st.Region,
		"PRESSROOM_UPLOADS_BUCKET=" + st.UploadsBucket,
		"PRESSROOM_ASSETS_BUCKET=" + st.AssetsBucket,
		"PRESSROOM_LOG_LEVEL=warn",
		"TMPDIR=" + tmp,
	}
}

// polled tells whether a worker polls the task queue's activities.
func polled(ctx context.Context, tc client.Client, queue string) error {
	resp, err := tc.DescribeTaskQueue(ctx, queue, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
	if err != nil {
		return err
	}
	if len(resp.GetPollers()) == 0 {
		return errors.New("no worker polls " + queue + " yet")
	}
	return nil
}

// apiClient speaks to the API as the bench user.
type apiClient struct {
	base  string
	http  *http.Client
	token string
}

func (c *apiClient) signIn(ctx context.Context) error {
	form := url.Values{"grant_type": {"password"}, "username": {email}, "password": {password}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/oauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		return fmt.Errorf("password grant: %d %v", resp.StatusCode, err)
	}
	c.token = tok.AccessToken
	return nil
}

type resource struct {
	ID         string         `json:"id"`
	Attributes map[string]any `json:"attributes"`
}

// call sends a JSON:API request and decodes the resource it answers with.
func (c *apiClient) call(ctx context.Context, method, path string, body any, want int) (resource, error) {
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequestWithContext(ctx, method, c.base+path, r)
	req.Header.Set("Accept", "application/vnd.api+json")
	if body != nil {
		req.Header.Set("Content-Type", "application/vnd.api+json")
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return resource{}, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return resource{}, fmt.Errorf("%s %s = %d %s", method, path, resp.StatusCode, raw)
	}
	var d struct{ Data resource }
	if err := json.Unmarshal(raw, &d); err != nil {
		return resource{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return d.Data, nil
}

// ingest uploads file the way a browser does and polls until the upload
// leaves "processing". The latency runs from POST /asset-uploads to the
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
	for {
		r, err := c.call(ctx, http.MethodGet, "/asset-uploads/"+up.ID, nil, 200)
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
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// browserUpload posts file to storage as a browser form does, with the
// signature's fields under their S3 names.
func (c *apiClient) browserUpload(ctx context.Context, a map[string]any, file []byte) error {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for field, attr := range map[string]string{
		"key": "key", "acl": "acl", "Content-Type": "content-type", "policy": "policy",
		"x-amz-credential": "x-storage-credential", "x-amz-algorithm": "x-storage-algorithm",
		"x-amz-date": "x-storage-date", "x-amz-signature": "x-storage-signature",
	} {
		_ = w.WriteField(field, fmt.Sprint(a[attr]))
	}
	fw, _ := w.CreateFormFile("file", "upload")
	_, _ = fw.Write(file)
	_ = w.Close()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprint(a["endpoint"]), &buf)
	req.Header.Set("Content-Type", w.FormDataContentType())
	resp, err := c.http.Do(req)
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

// bombPNG is a tiny PNG whose header declares w×h pixels.
func bombPNG(w, h uint32) []byte {
	var b bytes.Buffer
	b.Write([]byte("\x89PNG\r\n\x1a\n"))
	chunk := func(typ string, data []byte) {
		_ = binary.Write(&b, binary.BigEndian, uint32(len(data)))
		b.WriteString(typ)
		b.Write(data)
		_ = binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 2 // 8-bit RGB
	chunk("IHDR", ihdr)
	chunk("IDAT", []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01})
	chunk("IEND", nil)
	return b.Bytes()
}

// photoJPEG encodes a procedural photo-like image: smooth gradients and
// soft shapes plus per-pixel noise, computed on demand (no raster held).
func photoJPEG(w, h, quality int) ([]byte, error) {
	var b bytes.Buffer
	err := jpeg.Encode(&b, procedural{w, h}, &jpeg.Options{Quality: quality})
	return b.Bytes(), err
}

type procedural struct{ w, h int }

func (p procedural) ColorModel() color.Model { return color.RGBAModel }
func (p procedural) Bounds() image.Rectangle { return image.Rect(0, 0, p.w, p.h) }

func (p procedural) At(x, y int) color.Color {
	fx, fy := float64(x)/float64(p.w), float64(y)/float64(p.h)
	r := 70 + 120*fy // sky-to-ground gradient
	g := 110 + 60*fx
	b := 200 - 130*fy
	s := math.Sin(fx*9.3+math.Cos(fy*4.1)*2) * math.Cos(fy*7.7-fx*3) // soft shapes
	r += 40 * s
	g += 30 * math.Sin(fx*23+fy*17)
	b += 25 * s * math.Cos(fx*13)
	t := math.Sin(float64(x)*0.21+math.Sin(float64(y)*0.05)*6) * 12 * fx // texture
	v := uint32(x)*0x9E3779B1 ^ uint32(y)*0x85EBCA77                     // noise
	v ^= v >> 15
	v *= 0x2C1B3C6D
	v ^= v >> 12
	n := float64(v%33) - 16
	return color.RGBA{clamp(r + t + n), clamp(g + t + n*0.8), clamp(b + t + n*1.2), 255}
}

func clamp(v float64) uint8 { return uint8(math.Max(0, math.Min(255, v))) }

// percentile is the nearest-rank percentile of sorted d.
func percentile(d []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p/100*float64(len(d)))) - 1
	return d[max(0, min(len(d)-1, i))]
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }

func mbString(kb int64) string { return fmt.Sprintf("%.1f MB", float64(kb)/1024) }

func withServer(ctx context.Context, serverURL string, fn func(*pgx.Conn) error) error {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return fmt.Errorf("connect to postgres: %w", err)
	}
	defer conn.Close(context.Background())
	return fn(conn)
}

func withDatabase(serverURL, name string) (string, error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}
