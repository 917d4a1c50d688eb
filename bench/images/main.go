// Command images benchmarks the image pipeline (activities/images.Process)
// against the baseline of running vipsthumbnail once per output.
//
//	go run ./bench/images -n 5
//
// It writes a 12-megapixel (4000×3000) photo-like JPEG to a temporary
// directory, then, N times each, interleaved:
//
//   - ours: Process on the file (8 outputs: 4 variants × {WebP, JPEG}),
//     CPU time from getrusage(RUSAGE_SELF) user+sys deltas, plus wall time;
//   - baseline: 8 vipsthumbnail invocations making the same 8 outputs, CPU
//     time from getrusage(RUSAGE_CHILDREN) user+sys deltas, plus wall time.
//
// One untimed warm-up of each comes first (libvips start-up, page cache).
// It prints the medians, the ratio ours/baseline (target ≤ 1.5), and peak
// RSS: this process's (getrusage Maxrss over the whole run; the fixture is
// written by a child) and the largest vipsthumbnail child's.
//
// -in FILE benchmarks another JPEG, PNG or GIF; -baseline=false skips
// vipsthumbnail (whose outputs are WebP and JPEG whatever the input).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"image"
	"image/color"
	_ "image/gif" // for -in
	"image/jpeg"
	_ "image/png" // for -in
	"log"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"time"

	"github.com/pressroom/pressroom/activities/images"
)

