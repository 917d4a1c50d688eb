package e2e

import (
	"bytes"
	"image"
	"image/color"
	"image/color/palette"
	"image/gif"
	"image/jpeg"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pressroom/pressroom/testsupport"
)

func jpegFile(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{uint8(x * 3), uint8(y * 5), uint8(x ^ y), 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 85}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// animatedGIF has two frames of different sizes' worth of colour; variants
// are made from the first.
func animatedGIF(t *testing.T, w, h int) []byte {
	t.Helper()
	frames := []*image.Paletted{image.NewPaletted(image.Rect(0, 0, w, h), palette.Plan9), image.NewPaletted(image.Rect(0, 0, w, h), palette.Plan9)}
	for i, f := range frames {
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				f.SetColorIndex(x, y, uint8((x+y+i*100)%256))
			}
		}
	}
	var b bytes.Buffer
	if err := gif.EncodeAll(&b, &gif.GIF{Image: frames, Delay: []int{10, 10}}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestUploadFormats(t *testing.T) {
	t.Parallel()
	s := start(t)
	token := s.token(t, "editor@demo.test")
	full := jpegFile(t, 1000, 700)
	cases := []struct {
		name, filename, contentType string
		file                        []byte
		status, message             string
		width, height               float64
		variantType                 string
	}{
		{"jpeg", "photo.jpg", "image/jpeg", full, "finished", "", 1000, 700, "image/jpeg"},
		{"animated gif", "anim.gif", "image/gif", animatedGIF(t, 300, 200), "finished", "", 300, 200, "image/gif"},
		{"truncated jpeg", "broken.jpg", "image/jpeg", full[:len(full)/2], "error", "damaged or truncated", 0, 0, ""},
		{"decompression bomb", "bomb.png", "image/png", testsupport.BombPNG(30000, 30000), "error", "30000×30000 pixels; the limit is 50 megapixels", 0, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up := s.ingest(t, token, tc.filename, tc.contentType, tc.file)
			msg, _ := up.Attributes["error-message"].(string)
			if up.Attributes["status"] != tc.status || !strings.Contains(msg, tc.message) {
				t.Fatalf("upload = %v, want %s %q", up.Attributes, tc.status, tc.message)
			}
			if tc.status != "finished" {
				return
			}
			img := s.call(t, token, http.MethodGet, "/asset-uploads/"+up.ID+"/asset-file", nil).resource(t).Attributes
			if img["width"] != tc.width || img["height"] != tc.height {
				t.Errorf("dimensions %v×%v", img["width"], img["height"])
			}
			variants := img["variants"].(map[string]any)
			if v := variants["thumb"].(map[string]any); v["content-type"] != tc.variantType || v["width"] != float64(256) {
				t.Errorf("thumb = %v", v)
			}
			if v := variants["thumb-webp"].(map[string]any); v["content-type"] != "image/webp" {
				t.Errorf("thumb-webp = %v", v)
			}
		})
	}
	// Failed uploads leave nothing in the assets bucket beyond the two good ones.
	time.Sleep(100 * time.Millisecond)
	if n := len(s.objects(t, s.Config.Storage.AssetsBucket, "")); n != 18 {
		t.Errorf("assets bucket holds %d objects, want 18 (2 assets × 9)", n)
	}
}
