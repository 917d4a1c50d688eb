package images

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/color/palette"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// ---- fixtures, made with the standard library ----

// photo is a w×h RGB image of gradients plus noise.
func photo(w, h int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(1, 2))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			n := rng.IntN(16)
			m.SetRGBA(x, y, color.RGBA{
				R: uint8(x*200/w + n),
				G: uint8(y*200/h + n),
				B: uint8((x+y)*100/(w+h) + 100),
				A: 255,
			})
		}
	}
	return m
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func encodeJPEG(t *testing.T, m image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, m, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodePNG(t *testing.T, m image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// alphaPNG is 800×600 with alpha falling from opaque (left) to clear (right).
func alphaPNG(t *testing.T) []byte {
	m := image.NewNRGBA(image.Rect(0, 0, 800, 600))
	for y := 0; y < 600; y++ {
		for x := 0; x < 800; x++ {
			m.SetNRGBA(x, y, color.NRGBA{R: 200, G: uint8(y / 3), B: 50, A: uint8(255 - x*255/799)})
		}
	}
	return encodePNG(t, m)
}

// animatedGIF has two 400×300 frames: red, then blue.
func animatedGIF(t *testing.T) []byte {
	t.Helper()
	frame := func(c color.Color) *image.Paletted {
		m := image.NewPaletted(image.Rect(0, 0, 400, 300), palette.Plan9)
		idx := uint8(m.Palette.Index(c))
		for i := range m.Pix {
			m.Pix[i] = idx
		}
		return m
	}
	g := &gif.GIF{
		Image: []*image.Paletted{frame(color.RGBA{255, 0, 0, 255}), frame(color.RGBA{0, 0, 255, 255})},
		Delay: []int{50, 50},
	}
	var b bytes.Buffer
	if err := gif.EncodeAll(&b, g); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// withOrientation inserts a minimal EXIF APP1 segment (big-endian TIFF, one
// IFD entry: Orientation SHORT) right after the JPEG's SOI marker.
func withOrientation(jpg []byte, orientation uint16) []byte {
	var tiff bytes.Buffer
	tiff.WriteString("MM\x00\x2a")
	binary.Write(&tiff, binary.BigEndian, uint32(8))      // IFD0 offset
	binary.Write(&tiff, binary.BigEndian, uint16(1))      // one entry
	binary.Write(&tiff, binary.BigEndian, uint16(0x0112)) // Orientation
	binary.Write(&tiff, binary.BigEndian, uint16(3))      // SHORT
	binary.Write(&tiff, binary.BigEndian, uint32(1))      // count
	binary.Write(&tiff, binary.BigEndian, orientation)    // value, left-justified
	binary.Write(&tiff, binary.BigEndian, uint16(0))      // padding
	binary.Write(&tiff, binary.BigEndian, uint32(0))      // no next IFD
	payload := append([]byte("Exif\x00\x00"), tiff.Bytes()...)
	var seg bytes.Buffer
	seg.Write([]byte{0xFF, 0xE1})
	binary.Write(&seg, binary.BigEndian, uint16(len(payload)+2))
	seg.Write(payload)
	out := append([]byte{}, jpg[:2]...)
	out = append(out, seg.Bytes()...)
	return append(out, jpg[2:]...)
}

func pngChunk(typ string, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, uint32(len(data)))
	b.WriteString(typ)
	b.Write(data)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	return b.Bytes()
}

// bombPNG declares w×h RGB pixels but carries a tiny IDAT.
func bombPNG(w, h uint32) []byte {
	var ihdr bytes.Buffer
	binary.Write(&ihdr, binary.BigEndian, w)
	binary.Write(&ihdr, binary.BigEndian, h)
	ihdr.Write([]byte{8, 2, 0, 0, 0}) // 8-bit RGB, deflate, no filter, no interlace
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	b.Write(pngChunk("IHDR", ihdr.Bytes()))
	b.Write(pngChunk("IDAT", []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01}))
	b.Write(pngChunk("IEND", nil))
	return b.Bytes()
}

// ---- output checks ----

// webpSize reads the canvas size from a WebP's first chunk (VP8, VP8L or
// VP8X), after checking the RIFF/WEBP magic.
func webpSize(t *testing.T, b []byte) (w, h int, hasAlpha bool) {
	t.Helper()
	if len(b) < 30 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WEBP" {
		t.Fatalf("not a WebP: % x", b[:min(len(b), 16)])
	}
	if got := int(binary.LittleEndian.Uint32(b[4:8])) + 8; got != len(b) {
		t.Fatalf("RIFF size %d, file %d", got, len(b))
	}
	p := b[20:]
	switch string(b[12:16]) {
	case "VP8 ":
		if p[3] != 0x9d || p[4] != 0x01 || p[5] != 0x2a {
			t.Fatalf("bad VP8 start code")
		}
		return int(binary.LittleEndian.Uint16(p[6:]) & 0x3fff), int(binary.LittleEndian.Uint16(p[8:]) & 0x3fff), false
	case "VP8L":
		v := binary.LittleEndian.Uint32(p[1:])
		return int(v&0x3fff) + 1, int(v>>14&0x3fff) + 1, v>>28&1 == 1
	case "VP8X":
		u24 := func(q []byte) int { return int(q[0]) | int(q[1])<<8 | int(q[2])<<16 }
		if p[0]&0x02 != 0 {
			t.Errorf("WebP is animated")
		}
		return u24(p[4:]) + 1, u24(p[7:]) + 1, p[0]&0x10 != 0
	}
	t.Fatalf("unknown WebP chunk %q", b[12:16])
	return
}

