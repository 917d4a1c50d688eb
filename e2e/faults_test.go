package e2e

// Fault tests: the ingestion of an upload survives its worker being killed
// mid-processing and storage going away for a while (DESIGN.md §5:
// "Transient failures ... retry with backoff until they succeed"). Both
// run against the real stack; the first runs the worker as the real
// `pressroom worker` binary so it can be SIGKILLed, the second gives the
// test a MinIO of its own so it can be stopped without harming other tests.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/dev"
	"github.com/pressroom/pressroom/storage"
	"github.com/pressroom/pressroom/testsupport"
	"github.com/pressroom/pressroom/workflows"
)

func TestWorkerKilledMidProcessing(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test: kills a worker process and waits for Temporal's heartbeat timeout")
	}
	t.Parallel()
	began := time.Now()
	build := testsupport.BuildPressroom(t) // in the background, while the system starts
	s := startWithoutWorker(t)
	token := s.token(t, "editor@demo.test")
	// 24 megapixels: decoding and encoding eight variants takes seconds on
	// one libvips thread, which leaves time to kill the worker inside Process.
	file := photoJPEG(t, 6000, 4000)
	tmp := t.TempDir() // the workers' TMPDIR: Process downloads into it
	bin := build()
	first := s.startWorkerProcess(t, bin, tmp, "worker-1")

	sig := s.signature(t, token, "big photo.jpg", "image/jpeg")
	if st, b := s.browserUpload(t, sig, file); st >= 300 {
		t.Fatalf("storage upload = %d %s", st, b)
	}
	d := s.notify(t, token, sig, "big photo.jpg", len(file))
	if d.Status != 202 {
		t.Fatalf("POST /asset-uploads = %d %s", d.Status, d.Raw)
	}
	id := d.resource(t).ID
	wfID := workflows.AssetUploadID(id)

	// Kill the worker once Ingest (Inspect then Process in one activity)
	// has started and reported (by heartbeat) that it is decoding: the
	// download is done and the pixels are being worked on.
	pa := s.awaitPendingActivity(t, wfID, time.Minute, func(pa *workflowpb.PendingActivityInfo) bool {
		return pa.GetActivityType().GetName() == "Ingest" && pa.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED &&
			len(pa.GetHeartbeatDetails().GetPayloads()) > 0
	})
	first.Kill()
	killedAt := time.Now()
	t.Logf("killed worker-1 (pid %d) %.1fs into the test, during Ingest attempt %d", first.Pid(), killedAt.Sub(began).Seconds(), pa.GetAttempt())
	if !s.activityPending(t, wfID, "Ingest") {
		t.Fatal("Ingest was no longer pending right after the kill: the worker finished it first, so this test proved nothing; use a larger fixture")
	}
	if d := s.call(t, token, http.MethodGet, "/asset-uploads/"+id, nil); d.Status != 200 || d.resource(t).Attributes["status"] != "processing" {
		t.Fatalf("GET after the kill = %d %s", d.Status, d.Raw)
	}
	leftovers, _ := filepath.Glob(filepath.Join(tmp, "pressroom-upload-*"))

	s.startWorkerProcess(t, bin, tmp, "worker-2")
	up := s.await(t, token, id, 2*time.Minute)
	t.Logf("upload %s after the kill: %.1fs (Process's heartbeat timeout is 30s)", up.Attributes["status"], time.Since(killedAt).Seconds())
	if up.Attributes["status"] != "finished" || up.Attributes["error-message"] != nil {
		t.Fatalf("upload after the worker was killed = %v", up.Attributes)
	}

	// "finished" is set by Record; the temporary object is deleted after it.
	s.awaitWorkflow(t, wfID, time.Minute)

	// Exactly once: one asset, one image, nine objects, nothing temporary.
	var assetRef struct{ Type, ID string }
	_ = json.Unmarshal(up.Relationships["asset"].Data, &assetRef)
	ctx := context.Background()
	for _, table := range []string{"assets", "asset_images"} {
		n, err := s.DB.NewSelect().Table(table).Where("site_id = ?", s.Site.ID).Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("%s holds %d rows for the site, want 1", table, n)
		}
	}
	prefix := s.Site.ID.String() + "/" + assetRef.ID + "/"
	all := s.objects(t, s.Config.Storage.AssetsBucket, "")
	under := s.objects(t, s.Config.Storage.AssetsBucket, prefix)
	if len(under) != 9 || len(all) != 9 {
		t.Errorf("assets bucket holds %d objects, %d under %s; want exactly 9 there (original + 8 variants): %v", len(all), len(under), prefix, all)
	}
	if left := s.objects(t, s.Config.Storage.UploadsBucket, ""); len(left) != 0 {
		t.Errorf("temporary objects left: %v", left)
	}

	// The history shows one Ingest that completed on a later attempt, and
	// one Record (a local activity: its marker).
	h := s.activityHistory(t, wfID)
	if p := h["Ingest"]; p == nil || p.scheduled != 1 || p.completed != 1 || p.lastAttempt < 2 {
		t.Errorf("Ingest in history: %+v, want scheduled once, completed once, on attempt ≥ 2", p)
	}
	if r := h["Record"]; r == nil || r.scheduled != 1 || r.completed != 1 {
		t.Errorf("Record in history: %+v, want once", r)
	}
	if len(leftovers) > 0 {
		// Not a failure: the killed process could not run its deferred
		// os.Remove. Operators should put TMPDIR on storage that is cleaned.
		t.Logf("the killed worker left %d temporary download(s) in TMPDIR", len(leftovers))
	}
}

