package e2e

// Browser tests: headless Chromium (Debian's chromium package, which `make
// deps` installs) driven by chromedp, against the same system as every other
// e2e test. They prove what only a browser enforces: CORS, form behaviour,
// focus order, image decoding.

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumPath finds the browser: PRESSROOM_CHROMIUM, else Debian's
// chromium (or a Chrome) on PATH.
func chromiumPath() string {
	if p := os.Getenv("PRESSROOM_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser starts a headless Chromium for one test and returns its tab's
// context. Without Chromium the test skips, except in CI (CI set), where a
// missing browser is a failure: `make deps` installs it there. When the test
// fails, a screenshot and the page's HTML are written to the artifacts
// directory (PRESSROOM_TEST_ARTIFACTS, else a temporary one), named in the log.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		msg := "no Chromium found (looked for chromium, chromium-browser, google-chrome on PATH and PRESSROOM_CHROMIUM); install it with `make deps` (apt-get install chromium)"
		if ci := strings.ToLower(os.Getenv("CI")); ci != "" && ci != "0" && ci != "false" {
			t.Fatal(msg + "; CI is set, so browser tests must run")
		}
		t.Skip(msg)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1024, 768),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to sandbox as root
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithErrorf(func(string, ...any) {}))
	// Start the browser now, with no deadline: a timeout on the first run
	// would bound the browser's whole life (chromedp.Run).
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("start %s: %v", path, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			saveArtifacts(t, ctx)
		}
		cancel()
		cancelAlloc()
	})
	// One bound for everything the test does in the browser, generous for a
	// loaded machine.
	tctx, tcancel := context.WithTimeout(ctx, 4*time.Minute)
	t.Cleanup(tcancel)
	return tctx
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// saveArtifacts writes the page's screenshot and HTML where a person can
// look at them after the run.
func saveArtifacts(t *testing.T, ctx context.Context) {
	dir := os.Getenv("PRESSROOM_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "pressroom-browser-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("artifacts: %v", err)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	base := filepath.Join(dir, unsafeName.ReplaceAllString(t.Name(), "_"))
	if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(90)); err == nil {
		if err := os.WriteFile(base+".png", png, 0o644); err == nil {
			t.Logf("screenshot of the failing page: %s.png", base)
		}
	} else {
		t.Logf("screenshot: %v", err)
	}
	if html, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`)); err == nil {
		if err := os.WriteFile(base+".html", []byte(html), 0o644); err == nil {
			t.Logf("HTML of the failing page: %s.html", base)
		}
	}
}

// run runs browser steps, failing the test with what was being done.
func run(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("browser: %s: %v", what, err)
	}
}

// eval evaluates a script in the page (awaiting a promise) and decodes its result.
func eval[T any](t *testing.T, ctx context.Context, script string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](script, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("browser: evaluate %s: %v", firstLine(script), err)
	}
	return v
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + "…"
	}
	return s
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