// wantSize is the size a variant should have: long edge min(spec, original
// long edge), short edge in proportion (±1 for rounding).
func checkSize(t *testing.T, what string, gotW, gotH, origW, origH, spec int) {
	t.Helper()
	long, short := origW, origH
	gotLong, gotShort := gotW, gotH
	if origH > origW {
		long, short = origH, origW
		gotLong, gotShort = gotH, gotW
	}
	wantLong := min(spec, long)
	wantShort := float64(short) * float64(wantLong) / float64(long)
	if gotLong != wantLong || float64(gotShort) < wantShort-1 || float64(gotShort) > wantShort+1 ||
		(origW >= origH) != (gotW >= gotH) {
		t.Errorf("%s: %d×%d, want long edge %d and about %.0f (original %d×%d)", what, gotW, gotH, wantLong, wantShort, origW, origH)
	}
}

// checkOutputs checks the 8 outputs: order, formats, content types, sizes
// (as reported and as decoded from the bytes), and returns the decoded
// original-format images by variant name.
func checkOutputs(t *testing.T, res Result, format string, w, h int) map[string]image.Image {
	t.Helper()
	if len(res.Outputs) != 2*len(Variants) {
		t.Fatalf("%d outputs, want %d", len(res.Outputs), 2*len(Variants))
	}
	decoded := map[string]image.Image{}
	for i, o := range res.Outputs {
		v := Variants[i/2]
		wantFormat := []string{"webp", format}[i%2]
		what := v.Name + "." + o.Format
		if o.Name != v.Name || o.Format != wantFormat || o.ContentType != "image/"+wantFormat {
			t.Errorf("output %d is %s/%s/%s, want %s/%s", i, o.Name, o.Format, o.ContentType, v.Name, wantFormat)
		}
		checkSize(t, what, o.Width, o.Height, w, h, v.Size)
		var dw, dh int
		if o.Format == "webp" {
			dw, dh, _ = webpSize(t, o.Data)
		} else {
			m, name, err := image.Decode(bytes.NewReader(o.Data))
			if err != nil || name != format {
				t.Fatalf("%s: decode: %q %v", what, name, err)
			}
			dw, dh = m.Bounds().Dx(), m.Bounds().Dy()
			decoded[v.Name] = m
		}
		if dw != o.Width || dh != o.Height {
			t.Errorf("%s: data is %d×%d, Output says %d×%d", what, dw, dh, o.Width, o.Height)
		}
	}
	return decoded
}

func asRejection(t *testing.T, err error, want error, contains ...string) {
	t.Helper()
	var r *Rejection
	if !errors.As(err, &r) {
		t.Fatalf("error %v (%T) is not a *Rejection", err, err)
	}
	if !errors.Is(err, want) {
		t.Errorf("error %q does not wrap %v", err, want)
	}
	for _, s := range contains {
		if !strings.Contains(r.Message, s) {
			t.Errorf("message %q does not mention %q", r.Message, s)
		}
	}
}

// ---- Process ----

