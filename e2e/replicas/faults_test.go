package replicas_test

// Real faults under a mixed load on 2 APIs and 2 workers: a worker
// SIGKILLed, the Postgres server restarted, the Temporal server restarted,
// storage down for 30 s. The load includes scheduled publishes and a
// webhook whose receiver gets every event. After each fault, the load
// stops, the work settles, and replicas.Check proves nothing was lost or
// done twice and no object was orphaned, and replicas.CheckWebhook that
// every event was delivered once, in order, none left pending or failed.

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/pressroom/pressroom/e2e/replicas"
	"github.com/pressroom/pressroom/testsupport"
	"github.com/pressroom/pressroom/workflows"
)

// faultMix is heavy on the work that crosses into workflows: uploads,
// publishes at once and scheduled 1.5–3 s ahead, and (the load's webhook)
// a delivery per event.
var faultMix = replicas.Mix{ReadLive: 30, ReadDraft: 10, Write: 30, Publish: 10, Schedule: 5, Upload: 15}

// runLoad subscribes a webhook receiver, prepares pages and runs the load
// through the proxy until the returned stop is called, which waits for it
// and returns it.
func (f *fixture) runLoad(t *testing.T, rate float64) (stop func() *replicas.Load) {
	t.Helper()
	hook := replicas.NewReceiver(f.DB)
	t.Cleanup(hook.Close)
	l := &replicas.Load{HTTP: &http.Client{Timeout: time.Minute}, Base: f.URL, Token: f.token(t, f.URL, "editor@demo.test"),
		Rate: rate, Mix: faultMix, Conc: 6, Hook: hook}
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
	// Revisions answered 202 finish first; then the drafts they left are
	// published too.
	if _, err := replicas.Settle(ctx, f.DB, f.Storage, f.Config.Storage, within); err != nil {
		f.explainUnsettled(t)
		t.Fatal(err)
	}
	if bad := l.CheckWrites(ctx, false); len(bad) > 0 {
		t.Errorf("accepted writes lost (%d): %v", len(bad), bad)
	}
	if err := l.PublishDrafts(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := replicas.Settle(ctx, f.DB, f.Storage, f.Config.Storage, within)
	if err != nil {
		f.explainUnsettled(t)
		t.Fatal(err)
	}
	if bad := l.CheckWrites(ctx, true); len(bad) > 0 {
		t.Errorf("accepted writes not live after publishing every draft (%d): %v", len(bad), bad)
	}
	uploads, revisions := l.Accepted()
	if bad := replicas.Check(ctx, f.DB, f.Storage, f.Config.Storage, uploads, revisions); len(bad) > 0 {
		t.Errorf("%d invariants broken: %v", len(bad), bad)
	}
	if scheduled := l.Scheduled(); len(scheduled) == 0 {
		t.Error("the load scheduled no revision: the scheduled publishes were not exercised")
	}
	bad, fig := replicas.CheckWebhook(ctx, f.DB, f.http, f.URL, l.Token, l.Hook)
	if len(bad) > 0 {
		t.Errorf("%d webhook invariants broken: %v", len(bad), bad)
	}
	t.Logf("settled in %.1fs: %s; %d revisions scheduled; webhook: %s", time.Since(began).Seconds(), c, len(l.Scheduled()), fig)
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

// assertOutageAnswers fails on any 5xx other than 503, and on a 503
// without Retry-After; it returns how many 503s there were.
func assertOutageAnswers(t *testing.T, l *replicas.Load, what string) int {
	t.Helper()
	stats, _ := l.Stats()
	unavailable, other, noRetry := replicas.Status5xx(stats)
	if other > 0 {
		t.Errorf("%s: %d answers were 5xx other than 503; clients must be told to retry (503 with Retry-After), not that the server broke", what, other)
	}
	if noRetry > 0 {
		t.Errorf("%s: %d 503s had no Retry-After", what, noRetry)
	}
	return unavailable
}

func TestPostgresRestartUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test: restarts a private PostgreSQL cluster")
	}
	t.Parallel()
	pg, db := privatePostgres(t)
	f := newFixture(t, setup{apis: 2, workers: 2, db: db, env: []string{"PRESSROOM_SITE_UPLOAD_LIMIT=6"}})
	stop := f.runLoad(t, 15)
	began := time.Now()
	ctx := context.Background()
	time.Sleep(4 * time.Second)
	if err := pg.Stop(ctx, "fast"); err != nil {
		t.Fatal(err)
	}
	t.Logf("PostgreSQL stopped at %.1fs", time.Since(began).Seconds())
	// The API must stay up and say so: /healthz answers, /readyz is 503.
	time.Sleep(2 * time.Second)
	for _, a := range f.APIs {
		if r := f.send(a.URL, "", http.MethodGet, "/healthz", nil); r.Status != 200 {
			t.Errorf("%s /healthz while the database is down = %s", a.Name, r)
		}
		if r := f.send(a.URL, "", http.MethodGet, "/readyz", nil); r.Status != 503 {
			t.Errorf("%s /readyz while the database is down = %s, want 503 (a load balancer takes it out)", a.Name, r)
		}
		r := f.form(a.URL, "/oauth/token", url.Values{"grant_type": {"password"}, "username": {"second@demo.test"}, "password": {password}})
		if r.Status != 503 || r.Header.Get("Retry-After") == "" {
			t.Errorf("%s sign-in while the database is down = %s (Retry-After %q), want 503 with Retry-After", a.Name, r, r.Header.Get("Retry-After"))
		}
	}
	time.Sleep(6 * time.Second)
	if err := pg.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("PostgreSQL started again at %.1fs", time.Since(began).Seconds())
	time.Sleep(8 * time.Second)
	l := stop()
	logLoad(t, l, time.Since(began))
	if n := assertOutageAnswers(t, l, "during the PostgreSQL restart"); n == 0 {
		t.Error("no request got 503 during an 8 s database outage: the load did not reach the outage")
	}
	f.settleAndCheck(t, l, 3*time.Minute)
}

func TestTemporalRestartUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test: restarts a private Temporal dev server")
	}
	t.Parallel()
	tmp := testsupport.StartPrivateTemporal(t)
	f := newFixture(t, setup{apis: 2, workers: 2, temporal: tmp.Address, env: []string{"PRESSROOM_SITE_UPLOAD_LIMIT=6"}})
	stop := f.runLoad(t, 15)
	began := time.Now()
	time.Sleep(4 * time.Second)
	tmp.Stop(t)
	t.Logf("Temporal stopped at %.1fs", time.Since(began).Seconds())
	time.Sleep(8 * time.Second)
	tmp.Start(t)
	t.Logf("Temporal started again at %.1fs", time.Since(began).Seconds())
	time.Sleep(8 * time.Second)
	l := stop()
	logLoad(t, l, time.Since(began))
	assertOutageAnswers(t, l, "during the Temporal restart")
	stats, _ := l.Stats()
	for _, op := range []string{replicas.OpReadLive, replicas.OpReadDraft, replicas.OpWrite} {
		for code, n := range stats[op].Statuses {
			// An edit of a draft held by a revision that waits for Temporal
			// is refused as the contract says (409 draft_in_flight).
			if code != 200 && (op != replicas.OpWrite || code != 409) {
				t.Errorf("%s: %d answers %d while Temporal restarted; reads and edits do not need Temporal", op, n, code)
			}
		}
	}
	f.settleAndCheck(t, l, 3*time.Minute)
}

func TestMinIODownUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test: stops a private MinIO for 30 s")
	}
	t.Parallel()
	m := testsupport.StartPrivateMinIO(t, "replicas-test")
	st := m.Storage
	f := newFixture(t, setup{apis: 2, workers: 2, storage: &st, storageClient: m.Client, env: []string{"PRESSROOM_SITE_UPLOAD_LIMIT=6"}})
	ctx := context.Background()
	stop := f.runLoad(t, 15)
	began := time.Now()
	time.Sleep(3 * time.Second)
	// A photo whose ingestion is under way when storage goes.
	tok := f.token(t, f.URL, "second@demo.test")
	up, err := replicas.Upload(ctx, f.http, f.URL, tok, "photo.jpg", "image/jpeg", photoJPEG(t, 3000, 2000))
	if err != nil || up.Status != 202 {
		t.Fatalf("upload of the photo = %s %v", up, err)
	}
	photo := resourceOf(t, up).ID
	f.awaitIngest(t, workflows.AssetUploadID(photo))
	m.Stop(t)
	stoppedAt := time.Since(began)
	t.Logf("MinIO stopped at %.1fs", stoppedAt.Seconds())
	time.Sleep(30 * time.Second)
	m.Start(t)
	t.Logf("MinIO started again at %.1fs", time.Since(began).Seconds())
	time.Sleep(5 * time.Second)
	l := stop()
	logLoad(t, l, time.Since(began))
	assertOutageAnswers(t, l, "during the MinIO outage")
	stats, _ := l.Stats()
	for _, op := range []string{replicas.OpReadLive, replicas.OpReadDraft} {
		for code, n := range stats[op].Statuses {
			if code != 200 {
				t.Errorf("%s: %d answers %d while storage was down; live reads do not need storage", op, n, code)
			}
		}
	}
	f.settleAndCheck(t, l, 3*time.Minute)
	if r := resourceOf(t, f.send(f.URL, tok, http.MethodGet, "/asset-uploads/"+photo, nil)); r.Attributes["status"] != "finished" {
		t.Errorf("the photo whose ingestion storage's outage interrupted = %v, want finished", r.Attributes)
	}
}

// explainUnsettled logs, for every upload still processing or whose
// temporary object is still there, its row and its workflow as the
// Temporal UI shows it.
func (f *fixture) explainUnsettled(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	tmp, err := replicas.Objects(ctx, f.Storage, f.Config.Storage.UploadsBucket)
	if err != nil {
		t.Log(err)
		return
	}
	var rows []struct {
		ID, Status, Key string
		UpdatedAt       time.Time
	}
	q := f.DB.NewRaw("SELECT id::text AS id, status, key, updated_at FROM asset_uploads WHERE status = 'processing' OR key IN (?)", bun.In(append(tmp, "")))
	if err := q.Scan(ctx, &rows); err != nil {
		t.Log(err)
		return
	}
	for _, r := range rows {
		wfID := workflows.AssetUploadID(r.ID)
		d, err := f.Temporal.DescribeWorkflowExecution(ctx, wfID, "")
		if err != nil {
			t.Logf("upload %s %s (updated %s), key %s: describe %s: %v", r.ID, r.Status, r.UpdatedAt.Format(time.RFC3339Nano), r.Key, wfID, err)
			continue
		}
		info := d.GetWorkflowExecutionInfo()
		t.Logf("upload %s %s (updated %s), key %s: workflow %s, closed %v", r.ID, r.Status, r.UpdatedAt.Format(time.RFC3339Nano), r.Key,
			info.GetStatus(), info.GetCloseTime().AsTime().Format(time.RFC3339Nano))
		for _, pa := range d.GetPendingActivities() {
			t.Logf("  pending %s attempt %d: %s", pa.GetActivityType().GetName(), pa.GetAttempt(), pa.GetLastFailure().GetMessage())
		}
		if pw := d.GetPendingWorkflowTask(); pw != nil {
			t.Logf("  pending workflow task, attempt %d", pw.GetAttempt())
		}
		it := f.Temporal.GetWorkflowHistory(ctx, wfID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				break
			}
			line := fmt.Sprintf("  %s %s", ev.GetEventTime().AsTime().Format("15:04:05.000"), ev.GetEventType())
			if m := ev.GetMarkerRecordedEventAttributes(); m != nil {
				line += fmt.Sprintf(" %.200s failure=%v", m.GetDetails()["data"].GetPayloads(), m.GetFailure().GetMessage())
			}
			t.Log(line)
		}
	}
}
