package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // image.DecodeConfig of the asset
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pressroom/pressroom/auth"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/testsupport"
)

// The editor's commands (pressroom upload, publish, login) run as the
// built binary against the test's API, the way an editor runs them.

// pressroomCLI runs the built binary with an environment of its own: the
// API URL, and a configuration directory private to the test.
type pressroomCLI struct {
	bin, api, configHome string
	env                  []string
}

func newPressroomCLI(t *testing.T, bin, api string, env ...string) *pressroomCLI {
	return &pressroomCLI{bin: bin, api: api, configHome: t.TempDir(), env: env}
}

func (c *pressroomCLI) command(args ...string) *exec.Cmd {
	cmd := exec.Command(c.bin, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + c.configHome, "XDG_CONFIG_HOME=" + c.configHome,
		"PRESSROOM_API_URL=" + c.api}, c.env...)
	return cmd
}

// expect runs the binary without input, fails the test unless it exits
// with want, and returns stdout and stderr together.
func (c *pressroomCLI) expect(t *testing.T, want int, args ...string) string {
	t.Helper()
	stdout, stderr, code := c.run(t, "", args...)
	if code != want {
		t.Fatalf("pressroom %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, stdout, stderr)
	}
	return stdout + stderr
}

// run runs the binary and returns stdout, stderr and the exit code.
func (c *pressroomCLI) run(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := c.command(args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("pressroom %s: %v", strings.Join(args, " "), err)
		}
		return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
	case <-time.After(3 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("pressroom %s did not end within 3 minutes; stderr:\n%s", strings.Join(args, " "), stderr.String())
	}
	return "", "", -1
}

func TestCLIUploadAndPublishWithToken(t *testing.T) {
	t.Parallel()
	build := testsupport.BuildPressroom(t) // in the background, while the system starts
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	c := newPressroomCLI(t, build(), s.URL, "PRESSROOM_TOKEN="+e.token)

	dir := t.TempDir()
	photo := filepath.Join(dir, "harbour.jpg")
	if err := os.WriteFile(photo, jpegFile(t, 640, 480), 0o644); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("not an image\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.jpg")
	report := filepath.Join(dir, "report.pdf")
	if err := os.WriteFile(report, []byte("%PDF-1.7\n%âãÏÓ\n1 0 obj\n<<>>\nendobj\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("upload", func(t *testing.T) {
		stdout, stderr, code := c.run(t, "", "upload", photo, missing, notes, report)
		t.Logf("pressroom upload:\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
		if code != 1 {
			t.Errorf("exit code %d with three bad files, want 1\nstderr:\n%s", code, stderr)
		}
		for _, want := range []string{
			"[1/4] " + photo + ": uploading",
			"[1/4] " + photo + ": processing",
			"[1/4] " + photo + ": finished",
			"[2/4] " + missing + ": failed: cannot read the file",
			// In plain words, from the API's GET /asset-types.
			"[3/4] " + notes + ": failed: this file looks like a text file, not an image: Pressroom accepts JPEG, PNG and GIF\n",
			"[4/4] " + report + ": failed: this file looks like a PDF, not an image: Pressroom accepts JPEG, PNG and GIF\n",
			"some files failed: 3 of 4",
		} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		}
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		if len(lines) != 1 || !strings.HasPrefix(lines[0], photo+"\t") {
			t.Fatalf("stdout = %q; want one line: the photo and its URL", stdout)
		}
		assetURL := strings.TrimPrefix(lines[0], photo+"\t")
		resp, err := http.Get(assetURL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		cfg, format, err := image.DecodeConfig(resp.Body)
		if resp.StatusCode != 200 || err != nil || format != "jpeg" || cfg.Width != 640 || cfg.Height != 480 {
			t.Errorf("GET %s = %d, %s %dx%d, %v; want the 640×480 JPEG", assetURL, resp.StatusCode, format, cfg.Width, cfg.Height, err)
		}
		// The upload is the site's, recorded with the CLI's user agent.
		list := e.do(http.MethodGet, "/assets", nil)
		if !strings.Contains(string(list.Raw), `"total":1`) {
			t.Errorf("GET /assets after the upload = %s", list.Raw)
		}
	})

	t.Run("publish", func(t *testing.T) {
		about, aboutDraft := e.page("About us", "about", "")
		contact, contactDraft := e.page("Contact", "contact", "")

		stdout, stderr, code := c.run(t, "", "publish")
		// Newest first, with the author and what the draft does.
		if code != 0 || !strings.Contains(stdout, aboutDraft) || strings.Index(stdout, contactDraft) > strings.Index(stdout, aboutDraft) ||
			!regexp.MustCompile(aboutDraft+` +\d{4}-\d\d-\d\d \d\d:\d\d +editor@demo\.test +create page /about\n`).MatchString(stdout) {
			t.Fatalf("publish (list) = %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}

		stdout, stderr, code = c.run(t, "", "publish", "--draft", aboutDraft, "-m", "About page")
		if code != 0 || !regexp.MustCompile(`^published: revision [0-9a-f-]{36}, 1 versions\n$`).MatchString(stdout) {
			t.Fatalf("publish --draft = %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		if st := e.status("/pages/" + about); st != 200 {
			t.Errorf("published page = %d, want 200", st)
		}
		if st := e.status("/pages/" + contact); st != 404 {
			t.Errorf("page not published = %d, want 404", st)
		}
		revs := e.do(http.MethodGet, "/revisions", nil)
		if !strings.Contains(string(revs.Raw), `"comments":"About page"`) {
			t.Errorf("the revision lacks the comment: %s", revs.Raw)
		}

		stdout, stderr, code = c.run(t, "", "publish", "--all", "--yes", "--comment", "The rest")
		if code != 0 || !strings.HasPrefix(stdout, "published: ") {
			t.Fatalf("publish --all = %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		if st := e.status("/pages/" + contact); st != 200 {
			t.Errorf("page published with --all = %d, want 200", st)
		}
		if stdout, stderr, code = c.run(t, "", "publish"); code != 0 || stdout != "" || !strings.Contains(stderr, "no pending drafts") {
			t.Errorf("publish with nothing pending = %d %q %q", code, stdout, stderr)
		}

		// A draft that is not there: the API's error, and a failing exit.
		_, stderr, code = c.run(t, "", "publish", "--draft", "00000000-0000-4000-8000-000000000000")
		if code != 1 || !strings.Contains(stderr, "POST /revisions: 404 not_found") {
			t.Errorf("publish of an unknown draft = %d\n%s", code, stderr)
		}
	})

	t.Run("bad token", func(t *testing.T) {
		bad := newPressroomCLI(t, c.bin, s.URL, "PRESSROOM_TOKEN=not-a-token")
		_, stderr, code := bad.run(t, "", "publish")
		if code != 1 || !strings.Contains(stderr, "the API did not accept your sign-in: sign in again with `pressroom login`") ||
			!strings.Contains(stderr, "GET /drafts: 401") {
			t.Errorf("publish with a bad token = %d\n%s", code, stderr)
		}
	})
}

var (
	loginFormToken = regexp.MustCompile(`<input type="hidden" name="token" value="([A-Za-z0-9_-]+)">`)
	oobCode        = regexp.MustCompile(`<code id="code"[^>]*>([A-Za-z0-9_-]+)</code>`)
)

// browserSignIn does what an editor does in a browser with a sign-in
// address: opens it (following the redirect to the login form), signs in
// as email, and returns the page it ends on: the code's page for the
// out-of-band flow, the CLI's own page for its loopback redirect.
func browserSignIn(authURL, email string) (int, []byte, error) {
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: time.Minute}
	resp, err := browser.Get(authURL) // follows the redirect to the login form
	if err != nil {
		return 0, nil, err
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := loginFormToken.FindSubmatch(page)
	if resp.StatusCode != 200 || m == nil {
		return resp.StatusCode, page, fmt.Errorf("login form = %d %s", resp.StatusCode, page)
	}
	// The form's POST redirects to the client's redirect URI, which the
	// client follows as a browser does.
	resp, err = browser.PostForm(resp.Request.URL.Scheme+"://"+resp.Request.URL.Host+"/oauth/login", url.Values{
		"id": {resp.Request.URL.Query().Get("id")}, "token": {string(m[1])}, "username": {email}, "password": {password}})
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	page, err = io.ReadAll(resp.Body)
	return resp.StatusCode, page, err
}

// signInInBrowser is browserSignIn for the out-of-band flow: the code
// the page shows.
func signInInBrowser(t *testing.T, authURL, email string) string {
	t.Helper()
	status, page, err := browserSignIn(authURL, email)
	if err != nil {
		t.Fatal(err)
	}
	code := oobCode.FindSubmatch(page)
	if status != 200 || code == nil {
		t.Fatalf("code page = %d %s", status, page)
	}
	return string(code[1])
}

// The test binary is `pressroom login`'s browser when run with
// fakeBrowserEmail set (TestMain): PRESSROOM_BROWSER names it.
const (
	fakeBrowserEmail = "PRESSROOM_E2E_BROWSER_EMAIL"
	// fakeBrowserMark names a file the browser creates when it is run.
	fakeBrowserMark = "PRESSROOM_E2E_BROWSER_MARK"
)

// fakeBrowser signs in as email at the address (the last argument) and
// expects the CLI's page saying it is signed in; 0 when it did.
func fakeBrowser(email string, args []string) int {
	if mark := os.Getenv(fakeBrowserMark); mark != "" {
		_ = os.WriteFile(mark, []byte(strings.Join(args, " ")), 0o600)
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "fake browser: no address")
		return 2
	}
	status, page, err := browserSignIn(args[len(args)-1], email)
	if err != nil || status != 200 || !bytes.Contains(page, []byte("You can close this tab")) {
		fmt.Fprintf(os.Stderr, "fake browser: %v: %d %s\n", err, status, page)
		return 1
	}
	return 0
}

func TestCLISignInWithTheCodeFlow(t *testing.T) {
	t.Parallel()
	build := testsupport.BuildPressroom(t)
	s := start(t)
	c := newPressroomCLI(t, build(), s.URL)

	// Not signed in yet: a clear error.
	if _, stderr, code := c.run(t, "", "publish"); code != 1 || !strings.Contains(stderr, "not signed in: run `pressroom login` or set PRESSROOM_TOKEN") {
		t.Fatalf("publish before login = %d\n%s", code, stderr)
	}

	// pressroom login prints the URL and waits for the code on stdin.
	cmd := c.command("login")
	stdin, _ := cmd.StdinPipe()
	stderrPipe, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewReader(stderrPipe)
	var authURL string
	var shown strings.Builder
	for authURL == "" {
		line, err := lines.ReadString('\n')
		shown.WriteString(line)
		if err != nil {
			_ = cmd.Process.Kill()
			t.Fatalf("login printed no URL: %v\n%s", err, shown.String())
		}
		if u := strings.TrimSpace(line); strings.HasPrefix(u, s.URL+"/oauth/authorize?") {
			authURL = u
		}
	}
	parsed, err := url.Parse(authURL)
	if err != nil {
		t.Fatal(err)
	}
	q := parsed.Query()
	if q.Get("client_id") != "pressroom" || q.Get("redirect_uri") != "urn:ietf:wg:oauth:2.0:oob" ||
		q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("response_type") != "code" {
		t.Errorf("authorize URL %s: want the public client, OOB, S256 PKCE", authURL)
	}
	code := signInInBrowser(t, authURL, "editor@demo.test")
	if _, err := io.WriteString(stdin, code+"\n"); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(lines)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("login: %v\n%s%s", err, shown.String(), rest)
	}
	// Without a browser to open (no DISPLAY, no PRESSROOM_BROWSER here), it
	// fell back to the pasted code, and names who signed in.
	if !strings.Contains(shown.String(), "Could not open a browser: no graphical session here") ||
		!strings.HasSuffix(string(rest), "signed in as editor@demo.test (admin) to demo at "+s.URL+"\n") {
		t.Errorf("login said %q then %q", shown.String(), rest)
	}

	credPath := filepath.Join(c.configHome, "pressroom", "credentials.json")
	type stored struct {
		Servers map[string]struct {
			RefreshToken string    `json:"refresh_token"`
			AccessToken  string    `json:"access_token"`
			Expiry       time.Time `json:"expiry"`
		} `json:"servers"`
	}
	read := func() stored {
		t.Helper()
		st, err := os.Stat(credPath)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", credPath, st.Mode().Perm())
		}
		var f stored
		b, _ := os.ReadFile(credPath)
		if err := json.Unmarshal(b, &f); err != nil || f.Servers[s.URL].RefreshToken == "" {
			t.Fatalf("credentials file = %s, %v", b, err)
		}
		return f
	}
	// expire makes the stored access token stale, so the next command
	// must refresh.
	expire := func() {
		t.Helper()
		var raw map[string]map[string]map[string]any
		b, _ := os.ReadFile(credPath)
		_ = json.Unmarshal(b, &raw)
		raw["servers"][s.URL]["expiry"] = time.Now().Add(-time.Minute).Format(time.RFC3339)
		b, _ = json.Marshal(raw)
		if err := os.WriteFile(credPath, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	first := read().Servers[s.URL]

	// The stored access token serves the next command as it is.
	e := s.editor(t, "editor@demo.test")
	_, draft := e.page("Signed in", "signed-in", "")
	if stdout, stderr, code := c.run(t, "", "publish"); code != 0 || !strings.Contains(stdout, draft) {
		t.Fatalf("publish (list) after login = %d\n%s%s", code, stdout, stderr)
	}
	if got := read().Servers[s.URL]; got.RefreshToken != first.RefreshToken || got.AccessToken != first.AccessToken {
		t.Error("a command refreshed although the access token was good")
	}

	// Once it is stale, the command refreshes, and stores the rotated
	// refresh token; the rotated one works for the next refresh.
	expire()
	if stdout, stderr, code := c.run(t, "", "publish", "--all", "--yes", "-m", "from the CLI"); code != 0 || !strings.HasPrefix(stdout, "published: ") {
		t.Fatalf("publish --all after a refresh = %d\n%s%s", code, stdout, stderr)
	}
	second := read().Servers[s.URL]
	if second.RefreshToken == first.RefreshToken || second.AccessToken == first.AccessToken || !second.Expiry.After(time.Now()) {
		t.Fatalf("after a refresh the stored sign-in did not rotate: %+v then %+v", first, second)
	}
	expire()
	if _, stderr, code := c.run(t, "", "publish"); code != 0 {
		t.Fatalf("publish after a second refresh = %d\n%s", code, stderr)
	}
	if third := read().Servers[s.URL]; third.RefreshToken == second.RefreshToken {
		t.Error("the second refresh did not store a new refresh token")
	}

	// The first refresh token was spent: presenting it once its successor
	// was itself used is a replay, and the server revokes the chain.
	r, err := http.PostForm(s.URL+"/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {"pressroom"}, "refresh_token": {first.RefreshToken}})
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != 400 {
		t.Errorf("the spent refresh token = %d, want 400", r.StatusCode)
	}
	// So the CLI's stored sign-in is refused too; it forgets it and says so.
	expire()
	if _, stderr, code := c.run(t, "", "publish"); code != 1 || !strings.Contains(stderr, "run `pressroom login` again") {
		t.Errorf("publish after the chain was revoked = %d\n%s", code, stderr)
	}
	if _, stderr, code := c.run(t, "", "publish"); code != 1 || !strings.Contains(stderr, "not signed in") {
		t.Errorf("publish after the sign-in was forgotten = %d\n%s", code, stderr)
	}

	if _, stderr, code := c.run(t, "", "logout"); code != 0 || !strings.Contains(stderr, "signed out") {
		t.Errorf("logout = %d %s", code, stderr)
	}
}

// TestCLILoginInTheBrowser: `pressroom login` opens the browser (here
// the test binary as PRESSROOM_BROWSER, signing in with an HTTP client)
// with a loopback redirect of the built-in public client, takes the code
// on it, and names who signed in. The API named as localhost with a
// trailing slash is the same API as 127.0.0.1: one stored sign-in.
func TestCLILoginInTheBrowser(t *testing.T) {
	t.Parallel()
	build := testsupport.BuildPressroom(t)
	s := start(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(t.TempDir(), "browser-opened")
	c := newPressroomCLI(t, build(), s.URL, "PRESSROOM_BROWSER="+self, fakeBrowserEmail+"=editor@demo.test", fakeBrowserMark+"="+mark)
	localhost := strings.Replace(s.URL, "127.0.0.1", "localhost", 1) + "/"

	_, stderr, code := c.run(t, "", "login", "--api", localhost)
	if code != 0 || !strings.HasSuffix(stderr, "signed in as editor@demo.test (admin) to demo at "+s.URL+"\n") {
		t.Fatalf("login = %d\n%s", code, stderr)
	}
	opened, _ := os.ReadFile(mark)
	authURL, err := url.Parse(string(opened))
	if err != nil {
		t.Fatal(err)
	}
	q := authURL.Query()
	if q.Get("client_id") != "pressroom" || q.Get("code_challenge_method") != "S256" ||
		!regexp.MustCompile(`^http://127\.0\.0\.1:\d+/callback$`).MatchString(q.Get("redirect_uri")) {
		t.Errorf("the browser opened %s; want the public client, S256 PKCE and a loopback redirect", opened)
	}

	// One sign-in, under the normalized URL, serves either spelling.
	b, _ := os.ReadFile(filepath.Join(c.configHome, "pressroom", "credentials.json"))
	var f struct{ Servers map[string]json.RawMessage }
	if err := json.Unmarshal(b, &f); err != nil || len(f.Servers) != 1 || f.Servers[s.URL] == nil {
		t.Errorf("credentials = %s, %v; want one sign-in under %s", b, err, s.URL)
	}
	for _, api := range []string{s.URL, localhost, strings.TrimSuffix(localhost, "/")} {
		if _, stderr, code := c.run(t, "", "publish", "--api", api); code != 0 || !strings.Contains(stderr, "no pending drafts") {
			t.Errorf("publish --api %s after login = %d\n%s", api, code, stderr)
		}
	}

	// --no-browser opens none: it prints the address and reads the code.
	if err := os.Remove(mark); err != nil {
		t.Fatal(err)
	}
	cmd := c.command("login", "--no-browser")
	stdin, _ := cmd.StdinPipe()
	stderrPipe, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewReader(stderrPipe)
	for {
		line, err := lines.ReadString('\n')
		if err != nil {
			_ = cmd.Process.Kill()
			t.Fatalf("login --no-browser printed no URL: %v", err)
		}
		if u := strings.TrimSpace(line); strings.HasPrefix(u, s.URL+"/oauth/authorize?") {
			if !strings.Contains(u, "redirect_uri=urn%3Aietf%3Awg%3Aoauth%3A2.0%3Aoob") {
				t.Errorf("login --no-browser URL %s, want the out-of-band redirect", u)
			}
			_, _ = io.WriteString(stdin, signInInBrowser(t, u, "editor@demo.test")+"\n")
			break
		}
	}
	rest, _ := io.ReadAll(lines)
	if err := cmd.Wait(); err != nil || !strings.HasSuffix(string(rest), "signed in as editor@demo.test (admin) to demo at "+s.URL+"\n") {
		t.Errorf("login --no-browser = %v: %s", err, rest)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("login --no-browser opened the browser")
	}
}

// TestCLIPublishMineAndAll: two editors of one site. `publish` lists both
// editors' drafts newest first with their authors; --mine publishes only
// the caller's; --all without --yes and without a terminal refuses; --mine
// whose drafts need another editor's asks first (here: refuses).
func TestCLIPublishMineAndAll(t *testing.T) {
	t.Parallel()
	build := testsupport.BuildPressroom(t)
	s := start(t)
	hash, _ := auth.HashPassword(password)
	if _, err := models.CreateUser(context.Background(), s.DB, s.Site.ID, "second@demo.test", "Second", hash); err != nil {
		t.Fatal(err)
	}
	first, second := s.editor(t, "editor@demo.test"), s.editor(t, "second@demo.test")
	bin := build()
	c := newPressroomCLI(t, bin, s.URL, "PRESSROOM_TOKEN="+second.token)

	team, teamDraft := first.page("Team", "team", "")
	news, newsDraft := second.page("News", "news", "")
	_, jobsDraft := first.page("Jobs", "jobs", "")

	stdout, stderr, code := c.run(t, "", "publish")
	rows := regexp.MustCompile(`(?m)^(\S+) +\d{4}-\d\d-\d\d \d\d:\d\d +(\S+) +(.*)$`).FindAllStringSubmatch(stdout, -1)
	if code != 0 || len(rows) != 3 {
		t.Fatalf("publish (list) = %d\n%s%s", code, stdout, stderr)
	}
	for i, want := range [][3]string{{jobsDraft, "editor@demo.test", "create page /jobs"},
		{newsDraft, "second@demo.test", "create page /news"}, {teamDraft, "editor@demo.test", "create page /team"}} {
		if rows[i][1] != want[0] || rows[i][2] != want[1] || rows[i][3] != want[2] {
			t.Errorf("row %d = %q, want %q (newest first)", i, rows[i][1:], want)
		}
	}

	// --all on no terminal, without --yes: refused, nothing published.
	_, stderr, code = c.run(t, "", "publish", "--all", "-m", "everything")
	if code != 1 || !strings.Contains(stderr, "publish --all would publish 3 drafts by 2 people, and there is no terminal to ask: add --yes") {
		t.Errorf("publish --all without --yes = %d\n%s", code, stderr)
	}
	if st := second.status("/pages/" + news); st != 404 {
		t.Errorf("a page was published by a refused --all: %d", st)
	}

	// --mine: the second editor's page only.
	stdout, stderr, code = c.run(t, "", "publish", "--mine", "-m", "news")
	if code != 0 || !regexp.MustCompile(`^published: revision [0-9a-f-]{36}, 1 versions\n$`).MatchString(stdout) {
		t.Fatalf("publish --mine = %d\n%s%s", code, stdout, stderr)
	}
	if second.status("/pages/"+news) != 200 || first.status("/pages/"+team) != 404 {
		t.Errorf("after --mine: news %d (want 200), team %d (want 404)", second.status("/pages/"+news), first.status("/pages/"+team))
	}

	// Content of the second editor on the first editor's new page: --mine
	// would publish that page too, so it names it and, with no terminal,
	// refuses.
	second.create("contents", map[string]any{"title": "Open roles"}, map[string]any{"page": ref("pages", team)})
	_, stderr, code = c.run(t, "", "publish", "--mine")
	if code != 1 || !regexp.MustCompile(`Your drafts need 1 draft by other people published with them:\n.*\n`+teamDraft+` .* editor@demo\.test +create page "Team"`).MatchString(stderr) {
		t.Errorf("publish --mine needing another editor's draft = %d\n%s", code, stderr)
	}
	if first.status("/pages/"+team) != 404 {
		t.Error("the other editor's page was published")
	}
	if stdout, stderr, code = c.run(t, "", "publish", "--mine", "--yes"); code != 0 || !strings.HasPrefix(stdout, "published: ") {
		t.Errorf("publish --mine --yes = %d\n%s%s", code, stdout, stderr)
	}
	// The first editor's other draft is still pending.
	if stdout, _, _ = c.run(t, "", "publish"); !strings.Contains(stdout, jobsDraft) || strings.Count(stdout, "\n") != 2 {
		t.Errorf("pending after --mine = %s", stdout)
	}
}

// TestCLIMembers: pressroom member add, list, role and remove manage the
// site's team over /memberships; a non-admin gets a clear refusal.
func TestCLIMembers(t *testing.T) {
	t.Parallel()
	build := testsupport.BuildPressroom(t)
	s := start(t)
	admin := s.editor(t, "editor@demo.test")
	bin := build()
	c := newPressroomCLI(t, bin, s.URL, "PRESSROOM_TOKEN="+admin.token)
	run := func(want int, args ...string) string { t.Helper(); return c.expect(t, want, args...) }
	out := run(0, "member", "add", "-email", "ada@demo.test", "-role", "author", "-name", "Ada")
	if !strings.Contains(out, "added ada@demo.test as author") || !strings.Contains(out, "password setup link") {
		t.Errorf("member add printed:\n%s", out)
	}
	if out := run(0, "member", "list"); !strings.Contains(out, "ada@demo.test") || !strings.Contains(out, "author") || !strings.Contains(out, "editor@demo.test") {
		t.Errorf("member list printed:\n%s", out)
	}
	if out := run(0, "member", "role", "-role", "editor", "-path-prefix", "/blog/", "ada@demo.test"); !strings.Contains(out, "ada@demo.test is now editor") {
		t.Errorf("member role printed:\n%s", out)
	}
	if out := run(0, "member", "list"); !strings.Contains(out, "/blog/") {
		t.Errorf("member list after the role change printed:\n%s", out)
	}
	if out := run(1, "member", "remove", "editor@demo.test"); !strings.Contains(out, "last_admin") && !strings.Contains(strings.ToLower(out), "last admin") {
		t.Errorf("removing the last admin printed:\n%s", out)
	}
	if out := run(0, "member", "remove", "ada@demo.test"); !strings.Contains(out, "removed ada@demo.test") {
		t.Errorf("member remove printed:\n%s", out)
	}
	if out := run(0, "member", "list"); strings.Contains(out, "ada@demo.test") {
		t.Errorf("member list after the removal still names ada:\n%s", out)
	}
	author := s.member(t, "author@demo.test", models.RoleAuthor, "")
	other := newPressroomCLI(t, bin, s.URL, "PRESSROOM_TOKEN="+author.token)
	if stdout, stderr, code := other.run(t, "", "member", "list"); code == 0 || !strings.Contains(stdout+stderr, "memberships") {
		t.Errorf("an author's member list: exit %d\n%s%s\nwant a refusal naming the permission memberships", code, stdout, stderr)
	}
}

// TestCLIHistoryAndRestore: pressroom history PAGE-PATH lists a page's
// versions newest first; pressroom restore VERSION drafts it back, which a
// publish makes live; a deleted page is found in the trash by its path.
func TestCLIHistoryAndRestore(t *testing.T) {
	t.Parallel()
	build := testsupport.BuildPressroom(t)
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	bin := build()
	c := newPressroomCLI(t, bin, s.URL, "PRESSROOM_TOKEN="+e.token)
	run := func(want int, args ...string) string { t.Helper(); return c.expect(t, want, args...) }
	id, d := e.page("Launch", "launch", "")
	e.settle(d)
	e.settle(e.update("pages", id, map[string]any{"title": "Launch 2"}, nil))
	out := run(0, "history", "/launch")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "update") || !strings.Contains(lines[1], "Launch 2") ||
		!strings.Contains(lines[2], "create") || !strings.Contains(lines[2], "Launch") {
		t.Fatalf("history printed:\n%s", out)
	}
	first := strings.Fields(lines[2])[0]
	out = run(0, "restore", first)
	if !strings.Contains(out, "drafted update") || !strings.Contains(out, "pressroom publish --draft") {
		t.Fatalf("restore printed:\n%s", out)
	}
	draft := strings.Fields(strings.Split(out, "\n")[0])[2]
	e.settle(draft)
	if got := e.live("pages", id); got != "Launch /launch" {
		t.Errorf("after publishing the restore: %q", got)
	}
	// Deleted: history finds it in the trash, restore brings it back.
	e.settle(e.remove("pages", id))
	out = run(0, "history", "/launch")
	lines = strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 3 || !strings.Contains(lines[1], "delete") {
		t.Fatalf("history of the deleted page printed:\n%s", out)
	}
	out = run(0, "restore", strings.Fields(lines[2])[0])
	if !strings.Contains(out, "drafted create") {
		t.Errorf("restore of the deleted page printed:\n%s", out)
	}
	if out := run(1, "restore"); !strings.Contains(out, "name one version id") {
		t.Errorf("restore without a version printed:\n%s", out)
	}
	if out := run(1, "history", "/nowhere"); !strings.Contains(out, "no page of the site") {
		t.Errorf("history of no page printed:\n%s", out)
	}
}