func TestMinIOOutageDuringProcessing(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test: stops storage for 20 seconds")
	}
	t.Parallel()
	m := testsupport.StartPrivateMinIO(t, "fault-test")
	s := startOnStorage(t, m.Storage)
	token := s.token(t, "editor@demo.test")
	file := photoJPEG(t, 4000, 3000)

	sig := s.signature(t, token, "photo.jpg", "image/jpeg")
	if st, b := s.browserUpload(t, sig, file); st >= 300 {
		t.Fatalf("storage upload = %d %s", st, b)
	}
	d := s.notify(t, token, sig, "photo.jpg", len(file))
	if d.Status != 202 || d.resource(t).Attributes["status"] != "processing" {
		t.Fatalf("POST /asset-uploads = %d %s", d.Status, d.Raw)
	}
	id := d.resource(t).ID
	wfID := workflows.AssetUploadID(id)
	m.Stop(t)
	stoppedAt := time.Now()

	// During the outage the API still answers and the operator sees the
	// failing activity being retried, with its last error.
	var seen *workflowpb.PendingActivityInfo
	polls := 0
	for time.Since(stoppedAt) < 20*time.Second {
		d := s.call(t, token, http.MethodGet, "/asset-uploads/"+id, nil)
		if d.Status != 200 || d.resource(t).Attributes["status"] != "processing" {
			t.Fatalf("GET /asset-uploads/%s during the outage = %d %s", id, d.Status, d.Raw)
		}
		polls++
		if seen == nil {
			for _, pa := range s.describe(t, wfID).GetPendingActivities() {
				if pa.GetAttempt() > 1 && pa.GetLastFailure() != nil {
					seen = pa
				}
			}
		}
		time.Sleep(time.Second)
	}
	m.Start(t)
	restartedAt := time.Now()
	if seen == nil {
		t.Errorf("in %d polls over the 20 s outage, DescribeWorkflowExecution never showed a pending activity with attempt > 1 and a last failure", polls)
	} else {
		t.Logf("during the outage: %s pending, attempt %d, last failure %q", seen.GetActivityType().GetName(), seen.GetAttempt(), seen.GetLastFailure().GetMessage())
	}

	up := s.await(t, token, id, 2*time.Minute)
	t.Logf("upload %s %.1fs after storage came back", up.Attributes["status"], time.Since(restartedAt).Seconds())
	if up.Attributes["status"] != "finished" || up.Attributes["error-message"] != nil {
		t.Fatalf("upload after the storage outage = %v", up.Attributes)
	}
	s.awaitWorkflow(t, wfID, time.Minute)
	if got := s.objects(t, s.Config.Storage.AssetsBucket, ""); len(got) != 9 {
		t.Errorf("assets bucket holds %d objects, want 9: %v", len(got), got)
	}
	if left := s.objects(t, s.Config.Storage.UploadsBucket, ""); len(left) != 0 {
		t.Errorf("temporary objects left: %v", left)
	}
}

