package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/workflows"
)

func pngFile(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), uint8(x + y), 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestUploadPNGEndToEnd(t *testing.T) {
	t.Parallel()
	s := start(t)
	token := s.token(t, "editor@demo.test")
	file := pngFile(t, 800, 600)
	up := s.ingest(t, token, "photos/holiday shot.png", "image/png", file)
	if up.Attributes["status"] != "finished" || up.Attributes["error-message"] != nil {
		t.Fatalf("upload = %+v", up.Attributes)
	}
	s.recordHistory(t, workflows.AssetUploadID(up.ID), "ingest-upload-queue-finished.history.json")
	var assetRef, fileRef struct{ Type, ID string }
	_ = json.Unmarshal(up.Relationships["asset"].Data, &assetRef)
	_ = json.Unmarshal(up.Relationships["asset-file"].Data, &fileRef)
	if assetRef.Type != "assets" || fileRef.Type != "asset-images" {
		t.Fatalf("relationships = %+v %+v", assetRef, fileRef)
	}

	// The related and relationship links the spec lists.
	rel := s.call(t, token, http.MethodGet, "/asset-uploads/"+up.ID+"/relationships/asset", nil)
	if rel.Status != 200 || !strings.Contains(string(rel.Data), assetRef.ID) {
		t.Fatalf("relationships/asset = %d %s", rel.Status, rel.Raw)
	}
	asset := s.call(t, token, http.MethodGet, "/asset-uploads/"+up.ID+"/asset", nil)
	if asset.Status != 200 || asset.resource(t).ID != assetRef.ID || asset.resource(t).Attributes["title"] != "holiday shot" {
		t.Fatalf("related asset = %d %s", asset.Status, asset.Raw)
	}
	img := s.call(t, token, http.MethodGet, "/asset-uploads/"+up.ID+"/asset-file", nil)
	if img.Status != 200 {
		t.Fatalf("related asset-file = %d %s", img.Status, img.Raw)
	}
	a := img.resource(t).Attributes
	if a["width"] != float64(800) || a["height"] != float64(600) || a["file-size"] != float64(len(file)) || len(a["fingerprint"].(string)) != 64 {
		t.Errorf("asset image = %s", img.Raw)
	}
	variants := a["variants"].(map[string]any)
	for _, name := range []string{"thumb", "thumb-webp", "small", "small-webp", "medium", "medium-webp", "large", "large-webp"} {
		v, ok := variants[name].(map[string]any)
		if !ok {
			t.Errorf("variant %s missing: %v", name, variants)
			continue
		}
		if name == "large" && v["width"] != float64(800) { // never upscaled
			t.Errorf("large variant %v", v)
		}
		// The URL is public: a browser can load it.
		resp, err := http.Get(v["url"].(string))
		if err != nil || resp.StatusCode != 200 {
			t.Errorf("variant %s url %s: %v %v", name, v["url"], err, resp)
		} else {
			resp.Body.Close()
		}
	}
	// The temporary object is deleted just after the upload is marked
	// finished: wait for the workflow to end. Then it is gone, and the assets
	// bucket holds exactly the original plus eight variants.
	if err := s.Temporal.GetWorkflow(context.Background(), workflows.AssetUploadID(up.ID), "").Get(context.Background(), nil); err != nil {
		t.Fatalf("workflow: %v", err)
	}
	if left := s.objects(t, s.Config.Storage.UploadsBucket, ""); len(left) != 0 {
		t.Errorf("temporary objects left: %v", left)
	}
	if got := s.objects(t, s.Config.Storage.AssetsBucket, ""); len(got) != 9 {
		t.Errorf("assets bucket holds %d objects, want 9: %v", len(got), got)
	}
	list := s.call(t, token, http.MethodGet, "/assets", nil)
	if list.Status != 200 || !strings.Contains(string(list.Raw), `"total":1`) {
		t.Errorf("GET /assets = %s", list.Raw)
	}
	// Another site sees none of it.
	other := s.token(t, "editor@other.test")
	for _, p := range []string{"/asset-uploads/" + up.ID, "/assets/" + assetRef.ID, "/asset-images/" + fileRef.ID} {
		if d := s.call(t, other, http.MethodGet, p, nil); d.Status != 404 {
			t.Errorf("other site GET %s = %d", p, d.Status)
		}
	}
}

func TestRejectedUploadsEndInError(t *testing.T) {
	t.Parallel()
	s := start(t)
	token := s.token(t, "editor@demo.test")
	notImage := []byte("this is plain text, not an image at all")
	cases := []struct {
		name, filename, contentType string
		file                        []byte
		declaredSize                int
		message                     string
	}{
		{"not an image", "notes.png", "image/png", notImage, len(notImage), "the file is not a PNG image"},
		{"type lie", "photo.png", "image/png", jpegMagic(), len(jpegMagic()), "the file is not a PNG image"},
		{"size lie", "photo.png", "image/png", pngFile(t, 20, 20), 99, "file-size says 99"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sig := s.signature(t, token, tc.filename, tc.contentType)

			if st, b := s.browserUpload(t, sig, tc.file); st >= 300 {
				t.Fatalf("storage upload = %d %s", st, b)
			}
			d := s.notify(t, token, sig, tc.filename, tc.declaredSize)
			if d.Status != 202 {
				t.Fatalf("notify = %d %s", d.Status, d.Raw)
			}
			up := s.await(t, token, d.resource(t).ID, time.Minute)
			if tc.name == "type lie" {
				s.recordHistory(t, workflows.AssetUploadID(up.ID), "ingest-upload-queue-rejected.history.json")
			}
			msg, _ := up.Attributes["error-message"].(string)
			if up.Attributes["status"] != "error" || !strings.Contains(msg, tc.message) {
				t.Fatalf("upload = %v, want error containing %q", up.Attributes, tc.message)
			}
			if string(up.Relationships["asset"].Data) != "null" || string(up.Relationships["asset-file"].Data) != "null" {
				t.Errorf("a failed upload has relationships: %+v", up.Relationships)
			}
		})
	}
}

