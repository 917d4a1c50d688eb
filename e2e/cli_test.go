package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
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

	t.Run("upload", func(t *testing.T) {
		stdout, stderr, code := c.run(t, "", "upload", photo, missing, notes)
		t.Logf("pressroom upload:\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
		if code != 1 {
			t.Errorf("exit code %d with two bad files, want 1\nstderr:\n%s", code, stderr)
		}
		for _, want := range []string{
			"[1/3] " + photo + ": uploading",
			"[1/3] " + photo + ": processing",
			"[1/3] " + photo + ": finished",
			"[2/3] " + missing + ": failed: cannot read the file",
			"[3/3] " + notes + ": failed: POST /upload-signatures: 422",
			"some files failed: 2 of 3",
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
		if code != 0 || !strings.Contains(stdout, aboutDraft) || !strings.Contains(stdout, contactDraft) ||
			!regexp.MustCompile(aboutDraft+` +create +pages/`+about+` +About us`).MatchString(stdout) {
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

		stdout, stderr, code = c.run(t, "", "publish", "--all", "--comment", "The rest")
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
		if code != 1 || !strings.Contains(stderr, "GET /drafts?page[size]=100: 401") || !strings.Contains(stderr, "pressroom login") {
			t.Errorf("publish with a bad token = %d\n%s", code, stderr)
		}
	})
}

var (
	loginFormToken = regexp.MustCompile(`<input type="hidden" name="token" value="([A-Za-z0-9_-]+)">`)
	oobCode        = regexp.MustCompile(`<code id="code"[^>]*>([A-Za-z0-9_-]+)</code>`)
)

// signInInBrowser does what the editor does with the URL `pressroom login`
// prints: opens it, signs in on the form, and reads the code off the page.
func signInInBrowser(t *testing.T, authURL, email string) string {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: time.Minute}
	resp, err := browser.Get(authURL) // follows the redirect to the login form
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := loginFormToken.FindSubmatch(page)
	if resp.StatusCode != 200 || m == nil {
		t.Fatalf("login form = %d %s", resp.StatusCode, page)
	}
	resp, err = browser.PostForm(resp.Request.URL.Scheme+"://"+resp.Request.URL.Host+"/oauth/login", url.Values{
		"id": {resp.Request.URL.Query().Get("id")}, "token": {string(m[1])}, "username": {email}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	page, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	code := oobCode.FindSubmatch(page)
	if resp.StatusCode != 200 || code == nil {
		t.Fatalf("code page = %d %s", resp.StatusCode, page)
	}
	return string(code[1])
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
	if !strings.Contains(string(rest), "signed in to "+s.URL) {
		t.Errorf("login said %q", rest)
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
	if stdout, stderr, code := c.run(t, "", "publish", "--all", "-m", "from the CLI"); code != 0 || !strings.HasPrefix(stdout, "published: ") {
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
