package activities

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"image"
	"image/png"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/pressroom/pressroom/activities/images"
	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/testsupport"
	"github.com/pressroom/pressroom/workflows"
)

func TestMain(m *testing.M) { os.Exit(testsupport.Main(m)) }

func testPNG(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 40, 30))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// processFixture puts a PNG at an upload key and returns the activities and
// the upload naming that exact version of the object.
func processFixture(t *testing.T) (*Uploads, workflows.Upload, []byte, config.Storage, *minio.Client) {
	t.Helper()
	st, mc := testsupport.NewBuckets(t)
	file := testPNG(t)
	u := workflows.Upload{UploadID: "9f1c0a5e-0000-4000-8000-000000000001", SiteID: "9f1c0a5e-0000-4000-8000-000000000002",
		AssetID: "9f1c0a5e-0000-4000-8000-000000000003", Key: "site/sig/photo.png", FileName: "photo.png",
		ContentType: "image/png", FileSize: int64(len(file))}
	info, err := mc.PutObject(context.Background(), st.UploadsBucket, u.Key, bytes.NewReader(file), int64(len(file)), minio.PutObjectOptions{ContentType: "image/png"})
	if err != nil {
		t.Fatal(err)
	}
	u.ETag = info.ETag
	a := &Uploads{Storage: mc, Buckets: st, AssetTypes: models.DefaultAssetTypes(), Limits: images.Limits{MaxPixels: 1 << 24}, WaitForObject: time.Second}
	return a, u, file, st, mc
}

func activityEnv(a *Uploads) *testsuite.TestActivityEnvironment {
	var s testsuite.WorkflowTestSuite
	e := s.NewTestActivityEnvironment()
	e.RegisterActivity(a)
	return e
}

// stubDecode replaces the decode step for one test.
func stubDecode(t *testing.T, fn func(string, images.Limits, func()) (images.Result, error)) {
	t.Helper()
	prev := processImage
	processImage = fn
	t.Cleanup(func() { processImage = prev })
}

