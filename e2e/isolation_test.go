package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/minio/minio-go/v7"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/pressroom/pressroom/api"
	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
	"github.com/pressroom/pressroom/workflows"
)

// original reads the stored original of a finished upload and its recorded
// fingerprint and size.
func (s *system) original(t *testing.T, token string, up resource) (stored []byte, contentType, fingerprint string, size int64) {
	t.Helper()
	img := s.call(t, token, http.MethodGet, "/asset-uploads/"+up.ID+"/asset-file", nil)
	if img.Status != 200 {
		t.Fatalf("asset-file = %d %s", img.Status, img.Raw)
	}
	var assetRef struct{ ID string }
	_ = json.Unmarshal(up.Relationships["asset"].Data, &assetRef)
	a := img.resource(t).Attributes
	fingerprint, _ = a["fingerprint"].(string)
	fs, _ := a["file-size"].(float64)
	key := s.Site.ID.String() + "/" + assetRef.ID + "/original.png"
	obj, err := s.Storage.GetObject(context.Background(), s.Config.Storage.AssetsBucket, key, minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	info, err := obj.Stat()
	if err != nil {
		t.Fatalf("stored original %s: %v", key, err)
	}
	stored, err = io.ReadAll(obj)
	if err != nil {
		t.Fatal(err)
	}
	return stored, info.ContentType, fingerprint, int64(fs)
}

// A client re-posting other bytes to its key, while the upload is processed
// or after it finished, never gets them into an asset: the stored original
// is the checked file, its SHA-256 is the recorded fingerprint, and a second
// notice for the spent signature is refused.
func TestReuploadToANoticedKeyNeverReachesAnAsset(t *testing.T) {
	t.Parallel()
	s := start(t)
	token := s.token(t, "editor@demo.test")
	html := []byte("<!doctype html><html><body><script>document.cookie</script></body></html>")
	file := pngFile(t, 1200, 900)
	check := func(t *testing.T, up resource) {
		t.Helper()
		stored, ct, fp, size := s.original(t, token, up)
		sum := sha256.Sum256(stored)
		if !bytes.Equal(stored, file) || hex.EncodeToString(sum[:]) != fp || size != int64(len(stored)) || ct != "image/png" {
			t.Fatalf("stored original: %d bytes %.16q as %s, sha %x; recorded fingerprint %s, size %d", len(stored), stored, ct, sum, fp, size)
		}
	}

	t.Run("during processing", func(t *testing.T) {
		sig := s.signature(t, token, "race.png", "image/png")
		if st, b := s.browserUpload(t, sig, file); st >= 300 {
			t.Fatalf("storage upload = %d %s", st, b)
		}
		d := s.notify(t, token, sig, "race.png", len(file))
		if d.Status != 202 {
			t.Fatalf("notify = %d %s", d.Status, d.Raw)
		}
		// The same signature still lets the browser write: it does, at once.
		if st, b := s.browserUpload(t, sig, html); st >= 300 {
			t.Fatalf("storage re-upload = %d %s", st, b)
		}
		up := s.await(t, token, d.resource(t).ID, time.Minute)
		switch up.Attributes["status"] {
		case "finished":
			check(t, up) // processed before the re-upload: the checked bytes
		case "error":
			if msg, _ := up.Attributes["error-message"].(string); !strings.Contains(msg, "changed after the upload notice") {
				t.Fatalf("upload = %v", up.Attributes)
			}
		default:
			t.Fatalf("upload = %v", up.Attributes)
		}
	})

	t.Run("after it finished", func(t *testing.T) {
		sig := s.signature(t, token, "done.png", "image/png")
		if st, b := s.browserUpload(t, sig, file); st >= 300 {
			t.Fatalf("storage upload = %d %s", st, b)
		}
		d := s.notify(t, token, sig, "done.png", len(file))
		up := s.await(t, token, d.resource(t).ID, time.Minute)
		if up.Attributes["status"] != "finished" {
			t.Fatalf("upload = %v", up.Attributes)
		}
		if err := s.Temporal.GetWorkflow(context.Background(), workflows.AssetUploadID(up.ID), "").Get(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		if st, b := s.browserUpload(t, sig, html); st >= 300 {
			t.Fatalf("storage re-upload = %d %s", st, b)
		}
		if d := s.notify(t, token, sig, "done.png", len(html)); d.Status != 409 {
			t.Fatalf("a second notice for a spent signature = %d %s", d.Status, d.Raw)
		}
		check(t, up)
	})
}

// A notice for a key with no file is refused at once: nothing waits for a
// file that may never come.
func TestNoticeWithoutAFileIsRefused(t *testing.T) {
	t.Parallel()
	s := start(t)
	token := s.token(t, "editor@demo.test")
	sig := s.signature(t, token, "ghost.png", "image/png")
	d := s.notify(t, token, sig, "ghost.png", 100)
	if d.Status != 422 || len(d.Errors) != 1 || d.Errors[0].Code != "file_missing" || d.Errors[0].Source.Pointer != "/data/attributes/key" {
		t.Fatalf("notice without a file = %d %s", d.Status, d.Raw)
	}
}

// An editor flooding ingestion (notices without files, large images) does
// not delay another site's publishing, nor stop its uploads.
func TestImageFloodDoesNotDelayPublishing(t *testing.T) {
	t.Parallel()
	// Files are waited for as long as in production.
	s := start(t, func(c *config.Config) { c.UploadWait = time.Minute })
	demo := s.editor(t, "editor@demo.test")
	other := s.token(t, "editor@other.test")

	// Site B: five notices without a file, then four large images: all
	// accepted, SiteUploadLimit of them processing at once, the others
	// waiting their turn.
	for i := 0; i < 5; i++ {
		name := "missing-" + string(rune('a'+i)) + ".png"
		sig := s.signature(t, other, name, "image/png")
		if d := s.notify(t, other, sig, name, 1000); d.Status != 422 {
			t.Errorf("notice without a file = %d, want 422", d.Status) // go on: measure what it costs
		}
	}
	big := photoJPEG(t, 6000, 4000)
	for i := 0; i < 4; i++ {
		name := "big-" + string(rune('a'+i)) + ".jpg"
		sig := s.signature(t, other, name, "image/jpeg")
		if st, b := s.browserUpload(t, sig, big); st >= 300 {
			t.Fatalf("storage upload = %d %s", st, b)
		}
		if d := s.notify(t, other, sig, name, len(big)); d.Status != 202 {
			t.Fatalf("notice = %d %s", d.Status, d.Raw)
		}
	}

	// Site A publishes meanwhile, and uploads.
	var wg sync.WaitGroup
	var upload resource
	wg.Add(1)
	go func() {
		defer wg.Done()
		upload = s.ingest(t, demo.token, "while-flooded.png", "image/png", pngFile(t, 64, 48))
	}()
	const rounds = 10
	var took []time.Duration
	for i := 0; i < rounds; i++ {
		_, draft := demo.page("Page "+string(rune('A'+i)), "page-"+string(rune('a'+i)), "")
		began := time.Now()
		d := demo.publish(draft)
		took = append(took, time.Since(began))
		if d.Status != 201 {
			t.Fatalf("POST /revisions while site B floods = %d after %s: %s", d.Status, took[i], d.Raw)
		}
	}
	wg.Wait()
	if upload.Attributes["status"] != "finished" {
		t.Fatalf("site A's upload while site B floods = %v", upload.Attributes)
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	p95 := took[(len(took)*95+99)/100-1]
	t.Logf("site A publishes while site B floods: median %s, p95 %s", took[len(took)/2], p95)
	// Measured: p95 1.3 s on a busy 2-core machine (median 0.2 s). 5 s leaves
	// room for a busier one and stays below PRESSROOM_PUBLISH_WAIT (10 s):
	// with one shared queue, the same flood turned the first publish into a
	// 202 after 10 s, and its publication took about a minute.
	if p95 > 5*time.Second {
		t.Errorf("p95 of site A's POST /revisions = %s, want at most 5s", p95)
	}
}

// A revision whose API dies before its commit leaves nothing behind: the
// revision rolls back with its reservations, and no workflow exists (it is
// started after the commit only), so the drafts publish at once. A slow
// commit: until the revision committed, its workflow does not exist, so it
// can never read the revision uncommitted.
func TestCrashBeforeTheRevisionCommits(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var crashed []string
	var slow string
	var beforeCommit error // what Temporal said of the slow revision's workflow before its commit
	var s *system
	s = startWithFaults(t, api.Faults{BeforeCommit: func(typ, id string) error {
		if typ != "revisions" {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case len(crashed) == 0:
			crashed = append(crashed, id)
			return errors.New("simulated crash before the commit")
		case slow == "":
			slow = id
			time.Sleep(2 * time.Second)
			_, beforeCommit = s.Temporal.DescribeWorkflowExecution(context.Background(), workflows.PublishRevisionID(id), "")
		}
		return nil
	}})
	e := s.editor(t, "editor@demo.test")
	_, draft := e.page("Crash", "crash", "")
	if d := e.publish(draft); d.Status != 500 {
		t.Fatalf("POST /revisions with the crash = %d %s", d.Status, d.Raw)
	}
	mu.Lock()
	id := crashed[0]
	mu.Unlock()
	var notFound *serviceerror.NotFound
	if _, err := s.Temporal.DescribeWorkflowExecution(context.Background(), workflows.PublishRevisionID(id), ""); !errors.As(err, &notFound) {
		t.Fatalf("workflow of the rolled-back revision: %v; want none (not found)", err)
	}
	if st := e.status("/revisions/" + id); st != 404 {
		t.Fatalf("GET the rolled-back revision = %d", st)
	}
	// The drafts are free: the slow commit is published once it commits.
	rev := e.mustPublish(draft)
	if rev.Attributes["status"] != "published" || rev.ID != slow {
		t.Fatalf("revision after the crash = %v (%s, slow %s)", rev.Attributes, rev.ID, slow)
	}
	if !errors.As(beforeCommit, &notFound) {
		t.Fatalf("before the slow revision committed, Temporal described its workflow (%v); want not found: started after the commit only", beforeCommit)
	}
}

// An API that dies between the commit and the start leaves committed work
// without its workflow: the worker's commit sweep starts it (within
// StartGrace and its half-minute period), and the upload is processed and
// the revision published as if nothing had happened.
func TestCrashAfterTheCommitIsRecoveredByTheCommitSweep(t *testing.T) {
	t.Parallel()
	crash := errors.New("simulated crash after the commit")
	s := startWithFaults(t, api.Faults{AfterCommit: func(typ, id string) error { return crash }})
	ctx := context.Background()
	token := s.token(t, "editor@demo.test")
	e := s.editor(t, "editor@demo.test")
	var notFound *serviceerror.NotFound

	sig := s.signature(t, token, "crash.png", "image/png")
	file := pngFile(t, 64, 48)
	if st, b := s.browserUpload(t, sig, file); st >= 300 {
		t.Fatalf("storage upload = %d %s", st, b)
	}
	if d := s.notify(t, token, sig, "crash.png", len(file)); d.Status != 500 {
		t.Fatalf("POST /asset-uploads with the crash = %d %s", d.Status, d.Raw)
	}
	var up models.AssetUpload
	if err := s.DB.NewSelect().Model(&up).Where("key = ?", sig.Attributes["key"]).Scan(ctx); err != nil {
		t.Fatalf("the upload notice did not commit: %v", err)
	}
	_, draft := e.page("After the crash", "after-the-crash", "")
	if d := e.publish(draft); d.Status != 500 {
		t.Fatalf("POST /revisions with the crash = %d %s", d.Status, d.Raw)
	}
	var rev drafts.Revision
	if err := s.DB.NewSelect().Model(&rev).Where("? = ANY (draft_ids)", uuid.MustParse(draft)).Scan(ctx); err != nil {
		t.Fatalf("the revision did not commit: %v", err)
	}
	for _, id := range []string{workflows.AssetUploadID(up.ID.String()), workflows.PublishRevisionID(rev.ID.String())} {
		if _, err := s.Temporal.DescribeWorkflowExecution(ctx, id, ""); !errors.As(err, &notFound) {
			t.Fatalf("%s right after the crash: %v; want not started", id, err)
		}
	}

	// The sweep runs every 30 s and takes rows committed 10 s ago.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		u := s.call(t, token, http.MethodGet, "/asset-uploads/"+up.ID.String()+"?wait=5s", nil).resource(t)
		r := s.call(t, token, http.MethodGet, "/revisions/"+rev.ID.String(), nil).resource(t)
		if u.Attributes["status"] == "finished" && r.Attributes["status"] == "published" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("2 minutes after the crash: upload %v, revision %v; want finished and published (the commit sweep starts them)", u.Attributes, r.Attributes)
		}
		time.Sleep(time.Second)
	}
	for _, q := range []string{"SELECT started_at IS NOT NULL FROM asset_uploads WHERE id = ?", "SELECT started_at IS NOT NULL FROM revisions WHERE id = ?"} {
		var started bool
		id := up.ID
		if strings.Contains(q, "revisions") {
			id = rev.ID
		}
		if err := s.DB.NewRaw(q, id).Scan(ctx, &started); err != nil || !started {
			t.Errorf("%s: started %v, %v; want marked started by the sweep", q, started, err)
		}
	}
}

// Publish workflows keep the queue they were started on: one started on the
// ingestion queue, as every publish was before the publishing queue
// existed, still finishes; new ones run on the publishing queue.
func TestPublishWorkflowsOnBothQueues(t *testing.T) {
	t.Parallel()
	s := start(t)
	ctx := context.Background()
	e := s.editor(t, "editor@demo.test")
	_, draft := e.page("Old queue", "old-queue", "")
	// A revision committed the way the API did before, then its workflow
	// started on the old queue.
	id := uuid.New()
	draftID := uuid.MustParse(draft)
	rev := &drafts.Revision{SiteRecord: models.SiteRecordOf(id, s.Site.ID, time.Now().UTC()), Comments: "old", Status: drafts.Publishing,
		DraftIDs: []uuid.UUID{draftID}}
	if _, err := s.DB.NewInsert().Model(rev).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB.NewUpdate().Model((*drafts.Draft)(nil)).Set("revision_id = ?", id).Where("id = ?", draftID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	run, err := s.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.PublishRevisionID(id.String()), TaskQueue: s.Config.TaskQueue},
		workflows.PublishRevision, id.String())
	if err != nil {
		t.Fatal(err)
	}
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var res workflows.PublishResult
	if err := run.Get(wait, &res); err != nil || res.Status != drafts.Published {
		t.Fatalf("publish on the ingestion queue = %+v, %v", res, err)
	}
	// A new revision's workflow is on the publishing queue.
	_, d2 := e.page("New queue", "new-queue", "")
	r := e.mustPublish(d2)
	desc, err := s.Temporal.DescribeWorkflowExecution(ctx, workflows.PublishRevisionID(r.ID), "")
	if err != nil {
		t.Fatal(err)
	}
	if q := desc.GetExecutionConfig().GetTaskQueue().GetName(); q != s.Config.PublishTaskQueue {
		t.Fatalf("new publish ran on %q, want %q", q, s.Config.PublishTaskQueue)
	}
}
