// Command fairness measures fairness between sites in asset ingestion
// (issue 24): site A drops a gallery of -n photos at once while site B
// uploads one photo at a time. Every notice must be accepted (202); B's
// photo must finish within twice its time on an idle system; A's photos
// must all finish.
//
//	go run ./bench/uploads/fairness [-n 50] [-runs 5] [-limit 2] [-width 3000 -height 2000] [-keep]
//
// Like bench/uploads it uses the services named by the PRESSROOM_TEST_*
// variables (`go run ./dev/cmd/devstack exec -- go run ./bench/uploads/fairness`),
// else a private stack; a fresh database and buckets; the API in this
// process and `pressroom worker` as a separate process. Then:
//
//  1. B uploads one photo to warm up, then -runs photos one after the other
//     on the idle system: "idle" (from POST /asset-uploads to finished, waited
//     for with GET ?wait=20s).
//  2. A's -n photos are stored, then noticed 8 at a time (an editor's drop).
//  3. While A's gallery is queued, B uploads -runs photos one after the
//     other: "loaded"; for each, its queue position at the notice (0: a slot
//     at once) and how many of A's finished meanwhile.
//  4. A's photos are waited for, all of them.
//
// It prints the medians and their ratio (target ≤ 2), and fails if a notice
// was refused, B waited in a queue or an upload did not finish.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pressroom/pressroom/bench/internal/benchenv"
	"github.com/pressroom/pressroom/client"
	"github.com/pressroom/pressroom/dev"
	"github.com/pressroom/pressroom/worker"
)

type options struct {
	n, runs, limit, width, height int
	keep                          bool
}

