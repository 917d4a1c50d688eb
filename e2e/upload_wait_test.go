package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// GET /asset-uploads/:id?wait= answers as soon as the upload stops
// processing (the ingestion run closes), well before the wait; a finished
// upload answers at once; bad values are 400 naming the parameter.
func TestUploadLongPoll(t *testing.T) {
	t.Parallel()
	s := start(t)
	token := s.token(t, "editor@demo.test")
	file := pngFile(t, 400, 300)
	sig := s.signature(t, token, "wait.png", "image/png")
	if st, b := s.browserUpload(t, sig, file); st >= 300 {
		t.Fatalf("storage upload = %d %s", st, b)
	}
	d := s.notify(t, token, sig, "wait.png", len(file))
	if d.Status != 202 {
		t.Fatalf("notify = %d %s", d.Status, d.Raw)
	}
	id := d.resource(t).ID

	began := time.Now()
	got := s.call(t, token, http.MethodGet, "/asset-uploads/"+id+"?wait=20s", nil)
	took := time.Since(began)
	if got.Status != 200 || got.resource(t).Attributes["status"] != "finished" {
		t.Fatalf("GET ?wait=20s = %d %s", got.Status, got.Raw)
	}
	if took > 15*time.Second {
		t.Fatalf("GET ?wait=20s answered after %s: it did not answer when the upload finished", took)
	}
	t.Logf("long poll answered %s after the notice", took)

	began = time.Now()
	again := s.call(t, token, http.MethodGet, "/asset-uploads/"+id+"?wait=5", nil)
	if again.Status != 200 || again.resource(t).Attributes["status"] != "finished" || time.Since(began) > 2*time.Second {
		t.Fatalf("GET ?wait=5 of a finished upload = %d after %s: %s", again.Status, time.Since(began), again.Raw)
	}

	for _, bad := range []string{"abc", "0", "-1s", "21s", "1h", "NaN", ""} {
		r := s.call(t, token, http.MethodGet, "/asset-uploads/"+id+"?wait="+bad, nil)
		if r.Status != 400 || !strings.Contains(string(r.Raw), `"parameter":"wait"`) {
			t.Errorf("GET ?wait=%s = %d %s, want 400 at parameter wait", bad, r.Status, r.Raw)
		}
	}
}

// With no worker the upload stays processing: the long poll answers
// "processing" when the wait ends.
func TestUploadLongPollTimesOut(t *testing.T) {
	t.Parallel()
	s := startWithoutWorker(t)
	token := s.token(t, "editor@demo.test")
	file := pngFile(t, 40, 30)
	sig := s.signature(t, token, "stuck.png", "image/png")
	if st, b := s.browserUpload(t, sig, file); st >= 300 {
		t.Fatalf("storage upload = %d %s", st, b)
	}
	d := s.notify(t, token, sig, "stuck.png", len(file))
	if d.Status != 202 {
		t.Fatalf("notify = %d %s", d.Status, d.Raw)
	}
	began := time.Now()
	got := s.call(t, token, http.MethodGet, "/asset-uploads/"+d.resource(t).ID+"?wait=1500ms", nil)
	took := time.Since(began)
	if got.Status != 200 || got.resource(t).Attributes["status"] != "processing" {
		t.Fatalf("GET ?wait=1500ms = %d %s", got.Status, got.Raw)
	}
	if took < 1400*time.Millisecond || took > 6*time.Second {
		t.Fatalf("GET ?wait=1500ms answered after %s, want about 1.5 s", took)
	}
}
