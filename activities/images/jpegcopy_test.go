package images

import (
	"bytes"
	"image"
	"image/jpeg"
	"testing"
)

// withMetadata returns the JPEG with an EXIF (APP1) segment and a comment
// after its SOI, and bytes after its EOI, as cameras and editors write.
func withMetadata(t *testing.T, file []byte) []byte {
	t.Helper()
	exif := append([]byte{0xFF, 0xE1, 0, 0}, []byte("Exif\x00\x00GPS 51.5N 0.1W")...)
	exif[2], exif[3] = 0, byte(len(exif)-2)
	com := append([]byte{0xFF, 0xFE, 0, 0}, []byte("secret comment")...)
	com[3] = byte(len(com) - 2)
	out := append([]byte{}, file[:2]...)
	out = append(out, exif...)
	out = append(out, com...)
	out = append(out, file[2:]...)
	return append(out, []byte("trailing MPF data")...)
}

func encodeQ(t *testing.T, m image.Image, q int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, m, &jpeg.Options{Quality: q}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestStrippedJPEG(t *testing.T) {
	m := photo(320, 240)
	plain := encodeQ(t, m, 70)
	file := withMetadata(t, plain)
	got, ok := strippedJPEG(file)
	if !ok {
		t.Fatal("a baseline 4:2:0 q70 JPEG was not taken")
	}
	for _, s := range []string{"Exif", "GPS", "secret", "trailing"} {
		if bytes.Contains(got, []byte(s)) {
			t.Errorf("stripped JPEG still holds %q", s)
		}
	}
	// Go's encoder writes no metadata: stripping gives its bytes back.
	if !bytes.Equal(got, plain) {
		t.Errorf("stripped JPEG is %d bytes, want the %d without metadata", len(got), len(plain))
	}
	a, err := jpeg.Decode(bytes.NewReader(got))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := jpeg.Decode(bytes.NewReader(plain))
	if !bytes.Equal(a.(*image.YCbCr).Y, b.(*image.YCbCr).Y) || !bytes.Equal(a.(*image.YCbCr).Cb, b.(*image.YCbCr).Cb) {
		t.Error("stripped JPEG decodes to other pixels")
	}

	if _, ok := strippedJPEG(withMetadata(t, encodeQ(t, m, 90))); ok {
		t.Error("a q90 JPEG was taken; it should be re-encoded at q80")
	}
	prog := bytes.Replace(plain, []byte{0xFF, 0xC0}, []byte{0xFF, 0xC2}, 1)
	if _, ok := strippedJPEG(prog); ok {
		t.Error("a progressive JPEG was taken")
	}
	if _, ok := strippedJPEG(plain[:len(plain)/2]); ok {
		t.Error("a truncated JPEG was taken")
	}
}

// A JPEG no larger than the largest variant, upright, without a profile
// and at q80 or lower is served as itself (stripped) at its own size; the
// smaller variants are re-encoded.
func TestProcessReusesAnUnscaledJPEG(t *testing.T) {
	file := withMetadata(t, encodeQ(t, photo(1000, 750), 70))
	want, _ := strippedJPEG(file)
	res, err := Process(writeFile(t, "small.jpg", file), Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkOutputs(t, res, "jpeg", 1000, 750)
	for _, o := range res.Outputs {
		if o.Format != "jpeg" {
			continue
		}
		reused := bytes.Equal(o.Data, want)
		if unscaled := o.Width == 1000; reused != unscaled {
			t.Errorf("%s.jpeg (%d×%d): the original's bytes %v, want %v", o.Name, o.Width, o.Height, reused, unscaled)
		}
		if bytes.Contains(o.Data, []byte("Exif")) {
			t.Errorf("%s.jpeg keeps EXIF", o.Name)
		}
	}
}

// strippedJPEG reads untrusted bytes: whatever they are, it must not panic,
// and what it takes must still be a JPEG the standard library decodes.
func FuzzStrippedJPEG(f *testing.F) {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, photo(48, 32), &jpeg.Options{Quality: 70}); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Add(b.Bytes()[:100])
	f.Fuzz(func(t *testing.T, data []byte) {
		out, ok := strippedJPEG(data)
		if !ok {
			return
		}
		if _, err := jpeg.DecodeConfig(bytes.NewReader(out)); err != nil {
			t.Errorf("taken, but its header does not decode: %v", err)
		}
	})
}
