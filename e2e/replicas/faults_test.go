package replicas_test

// Real faults under a mixed load on 2 APIs and 2 workers: a worker
// SIGKILLed, the Postgres server restarted, the Temporal server restarted,
// storage down for 30 s. After each, the load stops, the work settles, and
// replicas.Check proves nothing was lost or done twice and no object was
// orphaned.

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"net/http"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/pressroom/pressroom/e2e/replicas"
	"github.com/pressroom/pressroom/workflows"
)

// faultMix is heavy on the work that crosses into workflows.
var faultMix = replicas.Mix{ReadLive: 30, ReadDraft: 10, Write: 30, Publish: 15, Upload: 15}

// runLoad prepares pages and runs the load through the proxy until the
// returned stop is called, which waits for it and returns it.
func (f *fixture) runLoad(t *testing.T, rate float64) (stop func() *replicas.Load) {
	t.Helper()
	l := &replicas.Load{HTTP: &http.Client{Timeout: time.Minute}, Base: f.URL, Token: f.token(t, f.URL, "editor@demo.test"),
		Rate: rate, Mix: faultMix, Conc: 6}
	if err := l.Prepare(context.Background(), 12); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); l.Run(ctx) }()
	return func() *replicas.Load { cancel(); <-done; return l }
}

// settleAndCheck waits for the work to settle, publishes what is left
// drafted, and checks every invariant; it returns the elapsed settling time.
func (f *fixture) settleAndCheck(t *testing.T, l *replicas.Load, within time.Duration) time.Duration {
	t.Helper()
	ctx := context.Background()
	began := time.Now()
	if bad := l.CheckWrites(ctx, false); len(bad) > 0 {
		t.Errorf("accepted writes lost (%d): %v", len(bad), bad)
	}
	if err := l.PublishDrafts(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := replicas.Settle(ctx, f.DB, f.Storage, f.Config.Storage, within)
	if err != nil {
		t.Fatal(err)
	}
	if bad := l.CheckWrites(ctx, true); len(bad) > 0 {
		t.Errorf("accepted writes not live after publishing every draft (%d): %v", len(bad), bad)
	}
	uploads, revisions := l.Accepted()
	if bad := replicas.Check(ctx, f.DB, f.Storage, f.Config.Storage, uploads, revisions); len(bad) > 0 {
		t.Errorf("%d invariants broken: %v", len(bad), bad)
	}
	t.Logf("settled in %.1fs: %s", time.Since(began).Seconds(), c)
	return time.Since(began)
}

func logLoad(t *testing.T, l *replicas.Load, elapsed time.Duration) {
	t.Helper()
	stats, dropped := l.Stats()
	t.Logf("load over %.0fs (%d ticks dropped, every sender busy):\n%s", elapsed.Seconds(), dropped, replicas.Report(stats, elapsed))
}

func TestWorkerSIGKILLUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test: SIGKILLs workers and waits for Temporal's timeouts")
	}
	t.Parallel()
	f := newFixture(t, setup{apis: 2, workers: 2, env: []string{"PRESSROOM_SITE_UPLOAD_LIMIT=6"}})
	stop := f.runLoad(t, 15)
	began := time.Now()
	ctx := context.Background()
	// Twice: a large photo is uploaded, and whichever worker is decoding it
	// is killed (the other keeps working) and started again 3 s later.
	photo := photoJPEG(t, 3000, 2000)
	tok := f.token(t, f.URL, "second@demo.test")
	var killed []string
	for round := range 2 {
		time.Sleep(3 * time.Second)
		up, err := replicas.Upload(ctx, f.http, f.URL, tok, "photo.jpg", "image/jpeg", photo)
		if err != nil || up.Status != 202 {
			t.Fatalf("upload of the photo = %s %v", up, err)
		}
		wfID := workflows.AssetUploadID(resourceOf(t, up).ID)
		killed = append(killed, wfID)
		w := f.awaitIngest(t, wfID)
		t.Logf("round %d: SIGKILL %s (pid %d) %.1fs into the load, while it runs Ingest of %s", round+1, w.Name, w.Pid(), time.Since(began).Seconds(), wfID)
		w.Kill()
		time.Sleep(3 * time.Second)
		if err := w.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2 * time.Second)
	l := stop()
	logLoad(t, l, time.Since(began))
	stats, _ := l.Stats()
	if unavailable, other, _ := replicas.Status5xx(stats); unavailable+other > 0 {
		t.Errorf("a worker's death reached API clients: %d 503s, %d other 5xx", unavailable, other)
	}
	// Activities of the killed worker are retried after their timeouts
	// (Ingest heartbeats every few seconds, with a 30 s heartbeat timeout).
	f.settleAndCheck(t, l, 3*time.Minute)
	// The kills hit work in flight: the photos' Ingest ran again.
	for _, wfID := range killed {
		if n := f.ingestAttempts(t, wfID); n < 2 {
			t.Errorf("%s: Ingest's last attempt was %d; the kill did not interrupt it, so this round proved nothing", wfID, n)
		}
	}
}

// awaitIngest waits until some worker has started the workflow's Ingest
// activity and returns that worker (the SDK's identity starts with the pid).
func (f *fixture) awaitIngest(t *testing.T, wfID string) *replicas.Replica {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		d, err := f.Temporal.DescribeWorkflowExecution(context.Background(), wfID, "")
		if err != nil {
			continue // not visible yet
		}
		for _, pa := range d.GetPendingActivities() {
			if pa.GetActivityType().GetName() != "Ingest" || pa.GetState() != enumspb.PENDING_ACTIVITY_STATE_STARTED {
				continue
			}
			for _, w := range f.Workers {
				if strings.HasPrefix(pa.GetLastWorkerIdentity(), fmt.Sprintf("%d@", w.Pid())) {
					return w
				}
			}
		}
	}
	t.Fatalf("no worker started Ingest of %s within a minute", wfID)
	return nil
}

// ingestAttempts is the attempt of the workflow's last started Ingest.
func (f *fixture) ingestAttempts(t *testing.T, wfID string) int {
	t.Helper()
	attempt := 0
	it := f.Temporal.GetWorkflowHistory(context.Background(), wfID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil {
			attempt = max(attempt, int(a.GetAttempt()))
		}
	}
	return attempt
}

// photoJPEG is a w×h photo-like JPEG (gradients and noise): decoding and
// resizing it takes the worker a few seconds.
func photoJPEG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		row := img.Pix[y*img.Stride:]
		for x := 0; x < w; x++ {
			v := uint32(x)*0x9E3779B1 ^ uint32(y)*0x85EBCA77
			v ^= v >> 15
			n := int(v%17) - 8
			row[4*x+0] = uint8(max(0, min(255, 60+150*y/h+n)))
			row[4*x+1] = uint8(max(0, min(255, 100+90*x/w+n)))
			row[4*x+2] = uint8(max(0, min(255, 210-140*y/h+n)))
			row[4*x+3] = 255
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 88}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