// jpegMagic is the start of a JPEG file: enough for the type check.
func jpegMagic() []byte {
	return append([]byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 16, 'J', 'F', 'I', 'F', 0}, bytes.Repeat([]byte{0}, 64)...)
}

func TestAnotherSitesKeyIsRefused(t *testing.T) {
	t.Parallel()
	s := start(t)
	demo, other := s.token(t, "editor@demo.test"), s.token(t, "editor@other.test")
	sig := s.signature(t, demo, "a.png", "image/png")
	d := s.notify(t, other, sig, "a.png", 10)
	if d.Status != 422 || len(d.Errors) != 1 || d.Errors[0].Source.Pointer != "/data/attributes/key" {
		t.Fatalf("other site's key = %d %s", d.Status, d.Raw)
	}
}

func TestStorageRefusesWhatTheSignatureDoesNotAllow(t *testing.T) {
	t.Parallel()
	s := start(t, func(c *config.Config) { c.MaxUploadBytes = 1000 })
	token := s.token(t, "editor@demo.test")
	sig := s.signature(t, token, "a.png", "image/png")
	if st, _ := s.browserUpload(t, sig, bytes.Repeat([]byte{1}, 2000)); st < 400 {
		t.Errorf("a file over the size limit was accepted by storage: %d", st)
	}
	other := sig
	other.Attributes = map[string]any{}
	for k, v := range sig.Attributes {
		other.Attributes[k] = v
	}
	other.Attributes["key"] = strings.Replace(sig.Attributes["key"].(string), "a.png", "b.png", 1)
	if st, _ := s.browserUpload(t, other, []byte("x")); st < 400 {
		t.Errorf("an upload to another key was accepted by storage: %d", st)
	}
	if _, err := s.Storage.StatObject(context.Background(), s.Config.Storage.UploadsBucket, other.Attributes["key"].(string), minio.StatObjectOptions{}); err == nil {
		t.Error("the refused object exists")
	}
}

func TestExpiredSignatureIsRefusedByStorage(t *testing.T) {
	t.Parallel()
	s := start(t, func(c *config.Config) { c.SignatureTTL = time.Second; c.UploadWait = 2 * time.Second })
	token := s.token(t, "editor@demo.test")
	sig := s.signature(t, token, "late.png", "image/png")
	time.Sleep(2 * time.Second)
	file := pngFile(t, 10, 10)
	st, body := s.browserUpload(t, sig, file)
	if st != http.StatusForbidden || !strings.Contains(body, "xpired") {
		t.Fatalf("upload with an expired signature = %d %s", st, body)
	}
	// Notifying anyway is refused: there is no file under the key.
	d := s.notify(t, token, sig, "late.png", len(file))
	if d.Status != 422 || len(d.Errors) != 1 || d.Errors[0].Code != "file_missing" || d.Errors[0].Source.Pointer != "/data/attributes/key" {
		t.Fatalf("notify = %d %s", d.Status, d.Raw)
	}
}

func TestRetryAfterErrorStartsANewAttempt(t *testing.T) {
	t.Parallel()
	s := start(t, func(c *config.Config) { c.UploadWait = time.Second })
	token := s.token(t, "editor@demo.test")
	sig := s.signature(t, token, "retry.png", "image/png")
	file := pngFile(t, 64, 48)
	// The wrong file first: the attempt fails.
	wrong := []byte("this is plain text, not an image at all")
	if st, b := s.browserUpload(t, sig, wrong); st >= 300 {
		t.Fatalf("storage upload = %d %s", st, b)
	}
	d := s.notify(t, token, sig, "retry.png", len(wrong))
	first := s.await(t, token, d.resource(t).ID, time.Minute)
	if first.Attributes["status"] != "error" {
		t.Fatalf("first attempt = %v", first.Attributes)
	}
	// Upload, then post the same key again: the same upload is processed anew.
	if st, b := s.browserUpload(t, sig, file); st >= 300 {
		t.Fatalf("storage upload = %d %s", st, b)
	}
	d = s.notify(t, token, sig, "retry.png", len(file))
	if d.Status != 202 || d.resource(t).ID != first.ID {
		t.Fatalf("second notice = %d %s", d.Status, d.Raw)
	}
	second := s.await(t, token, first.ID, time.Minute)
	if second.Attributes["status"] != "finished" || second.Attributes["error-message"] != nil {
		t.Fatalf("second attempt = %v", second.Attributes)
	}
	// A finished upload cannot be posted again.
	if d := s.notify(t, token, sig, "retry.png", len(file)); d.Status != 409 {
		t.Fatalf("re-posting a finished upload = %d %s", d.Status, d.Raw)
	}
}