func TestProcessJPEG(t *testing.T) {
	path := writeFile(t, "photo.jpg", encodeJPEG(t, photo(3000, 2000)))
	beats := 0
	res, err := Process(path, Limits{}, func() { beats++ })
	if err != nil {
		t.Fatal(err)
	}
	if res.Width != 3000 || res.Height != 2000 || res.Format != "jpeg" || res.Orientation != 1 ||
		res.HasAlpha || res.ColourSpace != "srgb" {
		t.Errorf("result %+v", summary(res))
	}
	checkOutputs(t, res, "jpeg", 3000, 2000)
	if beats < len(res.Outputs) {
		t.Errorf("heartbeat called %d times for %d outputs", beats, len(res.Outputs))
	}
	for _, o := range res.Outputs {
		if o.Format == "jpeg" && bytes.Contains(o.Data[:min(len(o.Data), 64)], []byte("Exif")) {
			t.Errorf("%s.jpeg keeps EXIF; want stripped", o.Name)
		}
	}
}

func TestProcessPNGAlpha(t *testing.T) {
	path := writeFile(t, "alpha.png", alphaPNG(t))
	res, err := Process(path, Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.HasAlpha || res.Format != "png" || res.Width != 800 || res.Height != 600 {
		t.Errorf("result %+v", summary(res))
	}
	decoded := checkOutputs(t, res, "png", 800, 600)
	for name, m := range decoded {
		// left column opaque, right column (nearly) clear
		b := m.Bounds()
		_, _, _, aL := m.At(b.Min.X, b.Min.Y+b.Dy()/2).RGBA()
		_, _, _, aR := m.At(b.Max.X-1, b.Min.Y+b.Dy()/2).RGBA()
		if aL < 0xf000 || aR > 0x1000 {
			t.Errorf("%s.png alpha left %#x right %#x; want opaque → clear", name, aL, aR)
		}
	}
	for _, o := range res.Outputs {
		if o.Format == "webp" {
			if _, _, alpha := webpSize(t, o.Data); !alpha {
				t.Errorf("%s.webp has no alpha", o.Name)
			}
		}
	}
}

func TestProcessAnimatedGIFFirstFrame(t *testing.T) {
	path := writeFile(t, "anim.gif", animatedGIF(t))
	res, err := Process(path, Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Format != "gif" || res.Width != 400 || res.Height != 300 {
		t.Errorf("result %+v", summary(res))
	}
	checkOutputs(t, res, "gif", 400, 300)
	for _, o := range res.Outputs {
		if o.Format != "gif" {
			continue
		}
		g, err := gif.DecodeAll(bytes.NewReader(o.Data))
		if err != nil {
			t.Fatalf("%s.gif: %v", o.Name, err)
		}
		if len(g.Image) != 1 {
			t.Errorf("%s.gif has %d frames, want 1", o.Name, len(g.Image))
		}
		r, gg, b, _ := g.Image[0].At(o.Width/2, o.Height/2).RGBA()
		if r < 0xe000 || gg > 0x2000 || b > 0x2000 {
			t.Errorf("%s.gif centre is %#x,%#x,%#x; want the first frame's red", o.Name, r, gg, b)
		}
	}
}

func TestProcessNoUpscale(t *testing.T) {
	path := writeFile(t, "small.png", encodePNG(t, photo(300, 200)))
	res, err := Process(path, Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkOutputs(t, res, "png", 300, 200)
	for _, o := range res.Outputs {
		want := [2]int{300, 200}
		if o.Name == "thumb" {
			want = [2]int{256, 171}
		}
		if [2]int{o.Width, o.Height} != want {
			t.Errorf("%s.%s is %d×%d, want %d×%d", o.Name, o.Format, o.Width, o.Height, want[0], want[1])
		}
	}
	if res.HasAlpha {
		t.Error("opaque RGBA PNG reported HasAlpha")
	}
}

func TestProcessEXIFOrientation(t *testing.T) {
	// Stored landscape 600×400 with orientation 6 (rotate 90° clockwise to
	// display): displayed portrait 400×600.
	path := writeFile(t, "rotated.jpg", withOrientation(encodeJPEG(t, photo(600, 400)), 6))
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	hdr, err := ReadHeader(f, Limits{})
	f.Close()
	if err != nil || hdr != (Header{"jpeg", 600, 400}) {
		t.Fatalf("ReadHeader = %+v, %v; want stored size 600×400", hdr, err)
	}
	res, err := Process(path, Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Orientation != 6 || res.Width != 400 || res.Height != 600 {
		t.Errorf("result %+v; want orientation 6, 400×600", summary(res))
	}
	checkOutputs(t, res, "jpeg", 400, 600)
	for _, o := range res.Outputs {
		if o.Width >= o.Height {
			t.Errorf("%s.%s is %d×%d, want portrait", o.Name, o.Format, o.Width, o.Height)
		}
	}
}

func TestProcessGreyscale(t *testing.T) {
	g := image.NewGray(image.Rect(0, 0, 500, 300))
	for i := range g.Pix {
		g.Pix[i] = uint8(i % 251)
	}
	path := writeFile(t, "grey.jpg", encodeJPEG(t, g))
	res, err := Process(path, Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.ColourSpace != "b-w" {
		t.Errorf("ColourSpace %q, want b-w", res.ColourSpace)
	}
	checkOutputs(t, res, "jpeg", 500, 300)
}

// TestProcessColourManagement needs the vips command to make fixtures the
// standard library cannot (an embedded Display P3 profile, CMYK): outputs
// are stripped of profiles, so their pixels must have been turned into sRGB.
func TestProcessColourManagement(t *testing.T) {
	vips, err := exec.LookPath("vips")
	if err != nil {
		t.Skip("no vips command to make P3 and CMYK fixtures")
	}
	want := color.RGBA{200, 100, 50, 255}
	solid := image.NewRGBA(image.Rect(0, 0, 320, 240))
	for i := 0; i < len(solid.Pix); i += 4 {
		copy(solid.Pix[i:], []uint8{want.R, want.G, want.B, 255})
	}
	src := writeFile(t, "srgb.jpg", encodeJPEG(t, solid))
	dir := filepath.Dir(src)
	for _, c := range []struct{ name, profile, space string }{
		{"p3.jpg", "p3", "srgb"},
		{"cmyk.jpg", "cmyk", "cmyk"},
	} {
		dst := filepath.Join(dir, c.name)
		if out, err := exec.Command(vips, "icc_transform", src, dst, c.profile, "--input-profile", "srgb").CombinedOutput(); err != nil {
			t.Fatalf("vips icc_transform: %v\n%s", err, out)
		}
		res, err := Process(dst, Limits{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.ColourSpace != c.space {
			t.Errorf("%s: ColourSpace %q, want %q", c.name, res.ColourSpace, c.space)
		}
		m := checkOutputs(t, res, "jpeg", 320, 240)["thumb"]
		if _, ok := m.(*image.YCbCr); !ok {
			t.Errorf("%s: thumb.jpeg decodes as %T, want YCbCr (sRGB)", c.name, m)
		}
		r, g, b, _ := m.At(100, 80).RGBA()
		got := [3]int{int(r >> 8), int(g >> 8), int(b >> 8)}
		for i, w := range [3]int{int(want.R), int(want.G), int(want.B)} {
			if d := got[i] - w; d < -12 || d > 12 {
				t.Errorf("%s: thumb.jpeg pixel %v, want about %v", c.name, got, want)
				break
			}
		}
	}
}

func TestProcessRefusesTooManyPixels(t *testing.T) {
	path := writeFile(t, "small.png", encodePNG(t, photo(300, 200)))
	_, err := Process(path, Limits{MaxPixels: 10_000}, nil)
	asRejection(t, err, ErrTooManyPixels, "300×200", "10000 pixels")

	// A header-only bomb never reaches the decoder either.
	path = writeFile(t, "bomb.png", bombPNG(30000, 30000))
	_, err = Process(path, Limits{}, nil)
	asRejection(t, err, ErrTooManyPixels, "30000×30000", "50 megapixels")
}

func TestProcessTruncatedJPEG(t *testing.T) {
	full := encodeJPEG(t, photo(800, 600))
	path := writeFile(t, "half.jpg", full[:len(full)/2])
	_, err := Process(path, Limits{}, nil)
	asRejection(t, err, ErrDamaged, "damaged or truncated")
}

func TestProcessGarbage(t *testing.T) {
	path := writeFile(t, "junk.png", []byte("this is not an image at all, just text"))
	_, err := Process(path, Limits{}, nil)
	asRejection(t, err, ErrNotImage, "not a JPEG, PNG or GIF")

	// Right magic number, nonsense after it.
	path = writeFile(t, "junk2.png", append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, 100)...))
	_, err = Process(path, Limits{}, nil)
	asRejection(t, err, ErrNotImage, "not a valid PNG image")

	if _, err := Process(filepath.Join(t.TempDir(), "missing.jpg"), Limits{}, nil); err == nil || errors.As(err, new(*Rejection)) {
		t.Errorf("missing file: %v; want a plain error", err)
	}
}

func TestProcessConcurrent(t *testing.T) {
	files := []string{
		writeFile(t, "a.jpg", encodeJPEG(t, photo(1200, 900))),
		writeFile(t, "b.png", alphaPNG(t)),
		writeFile(t, "c.gif", animatedGIF(t)),
	}
	full := encodeJPEG(t, photo(640, 480))
	bad := writeFile(t, "d.jpg", full[:len(full)/3])
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for i := range 12 {
		wg.Go(func() {
			if i%4 == 3 {
				if _, err := Process(bad, Limits{}, nil); !errors.Is(err, ErrDamaged) {
					errs <- err
				}
				return
			}
			res, err := Process(files[i%4], Limits{}, nil)
			if err == nil && len(res.Outputs) != 8 {
				err = errors.New("wrong number of outputs")
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// ---- ReadHeader ----

func TestReadHeaderFormats(t *testing.T) {
	for _, c := range []struct {
		data []byte
		want Header
	}{
		{encodeJPEG(t, photo(64, 48)), Header{"jpeg", 64, 48}},
		{alphaPNG(t), Header{"png", 800, 600}},
		{animatedGIF(t), Header{"gif", 400, 300}},
	} {
		got, err := ReadHeader(bytes.NewReader(c.data), Limits{})
		if err != nil || got != c.want {
			t.Errorf("ReadHeader = %+v, %v; want %+v", got, err, c.want)
		}
	}
}

func TestReadHeaderBomb(t *testing.T) {
	bomb := bombPNG(30000, 30000)
	_, err := ReadHeader(bytes.NewReader(bomb), Limits{})
	asRejection(t, err, ErrTooManyPixels, "30000×30000", "50 megapixels")
	if want := "the image is 30000×30000 pixels; the limit is 50 megapixels"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}

	// Within a raised limit the same header is accepted: the check is the
	// limit, not the decoder.
	if h, err := ReadHeader(bytes.NewReader(bomb), Limits{MaxPixels: 1e9}); err != nil || h.Width != 30000 {
		t.Errorf("with a 1e9 limit: %+v, %v", h, err)
	}

	// Refusing it must cost almost nothing.
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const runs = 10
	for range runs {
		ReadHeader(bytes.NewReader(bomb), Limits{})
	}
	runtime.ReadMemStats(&after)
	perCall := (after.TotalAlloc - before.TotalAlloc) / runs
	if perCall >= 1<<20 {
		t.Errorf("ReadHeader allocated %d bytes per call on a 30000×30000 header; want < 1 MB", perCall)
	}
	allocs := testing.AllocsPerRun(runs, func() { ReadHeader(bytes.NewReader(bomb), Limits{}) })
	t.Logf("bomb header refused with %d bytes in %.0f allocations per call", perCall, allocs)
}

func TestReadHeaderGarbage(t *testing.T) {
	for name, data := range map[string][]byte{
		"text":  []byte("<html><body>hello</body></html>"),
		"empty": nil,
		"short": {0xFF},
	} {
		_, err := ReadHeader(bytes.NewReader(data), Limits{})
		t.Run(name, func(t *testing.T) { asRejection(t, err, ErrNotImage, "not a JPEG, PNG or GIF image") })
	}
	for format, data := range map[string][]byte{
		"JPEG": {0xFF, 0xD8, 0xFF, 0x00, 0x01, 0x02},
		"PNG":  []byte("\x89PNG\r\n\x1a\nnot really"),
		"GIF":  []byte("GIF89a"),
	} {
		_, err := ReadHeader(bytes.NewReader(data), Limits{})
		t.Run(format, func(t *testing.T) { asRejection(t, err, ErrNotImage, "not a valid "+format+" image") })
	}
}

func TestReadHeaderReaderError(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(bytes.NewReader([]byte("\x89PNG\r\n\x1a\n\x00\x00")), errReader{boom})
	_, err := ReadHeader(r, Limits{})
	if !errors.Is(err, boom) || errors.As(err, new(*Rejection)) {
		t.Errorf("error %v; want the reader's error, not a rejection", err)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestPixelCount(t *testing.T) {
	for n, want := range map[int64]string{
		50_000_000: "50 megapixels", 1_000_000: "1 megapixel", 2_500_000: "2.5 megapixels", 1000: "1000 pixels",
	} {
		if got := pixelCount(n); got != want {
			t.Errorf("pixelCount(%d) = %q, want %q", n, got, want)
		}
	}
}

// summary is Result without the bytes, for messages.
func summary(r Result) Result {
	r.Outputs = nil
	return r
}
