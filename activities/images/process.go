package images

/*
#cgo pkg-config: vips
#include <stdlib.h>
#include <vips/vips.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

// libvips' varargs entry points cannot be called from cgo, so each call we
// need has a fixed-argument wrapper here.

static int pr_init(int concurrency) {
#ifdef __GLIBC__
	// Keep freed image buffers from being hoarded by glibc malloc, unless the
	// operator has tuned it through the environment. By default glibc raises
	// its mmap threshold each time a big buffer is freed, after which such
	// buffers come from (and stay in) the heap arenas, and libvips' threads
	// spread over up to 8 arenas per core: RSS then ratchets up image after
	// image. A fixed threshold returns big buffers to the OS on free; two
	// arenas bound the fragmentation.
	if (!getenv("MALLOC_MMAP_THRESHOLD_"))
		mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	if (!getenv("MALLOC_ARENA_MAX"))
		mallopt(M_ARENA_MAX, 2);
#endif
	if (VIPS_INIT("pressroom"))
		return -1;
	// No operation cache: every call is used once, and a cache would hold
	// decoded images and open files between activities.
	vips_cache_set_max(0);
	vips_cache_set_max_mem(0);
	vips_cache_set_max_files(0);
	vips_concurrency_set(concurrency);
	// Refuse loaders libvips marks as unsafe for untrusted input (ImageMagick,
	// PDF, SVG, ...). Process also sniffs the magic number itself.
	vips_block_untrusted_set(TRUE);
	return 0;
}

// Lazy open: reads the header only; pixels are decoded on demand.
static VipsImage *pr_open(const char *path) {
	return vips_image_new_from_file(path,
		"access", VIPS_ACCESS_SEQUENTIAL,
		"fail_on", VIPS_FAIL_ON_TRUNCATED,
		NULL);
}

static int pr_orientation(VipsImage *im) {
	int o = 0;
	if (!vips_image_get_typeof(im, VIPS_META_ORIENTATION))
		return 0;
	if (vips_image_get_int(im, VIPS_META_ORIENTATION, &o))
		return 0;
	return o;
}

// The loader's nickname, e.g. "jpegload"; "" if unknown. Static or owned
// by im: do not free.
static const char *pr_loader(VipsImage *im) {
	const char *s = NULL;
	if (!vips_image_get_typeof(im, VIPS_META_LOADER) ||
		vips_image_get_string(im, VIPS_META_LOADER, &s))
		return "";
	return s;
}

static const char *pr_interpretation(VipsImage *im) {
	return vips_enum_nick(VIPS_TYPE_INTERPRETATION,
		vips_image_guess_interpretation(im));
}

// An embedded ICC profile, which outputs would lose when stripped.
static int pr_has_profile(VipsImage *im) {
	return vips_image_get_typeof(im, VIPS_META_ICC_NAME) != 0;
}

// Largest variant, straight from the file: shrink-on-load where the format
// has it, auto-rotation per EXIF, sequential access, never upscaled. With
// to_srgb, pixels are transformed to sRGB (from the embedded profile, or
// libvips' fallback CMYK profile) so stripping the profile keeps colours.
static int pr_thumbnail_file(const char *path, VipsImage **out, int size, int to_srgb) {
	if (to_srgb)
		return vips_thumbnail(path, out, size,
			"height", size,
			"size", VIPS_SIZE_DOWN,
			"fail_on", VIPS_FAIL_ON_TRUNCATED,
			"export_profile", "srgb",
			NULL);
	return vips_thumbnail(path, out, size,
		"height", size,
		"size", VIPS_SIZE_DOWN,
		"fail_on", VIPS_FAIL_ON_TRUNCATED,
		NULL);
}

// Smaller variants, from an in-memory larger one (already upright).
//
// 8-bit images without alpha, in sRGB or greyscale (photographs, nearly
// every upload) are reduced with vips_resize and a cubic (Catmull-Rom)
// kernel, at the scale vips_thumbnail_image would use, so the same size.
// libvips 8.14's reducers are scalar C per tap: lanczos3 has 6 taps per
// unit of reduction against cubic's 4, and the 1600 -> 1280 reduction of a
// 2 MP photo costs 33 ms with lanczos3 against 23 ms with cubic. The two
// differ by 42-50 dB PSNR (SSIM >= 0.995) on photographs, far below what
// the encoders then lose (WebP q75: about 37 dB): docs/images.md. Anything
// else (alpha, which must be premultiplied around the reduction; 16-bit;
// other colour spaces) goes through vips_thumbnail_image, which handles it.
static int pr_thumbnail_image(VipsImage *in, VipsImage **out, int size) {
	int w = vips_image_get_width(in), h = vips_image_get_height(in);
	VipsInterpretation i = vips_image_get_interpretation(in);
	if (vips_image_get_format(in) == VIPS_FORMAT_UCHAR &&
		!vips_image_hasalpha(in) &&
		(i == VIPS_INTERPRETATION_sRGB || i == VIPS_INTERPRETATION_B_W) &&
		VIPS_MAX(w, h) > size) {
		// vips_thumbnail_image's shrink: the long edge over the target,
		// the same factor on both axes.
		double shrink = (double) VIPS_MAX(w, h) / size;
		return vips_resize(in, out, 1.0 / shrink,
			"kernel", VIPS_KERNEL_CUBIC,
			NULL);
	}
	return vips_thumbnail_image(in, out, size,
		"height", size,
		"size", VIPS_SIZE_DOWN,
		"no_rotate", TRUE,
		NULL);
}

enum { PR_WEBP, PR_JPEG, PR_PNG, PR_GIF };

// Encoder settings for web pages (docs/images.md, "Encoder settings"):
// WebP q75, at the effort the variant's VariantSpec gives (0 for the large
// ones, 2 for the small ones); JPEG q80 with optimised Huffman tables (a
// quarter fewer bytes for a few per cent more CPU), baseline (not
// progressive).
#define PR_WEBP_Q 75
#define PR_JPEG_Q 80

static int pr_save(VipsImage *in, int format, int webp_effort, void **buf, size_t *len) {
	switch (format) {
	case PR_WEBP:
		return vips_webpsave_buffer(in, buf, len, "Q", PR_WEBP_Q, "effort", webp_effort, "strip", TRUE, NULL);
	case PR_JPEG:
		return vips_jpegsave_buffer(in, buf, len, "Q", PR_JPEG_Q, "optimize_coding", TRUE, "strip", TRUE, NULL);
	case PR_PNG:
		return vips_pngsave_buffer(in, buf, len, "compression", 6, "strip", TRUE, NULL);
	case PR_GIF:
		return vips_gifsave_buffer(in, buf, len, "strip", TRUE, NULL);
	}
	vips_error("pressroom", "unknown output format %d", format);
	return -1;
}

// Give memory freed at the end of an image back to the OS (glibc keeps
// free pages inside its arenas otherwise).
static void pr_trim(void) {
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}

static void pr_unref(VipsImage *im) {
	if (im)
		g_object_unref(im);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"
)

// Concurrency is the number of libvips worker threads per pipeline. It is 1:
// the worker runs several activities at once on a 2-core machine, so
// parallelism comes from running images side by side, and one thread per
// image keeps CPU use and per-thread buffers proportional to the number of
// activities instead of multiplying them (2 activities × 2 threads would
// oversubscribe 2 cores and double the region buffers for no throughput).
// One image alone takes longer in wall time than it would with 2 threads.
const Concurrency = 1

// VariantSpec names a variant and the size of its long edge in pixels, and
// the libwebp effort (method, 0-6) its WebP output is encoded with.
type VariantSpec struct {
	Name       string
	Size       int
	WebPEffort int
}

// Variants are the sizes every image is rendered at (long edge, never
// upscaled).
//
// WebP effort 0 for medium and large, 2 for small and thumb: at effort 2
// libwebp's encoder was half of an upload's CPU, nearly all of it in the
// two large variants (for a 1600×1200 photo 77 and 46 ms; at effort 0, 40
// and 23 ms). At the same quality setting effort 0 gives the same SSIM for
// 14-17 % more bytes on photographs (docs/images.md, "Encoder settings").
// The small variants cost a few milliseconds at effort 2, and thumbnails
// are what listings serve by the dozen, so they keep the smaller bytes.
var Variants = []VariantSpec{
	{Name: "thumb", Size: 256, WebPEffort: 2},
	{Name: "small", Size: 640, WebPEffort: 2},
	{Name: "medium", Size: 1280, WebPEffort: 0},
	{Name: "large", Size: 2048, WebPEffort: 0},
}

// Output is one encoded variant.
type Output struct {
	Name          string // "thumb", ...
	Format        string // "webp" or the original format ("jpeg","png","gif")
	ContentType   string // "image/webp", "image/jpeg", ...
	Width, Height int
	Data          []byte
}

// Result describes the processed image and carries its outputs.
type Result struct {
	Width, Height int // of the image as displayed (after auto-orientation)
	Format        string
	Orientation   int      // EXIF orientation 1..8 (1 when absent)
	HasAlpha      bool     // of the original
	ColourSpace   string   // libvips interpretation of the original, e.g. "srgb", "b-w", "cmyk"
	Outputs       []Output // for each variant: webp, then the original format
}

var (
	initOnce sync.Once
	initErr  error
)

func vipsInit() error {
	initOnce.Do(func() {
		if C.pr_init(C.int(Concurrency)) != 0 {
			initErr = fmt.Errorf("images: starting libvips: %s", vipsError())
		}
	})
	return initErr
}

// vipsError returns and clears libvips' error buffer. The buffer is
// process-wide, so under concurrency it may also hold another call's text.
func vipsError() string {
	s := strings.TrimSpace(C.GoString(C.vips_error_buffer()))
	C.vips_error_clear()
	if s == "" {
		s = "unknown libvips error"
	}
	return s
}

// damaged is the rejection for a file whose pixels cannot be decoded; the
// libvips text is kept as the cause's detail, for logs.
func damaged() error {
	return reject(fmt.Errorf("%w: %s", ErrDamaged, vipsError()), "the image is damaged or truncated")
}

var saveFormats = map[string]C.int{"webp": C.PR_WEBP, "jpeg": C.PR_JPEG, "png": C.PR_PNG, "gif": C.PR_GIF}

var contentTypes = map[string]string{"webp": "image/webp", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif"}

// Process decodes the JPEG, PNG or GIF at path once, auto-orients it and
// encodes every variant as WebP and in the original format (JPEG q80 with
// optimised Huffman tables, PNG compression 6, GIF; WebP q75 at each variant's effort;
// metadata stripped), in Variants order, webp
// first. Variants are never upscaled: one larger than the image is emitted
// at the image's size, sharing (not copying) the Data of the first such
// variant, so treat Data as read-only. Images with an ICC profile, and CMYK
// ones, are transformed to sRGB. Animated GIFs yield their first frame.
//
// The caller should have called ReadHeader; Process checks the pixel limit
// again from libvips' own reading of the header before decoding anything.
// Images over the limit, files that are not JPEG/PNG/GIF and files whose
// pixels are damaged or truncated give a *Rejection; other errors (the file
// cannot be opened, an encoder fails) are plain errors with libvips' text.
//
// heartbeat (may be nil) is called after decoding and after each output
// (once for a variant that shares another's bytes).
// Process is safe for concurrent use; each call runs one libvips thread.
func Process(path string, l Limits, heartbeat func()) (Result, error) {
	if heartbeat == nil {
		heartbeat = func() {}
	}
	if strings.HasSuffix(path, "]") {
		// libvips would read "name[opts]" as loader options.
		return Result{}, fmt.Errorf("images: path %q must not end in ']'", path)
	}
	format, err := sniffFile(path)
	if err != nil {
		return Result{}, err
	}
	if err := vipsInit(); err != nil {
		return Result{}, err
	}

	// libvips keeps some state per OS thread (buffers, and it is where
	// vips_thread_shutdown frees them): stay on one thread for the call.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer C.pr_trim()
	defer C.vips_thread_shutdown()

	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))

	res, toSRGB, err := inspect(cpath, format, l)
	if err != nil {
		return Result{}, err
	}

	largest := 0
	for _, v := range Variants {
		largest = max(largest, v.Size)
	}
	var thumb *C.VipsImage
	if C.pr_thumbnail_file(cpath, &thumb, C.int(largest), toSRGB) != 0 {
		return Result{}, damaged()
	}
	// Decode once: the only pass over the file's pixels happens here.
	mem := C.vips_image_copy_memory(thumb)
	C.pr_unref(thumb)
	if mem == nil {
		return Result{}, damaged()
	}
	defer C.pr_unref(mem)
	heartbeat()

	outs, err := encodeVariants(mem, path, format, res, toSRGB, heartbeat)
	if err != nil {
		return Result{}, err
	}
	for _, o := range outs {
		res.Outputs = append(res.Outputs, o...)
	}
	return res, nil
}

// longSide is the length of an image's longer side, in pixels.
func longSide(im *C.VipsImage) int {
	return int(max(C.vips_image_get_width(im), C.vips_image_get_height(im)))
}

// encodeVariants encodes every variant of mem, the decoded image, in
// Variants order; path, format, res and toSRGB are what Process read of
// the file.
//
// Variants are made largest first, each from the smallest image already
// in memory that is at least twice its size (else from the decoded
// image): a 640 from the 1280 rather than from a 2048, a 256 from the
// 640. A lanczos3 reduction of an image that was itself reduced with
// lanczos3 differs from the direct one by less than the encoders' own
// loss (above 50 dB PSNR against about 37 dB for WebP q75), and it reads
// a quarter of the pixels or fewer. Each derived variant is copied into
// memory once: both encoders and the next variant read it, and a lazy
// image would be resized again for each of them.
func encodeVariants(mem *C.VipsImage, path, format string, res Result, toSRGB C.int, heartbeat func()) ([][]Output, error) {
	derived := []*C.VipsImage{} // in memory, largest first
	defer func() {
		for _, im := range derived {
			C.pr_unref(im)
		}
	}()
	outs := make([][]Output, len(Variants))
	var unscaled []Output // the outputs encoded from mem itself
	for _, i := range largestFirst() {
		v := Variants[i]
		if longSide(mem) <= v.Size {
			// Not downscaled: the same pixels as an earlier unscaled
			// variant, if there was one, so share its bytes.
			if unscaled != nil {
				for _, o := range unscaled {
					o.Name = v.Name
					outs[i] = append(outs[i], o)
				}
				heartbeat()
				continue
			}
			o, err := encodeUnscaled(mem, v, path, format, res, toSRGB, heartbeat)
			if err != nil {
				return nil, err
			}
			outs[i], unscaled = o, o
			continue
		}
		src := mem
		for _, im := range derived {
			if longSide(im) >= 2*v.Size {
				src = im
			}
		}
		im, err := resizeInMemory(src, v)
		if err != nil {
			return nil, err
		}
		derived = append(derived, im)
		if outs[i], err = encodeVariant(im, v, format, nil, heartbeat); err != nil {
			return nil, err
		}
	}
	return outs, nil
}

// encodeUnscaled encodes mem, the decoded image, for the first variant v
// at least its size: encoded once for every variant it stands for, with
// the highest effort among them, so that a small image's "small" and
// "thumb" keep their smaller WebP bytes.
func encodeUnscaled(mem *C.VipsImage, v VariantSpec, path, format string, res Result, toSRGB C.int, heartbeat func()) ([]Output, error) {
	shared := v
	for _, w := range Variants {
		if w.Size >= longSide(mem) {
			shared.WebPEffort = max(shared.WebPEffort, w.WebPEffort)
		}
	}
	// A JPEG served at its own size needs no re-encode when the
	// file is already what one would give (jpegcopy.go): upright,
	// no colour profile to apply, baseline 4:2:0 at q80 or lower.
	// It is stored stripped of metadata, with the same pixels.
	var reuse []byte
	if format == "jpeg" && res.Orientation == 1 && toSRGB == 0 && longSide(mem) == max(res.Width, res.Height) {
		if data, err := os.ReadFile(path); err == nil {
			if stripped, ok := strippedJPEG(data); ok {
				reuse = stripped
			}
		}
	}
	return encodeVariant(mem, shared, format, reuse, heartbeat)
}

// resizeInMemory resizes src to variant v and copies the result into
// memory; the caller unrefs it.
func resizeInMemory(src *C.VipsImage, v VariantSpec) (*C.VipsImage, error) {
	var lazy *C.VipsImage
	if C.pr_thumbnail_image(src, &lazy, C.int(v.Size)) != 0 {
		return nil, fmt.Errorf("images: resizing to %s: %s", v.Name, vipsError())
	}
	im := C.vips_image_copy_memory(lazy)
	C.pr_unref(lazy)
	if im == nil {
		return nil, fmt.Errorf("images: resizing to %s: %s", v.Name, vipsError())
	}
	return im, nil
}

// largestFirst returns the indices of Variants by decreasing size.
func largestFirst() []int {
	order := make([]int, len(Variants))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return Variants[b].Size - Variants[a].Size })
	return order
}

// encodeVariant encodes im as WebP and in the original format, or, when
// reuse is not nil, takes reuse (the original file's bytes, stripped) as
// the original-format output.
func encodeVariant(im *C.VipsImage, v VariantSpec, format string, reuse []byte, heartbeat func()) ([]Output, error) {
	outs := make([]Output, 0, 2)
	for _, f := range []string{"webp", format} {
		var out Output
		var err error
		if f == format && reuse != nil {
			out = Output{Format: f, ContentType: contentTypes[f], Data: reuse,
				Width: int(C.vips_image_get_width(im)), Height: int(C.vips_image_get_height(im))}
		} else if out, err = encode(im, f, v.WebPEffort); err != nil {
			return nil, fmt.Errorf("images: encoding %s as %s: %w", v.Name, f, err)
		}
		out.Name = v.Name
		outs = append(outs, out)
		heartbeat()
	}
	return outs, nil
}

// inspect opens the file lazily (header only), checks the loader and the
// pixel limit, and reads what Result reports about the original. toSRGB
// says whether its colours need transforming to sRGB (an embedded profile,
// or CMYK).
func inspect(cpath *C.char, format string, l Limits) (res Result, toSRGB C.int, err error) {
	im := C.pr_open(cpath)
	if im == nil {
		return Result{}, 0, invalidFormat(format, errors.New(vipsError()))
	}
	defer C.pr_unref(im)
	if loader := C.GoString(C.pr_loader(im)); !strings.HasPrefix(loader, format+"load") {
		return Result{}, 0, invalidFormat(format, fmt.Errorf("libvips loader %q", loader))
	}
	w, h := int(C.vips_image_get_width(im)), int(C.vips_image_get_height(im))
	if err := checkPixels(format, w, h, l); err != nil {
		return Result{}, 0, err
	}
	orientation := int(C.pr_orientation(im))
	if orientation < 1 || orientation > 8 {
		orientation = 1
	}
	if orientation >= 5 { // 5..8 turn the image a quarter
		w, h = h, w
	}
	res = Result{
		Width: w, Height: h,
		Format:      format,
		Orientation: orientation,
		HasAlpha:    C.vips_image_hasalpha(im) != 0,
		ColourSpace: C.GoString(C.pr_interpretation(im)),
	}
	if C.pr_has_profile(im) != 0 || res.ColourSpace == "cmyk" {
		toSRGB = 1
	}
	return res, toSRGB, nil
}

func encode(im *C.VipsImage, format string, webpEffort int) (Output, error) {
	var buf unsafe.Pointer
	var n C.size_t
	if C.pr_save(im, saveFormats[format], C.int(webpEffort), &buf, &n) != 0 {
		if buf != nil {
			C.g_free(C.gpointer(buf))
		}
		return Output{}, errors.New(vipsError())
	}
	data := C.GoBytes(buf, C.int(n))
	C.g_free(C.gpointer(buf))
	return Output{
		Format:      format,
		ContentType: contentTypes[format],
		Width:       int(C.vips_image_get_width(im)),
		Height:      int(C.vips_image_get_height(im)),
		Data:        data,
	}, nil
}

// sniffFile reads the magic number, so only the JPEG, PNG and GIF loaders
// ever see the file. Errors opening or reading it are returned as they are.
func sniffFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("images: %w", err)
	}
	defer f.Close()
	var lead [8]byte
	n, err := io.ReadFull(f, lead[:])
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return "", fmt.Errorf("images: reading %s: %w", path, err)
	}
	format := sniff(lead[:n])
	if format == "" {
		return "", notImage(nil)
	}
	return format, nil
}
