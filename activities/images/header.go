// Package images turns an uploaded JPEG, PNG or GIF into the variants the
// site serves (DESIGN.md §5): it checks the header against a pixel limit
// before anything is decoded, decodes the file once with libvips (through
// cgo, no third-party Go bindings), auto-orients it, and encodes each
// variant as WebP and in the original format.
//
// The only global state is libvips' own, initialised once on first use,
// together with glibc malloc tuning unless the environment sets it (see
// docs/images.md). Failures retrying cannot fix are returned as *Rejection,
// with a message a person can act on; every other error is transient or a
// bug.
package images

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"image"
	_ "image/gif"  // registers "gif" with image.DecodeConfig
	_ "image/jpeg" // registers "jpeg" with image.DecodeConfig
	_ "image/png"  // registers "png" with image.DecodeConfig
	"io"
	"strconv"
)

// DefaultMaxPixels is the pixel limit used when Limits.MaxPixels is zero or
// negative: 50 megapixels.
const DefaultMaxPixels int64 = 50_000_000

// Limits bound the work one image may cause.
type Limits struct {
	MaxPixels int64 // default 50_000_000 (50 megapixels)
}

func (l Limits) maxPixels() int64 {
	if l.MaxPixels <= 0 {
		return DefaultMaxPixels
	}
	return l.MaxPixels
}

// Header is what is known from a file's header without decoding pixels.
type Header struct {
	Format        string // "jpeg", "png", "gif" (the asset-types format keys)
	Width, Height int    // as stored (before EXIF orientation)
}

// Sentinel causes wrapped by *Rejection; test with errors.Is.
var (
	// ErrTooManyPixels: the header declares more pixels than Limits allow.
	ErrTooManyPixels = errors.New("image has too many pixels")
	// ErrNotImage: the bytes are not a JPEG, PNG or GIF, or its header is invalid.
	ErrNotImage = errors.New("not a valid image")
	// ErrDamaged: the header is fine but the pixel data cannot be decoded.
	ErrDamaged = errors.New("image is damaged or truncated")
)

// Rejection is a failure retrying cannot fix, with a message a person can
// act on. It wraps one of ErrTooManyPixels, ErrNotImage or ErrDamaged (plus
// any technical detail, for logs), so errors.Is works through it.
type Rejection struct {
	Message string
	cause   error
}

func (r *Rejection) Error() string { return r.Message }

// Unwrap returns the cause: a sentinel above, possibly with detail.
func (r *Rejection) Unwrap() error { return r.cause }

func reject(cause error, format string, args ...any) *Rejection {
	return &Rejection{Message: fmt.Sprintf(format, args...), cause: cause}
}

// formatTitles are the names used in messages, keyed by format key.
var formatTitles = map[string]string{"jpeg": "JPEG", "png": "PNG", "gif": "GIF"}

// sniff names the format from the leading bytes (the same magic numbers as
// the asset types table), or returns "".
func sniff(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte{0xFF, 0xD8, 0xFF}):
		return "jpeg"
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return "png"
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return "gif"
	}
	return ""
}

func notImage(detail error) *Rejection {
	cause := ErrNotImage
	if detail != nil {
		cause = fmt.Errorf("%w: %v", ErrNotImage, detail)
	}
	return reject(cause, "the file is not a JPEG, PNG or GIF image")
}

func invalidFormat(format string, detail error) *Rejection {
	return reject(fmt.Errorf("%w: %v", ErrNotImage, detail),
		"the file is not a valid %s image", formatTitles[format])
}

// checkPixels returns a *Rejection wrapping ErrTooManyPixels when w×h is
// over the limit (or either side is not positive).
func checkPixels(format string, w, h int, l Limits) error {
	if w <= 0 || h <= 0 {
		return invalidFormat(format, fmt.Errorf("dimensions %dx%d", w, h))
	}
	max := l.maxPixels()
	if int64(w)*int64(h) > max {
		return reject(ErrTooManyPixels, "the image is %d×%d pixels; the limit is %s", w, h, pixelCount(max))
	}
	return nil
}

// pixelCount says n the way a person would: "50 megapixels", "2.5
// megapixels", "1000 pixels".
func pixelCount(n int64) string {
	switch {
	case n == 1_000_000:
		return "1 megapixel"
	case n%1_000_000 == 0:
		return strconv.FormatInt(n/1_000_000, 10) + " megapixels"
	case n >= 1_000_000:
		return strconv.FormatFloat(float64(n)/1e6, 'f', -1, 64) + " megapixels"
	}
	return strconv.FormatInt(n, 10) + " pixels"
}

// ReadHeader reads only the header (with the standard library's
// image.DecodeConfig) and checks it against the limits. Nothing is decoded:
// a PNG declaring 30000×30000 pixels is refused after reading at most 512
// bytes, allocating about 2 KB. It returns a *Rejection wrapping
// ErrTooManyPixels when Width*Height > MaxPixels, and one wrapping
// ErrNotImage when the bytes are not a valid JPEG, PNG or GIF header.
// Errors reading r are returned as they are (they may be transient).
func ReadHeader(r io.Reader, l Limits) (Header, error) {
	rr := &recordingReader{r: r}
	br := bufio.NewReaderSize(rr, 512)
	lead, _ := br.Peek(8)
	if rr.err != nil {
		return Header{}, rr.err
	}
	format := sniff(lead)
	if format == "" {
		return Header{}, notImage(nil)
	}
	cfg, name, err := image.DecodeConfig(br)
	if rr.err != nil {
		return Header{}, rr.err
	}
	if err != nil {
		return Header{}, invalidFormat(format, err)
	}
	if name != format {
		return Header{}, invalidFormat(format, fmt.Errorf("decoded as %q", name))
	}
	h := Header{Format: format, Width: cfg.Width, Height: cfg.Height}
	if err := checkPixels(format, h.Width, h.Height, l); err != nil {
		return Header{}, err
	}
	return h, nil
}

// recordingReader remembers the first error from the underlying reader other
// than io.EOF, so ReadHeader can tell "the stream failed" (perhaps
// transiently: return it as it is) from "the bytes are wrong" (reject).
type recordingReader struct {
	r   io.Reader
	err error
}

func (rr *recordingReader) Read(p []byte) (int, error) {
	n, err := rr.r.Read(p)
	if err != nil && err != io.EOF && rr.err == nil {
		rr.err = err
	}
	return n, err
}