func main() {
	n := flag.Int("n", 5, "timed runs of each side")
	width := flag.Int("width", 4000, "fixture width")
	height := flag.Int("height", 3000, "fixture height")
	quality := flag.Int("quality", 92, "fixture JPEG quality")
	inFlag := flag.String("in", "", "benchmark this JPEG, PNG or GIF instead of the generated fixture")
	withBaseline := flag.Bool("baseline", true, "also run the vipsthumbnail baseline (its outputs are WebP and JPEG, whatever the input)")
	keep := flag.Bool("keep", false, "keep the temporary directory (fixture and baseline outputs)")
	fixture := flag.String("write-fixture", "", "internal: write the fixture to this path and exit")
	flag.Parse()
	log.SetFlags(0)
	if *fixture != "" {
		if err := writeFixture(*fixture, *width, *height, *quality); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *n < 1 {
		log.Fatal("-n must be at least 1")
	}

	vt := ""
	if *withBaseline {
		var err error
		if vt, err = exec.LookPath("vipsthumbnail"); err != nil {
			log.Fatal("vipsthumbnail not found: install libvips-tools, or pass -baseline=false")
		}
	}
	dir, err := os.MkdirTemp("", "pressroom-bench-images-")
	if err != nil {
		log.Fatal(err)
	}
	if *keep {
		fmt.Println("keeping", dir)
	} else {
		defer os.RemoveAll(dir)
	}

	in := filepath.Join(dir, "in.jpg")
	if *inFlag != "" {
		if in, err = filepath.Abs(*inFlag); err != nil {
			log.Fatal(err)
		}
	} else if err := generate(in, *width, *height, *quality); err != nil {
		log.Fatal(err)
	}
	cfg, format, err := imageConfig(in)
	if err != nil {
		log.Fatal(err)
	}
	st, err := os.Stat(in)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("input: %s, %d×%d (%.1f MP), %.2f MB %s\n", in, cfg.Width, cfg.Height,
		float64(cfg.Width*cfg.Height)/1e6, float64(st.Size())/1e6, format)
	fmt.Printf("machine: %s/%s, %d CPUs, %s; libvips concurrency %d (ours), vipsthumbnail default\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), images.Concurrency)
	rssBefore := maxRSS(syscall.RUSAGE_SELF)

	// Warm-up (untimed).
	res, err := ours(in)
	if err != nil {
		log.Fatal(err)
	}
	var ourBytes int
	for _, o := range res.Outputs {
		ourBytes += len(o.Data)
	}
	baseRSS := int64(-1)
	if *withBaseline {
		// The warm-up baseline runs under /usr/bin/time for each child's
		// peak RSS: the rusage of a child this process starts directly
		// would include this process's own RSS (Go starts children with
		// vfork semantics).
		if baseRSS, err = baseline(vt, in, dir, true); err != nil {
			log.Fatal(err)
		}
	}

	var oursCPU, oursWall, baseCPU, baseWall []time.Duration
	for range *n {
		c0, w0 := cpu(syscall.RUSAGE_SELF), time.Now()
		if _, err := ours(in); err != nil {
			log.Fatal(err)
		}
		oursWall = append(oursWall, time.Since(w0))
		oursCPU = append(oursCPU, cpu(syscall.RUSAGE_SELF)-c0)

		if !*withBaseline {
			continue
		}
		c0, w0 = cpu(syscall.RUSAGE_CHILDREN), time.Now()
		if _, err := baseline(vt, in, dir, false); err != nil {
			log.Fatal(err)
		}
		baseWall = append(baseWall, time.Since(w0))
		baseCPU = append(baseCPU, cpu(syscall.RUSAGE_CHILDREN)-c0)
	}

	fmt.Printf("runs: %d each (after 1 warm-up)\n", *n)
	fmt.Printf("ours     (Process, %d outputs):        CPU median %7.3fs  wall median %7.3fs  CPU runs %s\n",
		len(res.Outputs), median(oursCPU).Seconds(), median(oursWall).Seconds(), secs(oursCPU))
	if *withBaseline {
		var baseBytes int64
		for _, name := range outputNames() {
			if fi, err := os.Stat(filepath.Join(dir, name)); err == nil {
				baseBytes += fi.Size()
			}
		}
		fmt.Printf("baseline (8× vipsthumbnail):          CPU median %7.3fs  wall median %7.3fs  CPU runs %s\n",
			median(baseCPU).Seconds(), median(baseWall).Seconds(), secs(baseCPU))
		ratio := median(oursCPU).Seconds() / median(baseCPU).Seconds()
		verdict := "OK"
		if ratio > 1.5 {
			verdict = "OVER TARGET"
		}
		if format != "jpeg" {
			verdict += "; not like for like: the baseline writes JPEG, ours " + format
		}
		fmt.Printf("ratio ours/baseline CPU: %.2f (target ≤ 1.50: %s)\n", ratio, verdict)
		fmt.Printf("output bytes: ours %.2f MB, baseline %.2f MB\n", float64(ourBytes)/1e6, float64(baseBytes)/1e6)
	} else {
		fmt.Printf("output bytes: ours %.2f MB\n", float64(ourBytes)/1e6)
	}
	fmt.Printf("peak RSS: ours (whole process) %.1f MB (%.1f MB before the first Process); largest vipsthumbnail %s\n",
		mb(maxRSS(syscall.RUSAGE_SELF)), mb(rssBefore), rssString(baseRSS))
}

// generate writes the fixture from a child process (this program again), so
// encoding it does not count in this process's peak RSS.
func generate(path string, width, height, quality int) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	gen := exec.Command(self, "-write-fixture", path, "-width", fmt.Sprint(width),
		"-height", fmt.Sprint(height), "-quality", fmt.Sprint(quality))
	gen.Stdout, gen.Stderr = os.Stdout, os.Stderr
	if err := gen.Run(); err != nil {
		return fmt.Errorf("writing the fixture: %w", err)
	}
	return nil
}

func imageConfig(path string) (image.Config, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return image.Config{}, "", err
	}
	defer f.Close()
	return image.DecodeConfig(f)
}

func ours(in string) (images.Result, error) {
	return images.Process(in, images.Limits{}, nil)
}

// sizes are the pipeline's own variants, so that the baseline makes the
// same outputs with the same settings (WebP effort per variant included).
var sizes = images.Variants

func outputNames() []string {
	var names []string
	for _, s := range sizes {
		names = append(names, "out_"+s.Name+".webp", "out_"+s.Name+".jpg")
	}
	return names
}

