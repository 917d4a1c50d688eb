package images

import (
	"bytes"
	"errors"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"testing"
)

// FuzzReadHeader checks the header reader on arbitrary bytes, under a pixel
// limit and with the stream failing after failAt bytes (0: never):
//   - it never panics, and never reads more than the stream holds;
//   - success means the format sniffed from the leading bytes, dimensions
//     of at least 1×1 within the limit, and the same dimensions the
//     standard library reads from the whole file;
//   - otherwise it is a *Rejection wrapping ErrNotImage or
//     ErrTooManyPixels, the latter only when the file really declares more
//     pixels than the limit;
//   - a stream that fails before the header is read gives the stream's
//     error, never a rejection (retrying could fix it), and a stream that
//     fails after it gives the same answer as a whole one.
func FuzzReadHeader(f *testing.F) {
	small := photo(3, 2)
	var jpg, pngb, gifb bytes.Buffer
	if err := jpeg.Encode(&jpg, small, nil); err != nil {
		f.Fatal(err)
	}
	if err := png.Encode(&pngb, small); err != nil {
		f.Fatal(err)
	}
	if err := gif.Encode(&gifb, small, nil); err != nil {
		f.Fatal(err)
	}
	for _, seed := range [][]byte{
		jpg.Bytes(),
		withOrientation(jpg.Bytes(), 6),
		pngb.Bytes(),
		gifb.Bytes(),
		bombPNG(30000, 30000),
		bombPNG(0, 10),
		bombPNG(1<<31, 1),
		jpg.Bytes()[:20],
		pngb.Bytes()[:16],
		gifb.Bytes()[:8],
		[]byte("\x89PNG\r\n\x1a\nnot really"),
		{0xFF, 0xD8, 0xFF, 0x00, 0x01, 0x02},
		[]byte("GIF89a"),
		[]byte("<html><body>hello</body></html>"),
		nil,
	} {
		for _, limit := range []uint32{0, 6, 5} {
			f.Add(seed, limit, uint16(0))
		}
		f.Add(seed, uint32(0), uint16(10))
	}
	f.Fuzz(func(t *testing.T, data []byte, limit uint32, failAt uint16) {
		l := Limits{MaxPixels: int64(limit)}
		cr := &countingReader{r: bytes.NewReader(data)}
		h, err := ReadHeader(cr, l)
		if cr.n > len(data) {
			t.Fatalf("read %d bytes of %d", cr.n, len(data))
		}
		checkHeader(t, data, l, h, err)

		if failAt == 0 {
			return
		}
		boom := errors.New("connection reset")
		cut := min(int(failAt), len(data))
		fh, ferr := ReadHeader(io.MultiReader(bytes.NewReader(data[:cut]), errReader{boom}), l)
		if errors.Is(ferr, boom) {
			if errors.As(ferr, new(*Rejection)) {
				t.Fatalf("stream error reported as a rejection: %v", ferr)
			}
			return
		}
		if fh != h || (ferr == nil) != (err == nil) || ferr != nil && ferr.Error() != err.Error() {
			t.Fatalf("stream failing at %d: %+v, %v; whole: %+v, %v", cut, fh, ferr, h, err)
		}
	})
}

func checkHeader(t *testing.T, data []byte, l Limits, h Header, err error) {
	t.Helper()
	cfg, _, cerr := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		var rej *Rejection
		if !errors.As(err, &rej) || rej.Message == "" {
			t.Fatalf("error %T %v, want a *Rejection", err, err)
		}
		switch {
		case errors.Is(err, ErrTooManyPixels):
			if cerr != nil || int64(cfg.Width)*int64(cfg.Height) <= l.maxPixels() {
				t.Fatalf("refused as too many pixels, but the file declares %dx%d (%v), limit %d", cfg.Width, cfg.Height, cerr, l.maxPixels())
			}
		case errors.Is(err, ErrNotImage):
		default:
			t.Fatalf("rejection %v wraps neither ErrNotImage nor ErrTooManyPixels", err)
		}
		return
	}
	if h.Format == "" || h.Format != sniff(data) {
		t.Fatalf("format %q, but the leading bytes say %q", h.Format, sniff(data))
	}
	if h.Width < 1 || h.Height < 1 || int64(h.Width)*int64(h.Height) > l.maxPixels() {
		t.Fatalf("accepted %dx%d under a limit of %d pixels", h.Width, h.Height, l.maxPixels())
	}
	if cerr != nil || cfg.Width != h.Width || cfg.Height != h.Height {
		t.Fatalf("header %dx%d, but the whole file reads as %dx%d (%v)", h.Width, h.Height, cfg.Width, cfg.Height, cerr)
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
