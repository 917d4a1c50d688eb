package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/testsupport"
)

// The TypeScript client (clients/typescript) is built from the API's own
// description: `npm ci` (skipped while package-lock.json is unchanged since
// the last one), the description /openapi.json serves (as
// `go run ./dev/cmd/openapi` prints it, built from this checkout), openapi-typescript,
// `tsc --strict --noEmit` over the client, its example and its type checks,
// and esbuild's bundle of the example page. Once per test binary: both
// tests below share it.
var tsBuild struct {
	once sync.Once
	dir  string
	err  error
}

// typescriptClient builds clients/typescript and returns its directory.
// Without node and npm the test skips, except in CI (CI set), where they
// must be there (`make deps` installs them).
func typescriptClient(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			msg := tool + " is not installed (make deps installs nodejs and npm)"
			if ci := strings.ToLower(os.Getenv("CI")); ci != "" && ci != "0" && ci != "false" {
				t.Fatal(msg + "; CI is set, so the TypeScript client must be checked")
			}
			t.Skip(msg)
		}
	}
	tsBuild.once.Do(func() {
		tsBuild.dir = filepath.Join(testsupport.RepoRoot(t), "clients", "typescript")
		tsBuild.err = buildTypeScript(tsBuild.dir)
	})
	if tsBuild.err != nil {
		t.Fatal(tsBuild.err)
	}
	return tsBuild.dir
}

func buildTypeScript(dir string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := npmCI(ctx, dir); err != nil {
		return err
	}
	gen := exec.CommandContext(ctx, "go", "run", "./dev/cmd/openapi")
	gen.Dir = filepath.Join(dir, "..", "..")
	spec, err := gen.Output()
	if err != nil {
		return fmt.Errorf("go run ./dev/cmd/openapi: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "openapi.json"), spec, 0o644); err != nil {
		return err
	}
	for _, script := range []string{"generate", "check", "bundle"} {
		if out, err := npm(ctx, dir, "run", "--silent", script); err != nil {
			return fmt.Errorf("clients/typescript: npm run %s: %v\n%s", script, err, out)
		}
	}
	return nil
}

// npmCI installs the pinned packages unless the last install was of this
// very package-lock.json (its hash is kept in node_modules).
func npmCI(ctx context.Context, dir string) error {
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return err
	}
	sum := sha256.Sum256(lock)
	stamp := filepath.Join(dir, "node_modules", ".pressroom-lock-sha256")
	if was, err := os.ReadFile(stamp); err == nil && string(was) == hex.EncodeToString(sum[:]) {
		return nil
	}
	if out, err := npm(ctx, dir, "ci", "--no-audit", "--no-fund"); err != nil {
		return fmt.Errorf("clients/typescript: npm ci: %v\n%s", err, out)
	}
	return os.WriteFile(stamp, []byte(hex.EncodeToString(sum[:])), 0o644)
}

func npm(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "npm", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
	return cmd.CombinedOutput()
}

// TestTypeScriptClientCompiles: the client, its example page and its type
// checks (clients/typescript/test/typecheck.ts, whose @ts-expect-error
// lines prove the types come from the description) pass `tsc --strict`
// against types generated from this API's description.
func TestTypeScriptClientCompiles(t *testing.T) {
	t.Parallel()
	dir := typescriptClient(t)
	for _, f := range []string{"src/generated/schema.ts", "dist/example.js"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the build left no %s: %v", f, err)
		}
	}
}

// tsPublished is what the example's run reports (Published in
// clients/typescript/example/browser.ts).
type tsPublished struct {
	PageID         string `json:"pageId"`
	Path           string `json:"path"`
	RevisionID     string `json:"revisionId"`
	RevisionStatus string `json:"revisionStatus"`
	AssetID        string `json:"assetId"`
}

// TestBrowserTypeScriptClient runs the client's example page in Chromium,
// served from an origin of its own (another port, listed in the API's CORS
// origins), with a public OAuth client registered for its /callback: it
// signs in with the authorization code flow and PKCE through the API's
// login form, uploads an image, drafts a page with the image on it, and
// publishes it. The API then serves the page live.
func TestBrowserTypeScriptClient(t *testing.T) {
	t.Parallel()
	dir := typescriptClient(t)
	ctx := browser(t)
	var cfg []byte
	page := http.NewServeMux()
	html := func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join(dir, "example", "index.html"))
	}
	page.HandleFunc("GET /{$}", html)
	page.HandleFunc("GET /callback", html)
	page.HandleFunc("GET /example.js", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join(dir, "dist", "example.js"))
	})
	page.HandleFunc("GET /config.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(cfg)
	})
	srv := httptest.NewServer(page)
	t.Cleanup(srv.Close)
	front := srv.URL
	s := start(t, func(c *config.Config) { c.CORSOrigins = []string{front} })
	clientID, _, err := models.NewOAuthClient(context.Background(), s.DB, nil, "TypeScript example", false, []string{front + "/callback"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ = json.Marshal(map[string]string{"api": s.URL, "clientId": clientID})

	file := filepath.Join(t.TempDir(), "harbour.png")
	if err := os.WriteFile(file, pngFile(t, 640, 480), 0o600); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "open the example and sign in", chromedp.Navigate(front), chromedp.WaitVisible(chromedp.ID("sign-in")),
		chromedp.Click(chromedp.ID("sign-in")), chromedp.WaitVisible(chromedp.ID("username")),
		chromedp.SendKeys(chromedp.ID("username"), "editor@demo.test"),
		chromedp.SendKeys(chromedp.ID("password"), password),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)))
	run(t, ctx, "come back signed in, then upload and publish", chromedp.WaitVisible(chromedp.ID("image")),
		chromedp.SetUploadFiles(chromedp.ID("image"), []string{file}),
		chromedp.Click(chromedp.CSS(`#publish button[type=submit]`)))
	got := eval[tsPublished](t, ctx, `window.pressroomExample.lastRun`)
	t.Logf("the page published %+v", got)

	token := s.token(t, "editor@demo.test")
	live := s.call(t, token, http.MethodGet, "/pages/"+got.PageID, nil)
	if live.Status != 200 || live.resource(t).Attributes["path"] != got.Path || !strings.HasPrefix(got.Path, "/harbour-") {
		t.Fatalf("GET /pages/%s = %d %s; the page said its path is %q", got.PageID, live.Status, live.Raw, got.Path)
	}
	rev := s.call(t, token, http.MethodGet, "/revisions/"+got.RevisionID, nil).resource(t)
	if rev.Attributes["status"] != "published" || rev.Attributes["versions-count"] != float64(3) {
		t.Errorf("revision = %v, want published with 3 versions (page, content, block)", rev.Attributes)
	}
	blocks := s.call(t, token, http.MethodGet, "/content-blocks", nil)
	if !bytes.Contains(blocks.Raw, []byte(`"id":"`+got.AssetID+`"`)) {
		t.Errorf("no live content block shows the asset %s: %s", got.AssetID, blocks.Raw)
	}
}