// baseline makes the same 8 outputs with one vipsthumbnail per output. With
// measure, each runs under /usr/bin/time and the largest child's peak RSS is
// returned, in kilobytes (-1 when /usr/bin/time is missing).
func baseline(vt, in, dir string, measure bool) (int64, error) {
	peak := int64(-1)
	timeCmd, err := exec.LookPath("/usr/bin/time")
	measure = measure && err == nil
	for _, s := range sizes {
		for _, out := range []string{
			filepath.Join(dir, fmt.Sprintf("out_%s.webp[Q=75,effort=%d,strip]", s.Name, s.WebPEffort)),
			filepath.Join(dir, "out_"+s.Name+".jpg[Q=80,optimize_coding,strip]"),
		} {
			args := []string{vt, in, fmt.Sprintf("--size=%dx%d>", s.Size, s.Size), "-o", out}
			rssFile := filepath.Join(dir, "rss.txt")
			if measure {
				args = append([]string{timeCmd, "-f", "%M", "-o", rssFile}, args...)
			}
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Stderr = os.Stderr
			if err := cmd.Run(); err != nil {
				return 0, fmt.Errorf("%v: %w", cmd.Args, err)
			}
			if measure {
				b, err := os.ReadFile(rssFile)
				if err != nil {
					return 0, err
				}
				var kb int64
				if _, err := fmt.Sscan(string(b), &kb); err != nil {
					return 0, fmt.Errorf("reading %s: %w", rssFile, err)
				}
				peak = max(peak, kb)
			}
		}
	}
	return peak, nil
}

func cpu(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		log.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// maxRSS is getrusage's ru_maxrss, in kilobytes on Linux.
func maxRSS(who int) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		log.Fatal(err)
	}
	return ru.Maxrss
}

func mb(kb int64) float64 { return float64(kb) / 1024 }

func rssString(kb int64) string {
	if kb < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f MB", mb(kb))
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func secs(d []time.Duration) string {
	s := "["
	for i, x := range d {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%.3f", x.Seconds())
	}
	return s + "]"
}

// writeFixture encodes a procedural photo-like image: smooth gradients and
// soft shapes (so it compresses like a photo) plus per-pixel sensor-like
// noise. The pixels are computed on demand, so the fixture never sits in
// memory as a raster and does not inflate this process's peak RSS.
func writeFixture(path string, w, h, quality int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := jpeg.Encode(bw, procedural{w, h}, &jpeg.Options{Quality: quality}); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

type procedural struct{ w, h int }

func (p procedural) ColorModel() color.Model { return color.RGBAModel }
func (p procedural) Bounds() image.Rectangle { return image.Rect(0, 0, p.w, p.h) }

func (p procedural) At(x, y int) color.Color {
	fx, fy := float64(x)/float64(p.w), float64(y)/float64(p.h)
	// sky-to-ground gradient
	r := 70 + 120*fy
	g := 110 + 60*fx
	b := 200 - 130*fy
	// soft blobs and ripples, like out-of-focus shapes
	s := math.Sin(fx*9.3+math.Cos(fy*4.1)*2) * math.Cos(fy*7.7-fx*3)
	r += 40 * s
	g += 30 * math.Sin(fx*23+fy*17)
	b += 25 * s * math.Cos(fx*13)
	// texture: finer detail that varies across the frame
	t := math.Sin(float64(x)*0.21+math.Sin(float64(y)*0.05)*6) * 12 * fx
	// noise
	n := float64(hash(x, y)%33) - 16
	return color.RGBA{clamp(r + t + n), clamp(g + t + n*0.8), clamp(b + t + n*1.2), 255}
}

func hash(x, y int) uint32 {
	v := uint32(x)*0x9E3779B1 ^ uint32(y)*0x85EBCA77
	v ^= v >> 15
	v *= 0x2C1B3C6D
	v ^= v >> 12
	return v
}

func clamp(v float64) uint8 {
	return uint8(math.Max(0, math.Min(255, v)))
}