// TestFaultSlowCommitOfUploadNotice: POST /asset-uploads inserts the upload
// row and starts the ingestion workflow inside one transaction
// (api/uploads.go createUpload → startIngestion), so the worker can run
// before that transaction commits. A commit that takes a moment (a busy
// database, a CPU-starved API process: this is how TestRejectedUploadsEndInError
// and TestUploadFormats/decompression_bomb were seen stuck "processing"
// under the full e2e run) is simulated here with a deferred constraint
// trigger on asset_uploads that sleeps 2 s at commit, in this test's own
// database. Whatever the commit's speed, an upload must end "finished" or
// "error".
func TestFaultSlowCommitOfUploadNotice(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test")
	}
	t.Parallel()
	s := start(t)
	ctx := context.Background()
	for _, q := range []string{
		`CREATE FUNCTION e2e_slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(2); RETURN NULL; END $$`,
		`CREATE CONSTRAINT TRIGGER e2e_slow_commit AFTER INSERT ON asset_uploads DEFERRABLE INITIALLY DEFERRED
		 FOR EACH ROW EXECUTE FUNCTION e2e_slow_commit()`,
	} {
		if _, err := s.DB.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	token := s.token(t, "editor@demo.test")
	cases := []struct {
		name, filename string
		file           []byte
		status, msg    string
	}{
		{"rejected", "notes.png", []byte("this is plain text, not an image at all"), "error", "the file is not a PNG image"},
		{"good", "small.png", pngFile(t, 64, 48), "finished", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sig := s.signature(t, token, tc.filename, "image/png")
			if st, b := s.browserUpload(t, sig, tc.file); st >= 300 {
				t.Fatalf("storage upload = %d %s", st, b)
			}
			d := s.notify(t, token, sig, tc.filename, len(tc.file))
			if d.Status != 202 {
				t.Fatalf("POST /asset-uploads = %d %s", d.Status, d.Raw)
			}
			id := d.resource(t).ID
			wfID := workflows.AssetUploadID(id)
			// Wait for the workflow to close, then give the status a moment.
			wctx, cancel := context.WithTimeout(ctx, time.Minute)
			wfErr := s.Temporal.GetWorkflow(wctx, wfID, "").Get(wctx, nil)
			cancel()
			time.Sleep(time.Second)
			up := s.call(t, token, http.MethodGet, "/asset-uploads/"+id, nil).resource(t)
			msg, _ := up.Attributes["error-message"].(string)
			if up.Attributes["status"] == "processing" {
				t.Fatalf("BUG (api/uploads.go createUpload starts the workflow before its transaction commits): "+
					"the ingestion workflow has ended (%v) but the upload is stuck in \"processing\" for good. "+
					"The worker ran before the upload row was committed: Fail's UPDATE ... WHERE id = ? AND status = 'processing' "+
					"(activities/uploads.go) matched no row and returned nil, and Record's SELECT ... FOR UPDATE finds no row and "+
					"rejects with \"the upload record is gone\". Expected %s %q. Start the workflow after the commit (and mark the "+
					"upload error if that fails), or make Record and Fail treat a missing row as retryable and Fail check rows affected.",
					orOK(wfErr), tc.status, tc.msg)
			}
			if up.Attributes["status"] != tc.status || !strings.Contains(msg, tc.msg) {
				t.Fatalf("upload = %v, want %s %q", up.Attributes, tc.status, tc.msg)
			}
		})
	}
}

func orOK(err error) string {
	if err == nil {
		return "completed"
	}
	return "failed: " + err.Error()
}

// startWithoutWorker is start without the in-process worker: the test runs
// its own (as child processes). Stopping it before any upload is safe.
func startWithoutWorker(t *testing.T, opts ...option) *system {
	t.Helper()
	s := start(t, opts...)
	s.stopWkr()
	return s
}

// startOnStorage is start with the buckets on st (a MinIO of the test's
// own) instead of the shared MinIO.
func startOnStorage(t *testing.T, st config.Storage, opts ...option) *system {
	t.Helper()
	mc, err := storage.NewClient(st)
	if err != nil {
		t.Fatal(err)
	}
	return startOn(t, st, mc, opts...)
}

// startWorkerProcess runs `pressroom worker` on this system's task queue,
// database and buckets, with TMPDIR=tmp. Its output is logged if the test
// fails; it is stopped when the test ends.
func (s *system) startWorkerProcess(t *testing.T, bin, tmp, name string) *dev.Process {
	t.Helper()
	var out lockedBuffer
	p, err := dev.StartProcess(name, bin, []string{"worker"}, testsupport.WorkerEnv(s.Config, tmp), &out, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Stop(10 * time.Second)
		if t.Failed() && out.Len() > 0 {
			t.Logf("%s output:\n%s", name, out.String())
		}
	})
	return p
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Len()
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// describe is what the Temporal UI shows of the workflow: its pending
// activities, their attempts and last failures.
func (s *system) describe(t *testing.T, wfID string) *workflowservice.DescribeWorkflowExecutionResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := s.Temporal.DescribeWorkflowExecution(ctx, wfID, "")
	if err != nil {
		t.Fatalf("describe %s: %v", wfID, err)
	}
	return d
}