func main() {
	var o options
	flag.IntVar(&o.n, "n", 50, "photos in site A's gallery")
	flag.IntVar(&o.runs, "runs", 5, "site B's photos timed on the idle system, and again while A's gallery is queued")
	flag.IntVar(&o.limit, "limit", 2, "PRESSROOM_SITE_UPLOAD_LIMIT: each site's uploads processed at once")
	flag.IntVar(&o.width, "width", 3000, "photo width")
	flag.IntVar(&o.height, "height", 2000, "photo height")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (worker log, private stack's logs)")
	flag.Parse()
	log.SetFlags(0)
	if o.n < 1 || o.runs < 1 || o.limit < 1 {
		log.Fatal("-n, -runs and -limit must be at least 1")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, o)
	stop()
	if err != nil {
		log.Fatal("bench/uploads/fairness: ", err)
	}
}

func run(ctx context.Context, o options) error {
	env, err := benchenv.New("pressroom-bench-fairness-", o.keep)
	if err != nil {
		return err
	}
	defer env.Close()
	env.SiteUploadLimit = o.limit
	build := dev.BuildPressroom(ctx, env.Root, env.Dir)
	if err := env.Up(ctx); err != nil {
		return err
	}
	siteB, err := env.User(ctx)
	if err != nil {
		return err
	}
	siteA, err := env.SiteUser(ctx, "gallery", "gallery@bench.test")
	if err != nil {
		return err
	}
	bin, err := build()
	if err != nil {
		return err
	}
	if _, logPath, err := env.StartWorker(ctx, bin); err != nil {
		return fmt.Errorf("%w (worker log: %s)", err, logPath)
	}
	photo, err := benchenv.PhotoJPEG(o.width, o.height, 88)
	if err != nil {
		return err
	}
	fmt.Println("pressroom fairness benchmark: site A's gallery against site B's photo")
	fmt.Printf("machine:  %s; load average %s\n", benchenv.Machine(), benchenv.LoadAvg())
	fmt.Printf("services: %s\n", env.Where)
	fmt.Printf("worker:   `pressroom worker`, separate process, %d activities at once; PRESSROOM_SITE_UPLOAD_LIMIT=%d\n",
		worker.MaxConcurrentImageWork, o.limit)
	fmt.Printf("photo:    %d×%d photo-like JPEG q88, %.2f MB\n\n", o.width, o.height, float64(len(photo))/1e6)
	return measure(ctx, o, &siteUser{Client: siteA}, &siteUser{Client: siteB}, photo)
}

// measure runs steps 1 to 4 and prints the figures.
func measure(ctx context.Context, o options, siteA, siteB *siteUser, photo []byte) error {
	if _, err := siteB.timed(ctx, "warm-up.jpg", photo); err != nil {
		return err
	}
	var idle []time.Duration
	for i := range o.runs {
		r, err := siteB.timed(ctx, fmt.Sprintf("idle-%d.jpg", i), photo)
		if err != nil {
			return err
		}
		idle = append(idle, r.took)
	}
	gallery, err := siteA.drop(ctx, o.n, photo)
	if err != nil {
		return err
	}
	var loaded []time.Duration
	for i := range o.runs {
		before := gallery.finished.Load()
		r, err := siteB.timed(ctx, fmt.Sprintf("loaded-%d.jpg", i), photo)
		if err != nil {
			return err
		}
		if r.position != 0 {
			return fmt.Errorf("site B's photo %d waited at queue position %d behind site A's gallery", i+1, r.position)
		}
		loaded = append(loaded, r.took)
		fmt.Printf("site B, loaded %d: %s; site A finished %d meanwhile, %d of %d so far\n",
			i+1, secs(r.took), gallery.finished.Load()-before, gallery.finished.Load(), o.n)
	}
	if err := gallery.wait(); err != nil {
		return err
	}
	mi, ml := median(idle), median(loaded)
	verdict := "met"
	if ml > 2*mi {
		verdict = "NOT met"
	}
	fmt.Printf("\nsite B, idle:   %s (median %s)\n", secsAll(idle), secs(mi))
	fmt.Printf("site B, loaded: %s (median %s)\n", secsAll(loaded), secs(ml))
	fmt.Printf("ratio: %.2f (target ≤ 2: %s)\n", float64(ml)/float64(mi), verdict)
	fmt.Printf("site A: %d of %d notices accepted (202), all %d finished; %s from the first notice to the last finished (%.2f photos/s)\n",
		o.n, o.n, o.n, secs(gallery.took), float64(o.n)/gallery.took.Seconds())
	return nil
}

// siteUser is a site's user.
type siteUser struct{ *benchenv.Client }

type upload struct {
	ID         string         `json:"id"`
	Attributes map[string]any `json:"attributes"`
	Meta       map[string]any `json:"meta"`
}

func (c *siteUser) call(ctx context.Context, method, path string, body any, want int) (upload, error) {
	raw, err := c.Call(ctx, method, path, body, want)
	if err != nil {
		return upload{}, err
	}
	var d struct{ Data upload }
	if err := json.Unmarshal(raw, &d); err != nil {
		return upload{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return d.Data, nil
}

// store signs and stores file under name, as a browser does, and returns
// the signature's key.
func (c *siteUser) store(ctx context.Context, name string, file []byte) (string, error) {
	sig, err := c.call(ctx, http.MethodPost, "/upload-signatures", map[string]any{"data": map[string]any{
		"type": "upload-signatures", "attributes": map[string]any{"filename": name, "content-type": "image/jpeg"}}}, 200)
	if err != nil {
		return "", err
	}
	req, err := client.NewStorageRequest(ctx, sig.Attributes, bytes.NewReader(file), int64(len(file)))
	if err != nil {
		return "", err
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		return "", fmt.Errorf("storage upload = %d", resp.StatusCode)
	}
	key, _ := sig.Attributes["key"].(string)
	return key, nil
}

// notice posts the upload notice of key; 202 is the only answer wanted.
func (c *siteUser) notice(ctx context.Context, name, key string, size int) (upload, error) {
	return c.call(ctx, http.MethodPost, "/asset-uploads", map[string]any{"data": map[string]any{"type": "asset-uploads",
		"attributes": map[string]any{"file-name": name, "key": key, "content-type": "image/jpeg", "file-size": size, "user-agent": "pressroom-bench"}}}, 202)
}

// finish waits for the upload to leave "processing" (long polls) and
// wants it finished.
func (c *siteUser) finish(ctx context.Context, id string) error {
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		up, err := c.call(ctx, http.MethodGet, "/asset-uploads/"+id+"?wait=20s", nil, 200)
		if err != nil {
			return err
		}
		switch up.Attributes["status"] {
		case "finished":
			return nil
		case "error":
			return fmt.Errorf("upload %s ended in error: %v", id, up.Attributes["error-message"])
		}
	}
	return fmt.Errorf("upload %s still processing after 10 minutes", id)
}

type timing struct {
	took     time.Duration
	position int // meta.queue-position of the notice's answer
}

// timed stores one photo, then times its notice to finished.
func (c *siteUser) timed(ctx context.Context, name string, file []byte) (timing, error) {
	key, err := c.store(ctx, name, file)
	if err != nil {
		return timing{}, err
	}
	began := time.Now()
	up, err := c.notice(ctx, name, key, len(file))
	if err != nil {
		return timing{}, err
	}
	if err := c.finish(ctx, up.ID); err != nil {
		return timing{}, err
	}
	p, _ := up.Meta["queue-position"].(float64)
	return timing{took: time.Since(began), position: int(p)}, nil
}

// gallery is site A's drop under way.
type gallery struct {
	finished atomic.Int64
	took     time.Duration
	done     chan error
}

func (g *gallery) wait() error { return <-g.done }

// drop stores n photos, notices them 8 at a time, and waits for them all in
// the background.
func (c *siteUser) drop(ctx context.Context, n int, photo []byte) (*gallery, error) {
	keys := make([]string, n)
	for i := range keys {
		var err error
		if keys[i], err = c.store(ctx, fmt.Sprintf("gallery-%03d.jpg", i), photo); err != nil {
			return nil, err
		}
	}
	g := &gallery{done: make(chan error, 1)}
	began := time.Now()
	ids := make([]string, n)
	errs := make([]error, n)
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, key := range keys {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			up, err := c.notice(ctx, fmt.Sprintf("gallery-%03d.jpg", i), key, len(photo))
			ids[i], errs[i] = up.ID, err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("site A's notices: %w", err)
	}
	go func() {
		var wg sync.WaitGroup
		for i, id := range ids {
			wg.Go(func() {
				errs[i] = c.finish(ctx, id)
				g.finished.Add(1)
			})
		}
		wg.Wait()
		g.took = time.Since(began)
		g.done <- errors.Join(errs...)
	}()
	return g, nil
}

func median(ds []time.Duration) time.Duration {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }

func secsAll(ds []time.Duration) string {
	s := ""
	for i, d := range ds {
		if i > 0 {
			s += " "
		}
		s += secs(d)
	}
	return s
}