// The upload key stays writable while the file is processed: bytes written
// there meanwhile must not become the stored original. What is stored is
// exactly what was checked, and its SHA-256 is the recorded fingerprint.
func TestProcessStoresTheCheckedBytes(t *testing.T) {
	a, u, file, st, mc := processFixture(t)
	html := []byte("<html><script>alert(1)</script></html>")
	stubDecode(t, func(path string, l images.Limits, hb func()) (images.Result, error) {
		// The client re-posts other bytes to the same key mid-processing.
		if _, err := mc.PutObject(context.Background(), st.UploadsBucket, u.Key, bytes.NewReader(html), int64(len(html)), minio.PutObjectOptions{}); err != nil {
			t.Error(err)
		}
		return images.Process(path, l, hb)
	})
	p := process(t, a, u)
	obj, err := mc.GetObject(context.Background(), st.AssetsBucket, p.OriginalKey, minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := io.ReadAll(obj)
	obj.Close()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(stored)
	if !bytes.Equal(stored, file) || hex.EncodeToString(sum[:]) != p.Fingerprint || int64(len(stored)) != p.OriginalSize {
		t.Fatalf("stored original is %d bytes (%.20q), sha %x; recorded fingerprint %s, size %d", len(stored), stored, sum, p.Fingerprint, p.OriginalSize)
	}
}

// The original and every variant are stored (several puts at once), each
// with the size, content type and caching Process records; a put that fails
// fails the attempt, to be retried, and is not a rejection.
func TestProcessStoresEveryObject(t *testing.T) {
	a, u, file, st, mc := processFixture(t)
	p := process(t, a, u)
	if len(p.Variants) != 2*len(images.Variants) {
		t.Fatalf("%d variants recorded, want %d", len(p.Variants), 2*len(images.Variants))
	}
	stat := func(key string) minio.ObjectInfo {
		t.Helper()
		info, err := mc.StatObject(context.Background(), st.AssetsBucket, key, minio.StatObjectOptions{})
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		return info
	}
	if info := stat(p.OriginalKey); info.Size != int64(len(file)) || info.ContentType != "image/png" {
		t.Errorf("original: %d bytes, %s", info.Size, info.ContentType)
	}
	for name, vr := range p.Variants {
		info := stat(vr.StorageKey)
		if info.Size != vr.Size || info.ContentType != vr.ContentType || info.Metadata.Get("Cache-Control") != "public, max-age=31536000, immutable" {
			t.Errorf("%s: stored %d bytes, %s, Cache-Control %q; recorded %d bytes, %s", name, info.Size, info.ContentType,
				info.Metadata.Get("Cache-Control"), vr.Size, vr.ContentType)
		}
	}

	a.Buckets.AssetsBucket = "pressroom-no-such-bucket"
	_, err := activityEnv(a).ExecuteActivity(a.Process, u)
	var app *temporal.ApplicationError
	if err == nil || !strings.Contains(err.Error(), "store ") || (asApp(err, &app) && app.Type() == workflows.RejectedType) {
		t.Errorf("Process with a missing bucket = %v, want a retryable storage error", err)
	}
}

// A file replaced after the notice (another version than the one noticed)
// is refused: neither inspected nor processed.
func TestReplacedFileIsRefused(t *testing.T) {
	a, u, _, st, mc := processFixture(t)
	html := []byte("<html></html>")
	if _, err := mc.PutObject(context.Background(), st.UploadsBucket, u.Key, bytes.NewReader(html), int64(len(html)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, run := range map[string]func(e *testsuite.TestActivityEnvironment) error{
		"inspect": func(e *testsuite.TestActivityEnvironment) error {
			_, err := e.ExecuteActivity(a.Inspect, u)
			return err
		},
		"process": func(e *testsuite.TestActivityEnvironment) error {
			_, err := e.ExecuteActivity(a.Process, u)
			return err
		},
	} {
		err := run(activityEnv(a))
		var app *temporal.ApplicationError
		if !asApp(err, &app) || app.Type() != workflows.RejectedType || app.Message() != changedMessage {
			t.Errorf("%s of a replaced file = %v, want the rejection %q", name, err, changedMessage)
		}
	}
}

func asApp(err error, app **temporal.ApplicationError) bool {
	for err != nil {
		if a, ok := err.(*temporal.ApplicationError); ok {
			*app = a
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// libvips does not return to Go while it decodes: Process heartbeats from a
// goroutine meanwhile, recording that it is decoding.
func TestProcessHeartbeatsWhileDecoding(t *testing.T) {
	a, u, _, _, _ := processFixture(t)
	prev := decodeHeartbeat
	decodeHeartbeat = 20 * time.Millisecond
	t.Cleanup(func() { decodeHeartbeat = prev })
	var mu sync.Mutex
	decoding, during := false, 0
	stubDecode(t, func(path string, l images.Limits, hb func()) (images.Result, error) {
		mu.Lock()
		decoding = true
		mu.Unlock()
		time.Sleep(300 * time.Millisecond) // a long C call: no heartbeat from this goroutine
		mu.Lock()
		decoding = false
		mu.Unlock()
		return images.Process(path, l, hb)
	})
	prevRecord := recordHeartbeat
	t.Cleanup(func() { recordHeartbeat = prevRecord })
	recordHeartbeat = func(ctx context.Context, details ...any) {
		if len(details) == 1 {
			if p, ok := details[0].(ProcessProgress); ok && p.Phase == phaseDecoding {
				mu.Lock()
				if decoding {
					during++
				}
				mu.Unlock()
			}
		}
		prevRecord(ctx, details...)
	}
	e := activityEnv(a)
	if _, err := e.ExecuteActivity(a.Process, u); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if during < 5 {
		t.Fatalf("%d heartbeats during a 300 ms decode with a 20 ms interval, want at least 5", during)
	}
}

// Attempts that die while decoding (timed out) are counted through the
// heartbeat details; after MaxDecodeTimeouts the file is rejected with a
// message, not retried for ever.
func TestRepeatedDecodeTimeoutsAreRejected(t *testing.T) {
	a, u, _, _, _ := processFixture(t)
	e := activityEnv(a)
	e.SetHeartbeatDetails(ProcessProgress{Phase: phaseDecoding, DecodeTimeouts: MaxDecodeTimeouts - 1})
	_, err := e.ExecuteActivity(a.Process, u)
	var app *temporal.ApplicationError
	if !asApp(err, &app) || app.Type() != workflows.RejectedType || !app.NonRetryable() ||
		!strings.HasPrefix(app.Message(), "processing the image timed out 3 times; the file may be too complex") {
		t.Fatalf("after %d decode timeouts Process = %v, want a non-retryable rejection", MaxDecodeTimeouts, err)
	}
	// Fewer timeouts, or an earlier attempt that failed after decoding, still process.
	for _, p := range []ProcessProgress{{Phase: phaseDecoding, DecodeTimeouts: MaxDecodeTimeouts - 2}, {Phase: phaseStoring, DecodeTimeouts: MaxDecodeTimeouts - 1}} {
		e := activityEnv(a)
		e.SetHeartbeatDetails(p)
		if _, err := e.ExecuteActivity(a.Process, u); err != nil {
			t.Errorf("after %+v Process = %v, want it processed", p, err)
		}
	}
}

// A file storage does not show yet fails the attempt (Temporal retries it,
// holding no slot in between) until WaitForObject after the first attempt;
// then it is rejected. Nothing waits inside the activity.
func TestInspectRetriesAMissingFileThenRejects(t *testing.T) {
	a, u, _, st, mc := processFixture(t)
	if err := mc.RemoveObject(context.Background(), st.UploadsBucket, u.Key, minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	u.ETag = ""
	a.WaitForObject = time.Hour
	began := time.Now()
	_, err := activityEnv(a).ExecuteActivity(a.Inspect, u)
	var app *temporal.ApplicationError
	if err == nil || (asApp(err, &app) && app.NonRetryable()) || time.Since(began) > 5*time.Second {
		t.Fatalf("Inspect of a file not there yet = %v after %s, want a quick retryable failure", err, time.Since(began))
	}
	a.WaitForObject = 0
	_, err = activityEnv(a).ExecuteActivity(a.Inspect, u)
	if !asApp(err, &app) || app.Type() != workflows.RejectedType || !strings.Contains(app.Message(), "never arrived") {
		t.Fatalf("Inspect after the wait = %v, want the rejection", err)
	}
}

// process runs Process on u in a test activity environment; it must succeed.
func process(t *testing.T, a *Uploads, u workflows.Upload) workflows.Processed {
	t.Helper()
	v, err := activityEnv(a).ExecuteActivity(a.Process, u)
	if err != nil {
		t.Fatal(err)
	}
	var p workflows.Processed
	if err := v.Get(&p); err != nil {
		t.Fatal(err)
	}
	return p
}