// awaitPendingActivity polls the workflow until one of its pending
// activities satisfies ok, and returns it. A workflow not started yet is
// waited for too: a webhook delivery's row commits with its event, and the
// dispatcher starts its workflow after the commit.
func (s *system) awaitPendingActivity(t *testing.T, wfID string, within time.Duration, ok func(*workflowpb.PendingActivityInfo) bool) *workflowpb.PendingActivityInfo {
	t.Helper()
	deadline := time.Now().Add(within)
	var last []string
	for time.Now().Before(deadline) {
		last = last[:0]
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		d, err := s.Temporal.DescribeWorkflowExecution(ctx, wfID, "")
		cancel()
		var notFound *serviceerror.NotFound
		switch {
		case errors.As(err, &notFound):
			last = append(last, "not started yet")
			time.Sleep(25 * time.Millisecond)
			continue
		case err != nil:
			t.Fatalf("describe %s: %v", wfID, err)
		}
		for _, pa := range d.GetPendingActivities() {
			if ok(pa) {
				return pa
			}
			last = append(last, fmt.Sprintf("%s %s attempt %d", pa.GetActivityType().GetName(), pa.GetState(), pa.GetAttempt()))
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("no pending activity of %s matched within %s; last seen: %v", wfID, within, last)
	return nil
}

// awaitWorkflow waits for the workflow to complete successfully: an upload
// is "finished" once Record commits, and its temporary object is deleted by
// the activity after that.
func (s *system) awaitWorkflow(t *testing.T, wfID string, within time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if err := s.Temporal.GetWorkflow(ctx, wfID, "").Get(ctx, nil); err != nil {
		t.Fatalf("workflow %s: %v", wfID, err)
	}
}

func (s *system) activityPending(t *testing.T, wfID, name string) bool {
	t.Helper()
	for _, pa := range s.describe(t, wfID).GetPendingActivities() {
		if pa.GetActivityType().GetName() == name {
			return true
		}
	}
	return false
}

type activityRuns struct{ scheduled, completed, lastAttempt int }

// activityHistory counts, per activity type, how often the workflow's
// history scheduled and completed it, and the attempt that last started.
func (s *system) activityHistory(t *testing.T, wfID string) map[string]*activityRuns {
	t.Helper()
	names := map[int64]string{}
	runs := map[string]*activityRuns{}
	get := func(name string) *activityRuns {
		if runs[name] == nil {
			runs[name] = &activityRuns{}
		}
		return runs[name]
	}
	it := s.Temporal.GetWorkflowHistory(context.Background(), wfID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			name := ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
			names[ev.GetEventId()] = name
			get(name).scheduled++
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			a := ev.GetActivityTaskStartedEventAttributes()
			get(names[a.GetScheduledEventId()]).lastAttempt = int(a.GetAttempt())
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			get(names[ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()]).completed++
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			// A local activity's result: one marker per execution (its
			// retries included), counted as scheduled and, without a
			// failure, completed.
			m := ev.GetMarkerRecordedEventAttributes()
			if m.GetMarkerName() != "LocalActivity" || len(m.GetDetails()["data"].GetPayloads()) == 0 {
				continue
			}
			var data struct {
				ActivityType string
				Attempt      int
			}
			if err := json.Unmarshal(m.GetDetails()["data"].GetPayloads()[0].GetData(), &data); err != nil {
				t.Fatalf("local activity marker: %v", err)
			}
			r := get(data.ActivityType)
			r.scheduled++
			r.lastAttempt = data.Attempt
			if m.GetFailure() == nil {
				r.completed++
			}
		}
	}
	return runs
}

// photoJPEG encodes a w×h photo-like JPEG: smooth gradients plus a little
// per-pixel noise, so it compresses (and decodes) like a photograph.
func photoJPEG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		row := img.Pix[y*img.Stride:]
		for x := 0; x < w; x++ {
			v := uint32(x)*0x9E3779B1 ^ uint32(y)*0x85EBCA77
			v ^= v >> 15
			v *= 0x2C1B3C6D
			v ^= v >> 12
			n := int(v%17) - 8
			row[4*x+0] = clampByte(60 + 150*y/h + 30*((x/97+y/61)%3) + n)
			row[4*x+1] = clampByte(100 + 90*x/w + n)
			row[4*x+2] = clampByte(210 - 140*y/h + 20*((x/53)%4) + n)
			row[4*x+3] = 255
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 88}); err != nil {
		t.Fatal(err)
	}
	if testing.Verbose() {
		t.Logf("fixture: %d×%d JPEG, %.1f MB", w, h, float64(b.Len())/1e6)
	}
	return b.Bytes()
}

func clampByte(v int) uint8 { return uint8(max(0, min(255, v))) }
