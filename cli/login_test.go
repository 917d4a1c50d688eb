package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeProvider is an authorization server as the CLI meets Pressroom's
// (docs/auth.md): /oauth/authorize redirects straight back with a code
// (the sign-in form is the real API's business, e2e/cli_test.go), the
// token endpoint checks the code, the redirect URI and the PKCE
// verifier, and /users/me and /site say who signed in.
type fakeProvider struct {
	*httptest.Server
	role string

	mu        sync.Mutex
	challenge string // the code_challenge of the last authorize
	redirect  string // its redirect_uri
	exchanged int
}

func newFakeProvider(t *testing.T, role string) *fakeProvider {
	p := &fakeProvider{role: role}
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.Close)
	return p
}

func (p *fakeProvider) serve(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch r.URL.Path {
	case "/oauth/authorize":
		q := r.URL.Query()
		if q.Get("client_id") != ClientID || q.Get("code_challenge_method") != "S256" || q.Get("response_type") != "code" {
			http.Error(w, "bad authorize request", 400)
			return
		}
		p.challenge, p.redirect = q.Get("code_challenge"), q.Get("redirect_uri")
		if p.redirect == OOBRedirectURI {
			fmt.Fprint(w, "the code is: the-code")
			return
		}
		http.Redirect(w, r, p.redirect+"?code=the-code&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
	case "/oauth/token":
		_ = r.ParseForm()
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if r.PostForm.Get("code") != "the-code" || r.PostForm.Get("redirect_uri") != p.redirect ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != p.challenge || r.PostForm.Get("client_id") != ClientID {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			fmt.Fprint(w, `{"error":"invalid_grant"}`)
			return
		}
		p.exchanged++
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"token_type":"bearer","access_token":"access","refresh_token":"refresh","expires_in":7200}`)
	case "/users/me":
		attrs := map[string]any{"email": "ed@demo.test", "name": "Ed"}
		doc := map[string]any{"data": map[string]any{"type": "users", "id": "u1", "attributes": attrs}}
		if p.role != "" { // as the API names it: the membership of the signed-in site
			doc["meta"] = map[string]any{"memberships": []any{
				map[string]any{"site-id": "s0", "subdomain-slug": "elsewhere", "role": "viewer"},
				map[string]any{"site-id": "s1", "subdomain-slug": "demo", "role": p.role}}}
		}
		json.NewEncoder(w).Encode(doc)
	case "/site":
		fmt.Fprint(w, `{"data":{"type":"sites","id":"s1","attributes":{"title":"Demo","subdomain-slug":"demo"}}}`)
	default:
		http.NotFound(w, r)
	}
}

// followingBrowser is a browser that follows the address to its end (the
// CLI's loopback callback) and sends the last page on pages. (Login does
// not wait for the browser, which may still be reading when it returns.)
func followingBrowser(pages chan<- string) Opener {
	return func(u string) error {
		resp, err := http.Get(u)
		if err != nil {
			pages <- err.Error()
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		pages <- fmt.Sprintf("%d %s", resp.StatusCode, b)
		return nil
	}
}

// pastingUser is the person at the terminal of the out-of-band sign-in:
// when asked for the code, they open the address the CLI printed last
// (the fake provider notes its PKCE challenge and shows the code) and
// type the code.
type pastingUser struct {
	stderr *bytes.Buffer
	typed  io.Reader
}

func (u *pastingUser) Read(b []byte) (int, error) {
	if u.typed == nil {
		var addr string
		for _, f := range strings.Fields(u.stderr.String()) {
			if strings.Contains(f, "/oauth/authorize?") {
				addr = f
			}
		}
		resp, err := http.Get(addr)
		if err != nil {
			return 0, err
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		u.typed = strings.NewReader(strings.TrimPrefix(string(page), "the code is: ") + "\n")
	}
	return u.typed.Read(b)
}

func loginOptions(t *testing.T, api string) (Options, *bytes.Buffer) {
	var stderr bytes.Buffer
	return Options{API: api, Getenv: func(string) string { return "" }, Stdin: &pastingUser{stderr: &stderr},
		Stdout: io.Discard, Stderr: &stderr, ConfigDir: t.TempDir()}, &stderr
}

func TestLoginThroughTheBrowserNamesTheUser(t *testing.T) {
	t.Parallel()
	for _, role := range []string{"", "admin"} {
		p := newFakeProvider(t, role)
		// The API named as localhost with a slash: shown and stored as 127.0.0.1.
		api := strings.Replace(p.URL, "127.0.0.1", "localhost", 1) + "/"
		o, stderr := loginOptions(t, api)
		pages := make(chan string, 1)
		if err := Login(context.Background(), o, LoginOptions{Open: followingBrowser(pages), Timeout: time.Minute}); err != nil {
			t.Fatalf("Login: %v\n%s", err, stderr)
		}
		page := <-pages
		if !strings.HasPrefix(p.redirect, "http://127.0.0.1:") || !strings.HasSuffix(p.redirect, "/callback") {
			t.Errorf("redirect_uri %q, want the loopback http://127.0.0.1:<port>/callback", p.redirect)
		}
		if !strings.HasPrefix(page, "200 ") || !strings.Contains(page, "You can close this tab") {
			t.Errorf("the browser's last page = %q", page)
		}
		want := "signed in as ed@demo.test to demo at " + p.URL + "\n"
		if role != "" {
			want = "signed in as ed@demo.test (admin) to demo at " + p.URL + "\n"
		}
		if !strings.HasSuffix(stderr.String(), want) {
			t.Errorf("Login said %q, want it to end with %q", stderr, want)
		}
		c, ok, err := Store{Dir: o.ConfigDir}.Load(p.URL)
		if err != nil || !ok || c.RefreshToken != "refresh" {
			t.Errorf("stored %+v %v %v", c, ok, err)
		}
	}
}

func TestLoginFallsBackToThePastedCode(t *testing.T) {
	t.Parallel()
	p := newFakeProvider(t, "")
	o, stderr := loginOptions(t, p.URL)
	noBrowser := func(string) error { return fmt.Errorf("%w: no graphical session here", errNoBrowser) }
	if err := Login(context.Background(), o, LoginOptions{Open: noBrowser}); err != nil {
		t.Fatalf("Login: %v\n%s", err, stderr)
	}
	out := stderr.String()
	if p.redirect != OOBRedirectURI || !strings.Contains(out, "Could not open a browser: no graphical session here. Sign in with a code instead.") ||
		!strings.HasSuffix(out, "signed in as ed@demo.test to demo at "+p.URL+"\n") {
		t.Errorf("redirect %q; Login said:\n%s", p.redirect, out)
	}
	// The loopback address, useless once no browser opened, is not shown.
	if strings.Contains(out, "redirect_uri=http") {
		t.Errorf("the loopback address was shown:\n%s", out)
	}

	// --no-browser goes straight to the code.
	p = newFakeProvider(t, "")
	o, stderr = loginOptions(t, p.URL)
	opened := false
	err := Login(context.Background(), o, LoginOptions{NoBrowser: true, Open: func(string) error { opened = true; return nil }})
	if err != nil || opened || p.redirect != OOBRedirectURI || strings.Contains(stderr.String(), "Opening the browser") {
		t.Errorf("Login --no-browser = %v, opened %v, redirect %q:\n%s", err, opened, p.redirect, stderr)
	}
}

func TestLoopbackCallbackChecksTheState(t *testing.T) {
	t.Parallel()
	p := newFakeProvider(t, "")
	o, stderr := loginOptions(t, p.URL)
	var forged string
	open := func(u string) error {
		// Another page on this computer calls the port first, with a
		// state of its own: refused, and the sign-in goes on.
		parsed, _ := url.Parse(u)
		redirect := parsed.Query().Get("redirect_uri")
		resp, err := http.Get(redirect + "?code=the-code&state=forged")
		if err != nil {
			return err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		forged = fmt.Sprintf("%d %s", resp.StatusCode, b)
		return followingBrowser(make(chan string, 1))(u)
	}
	if err := Login(context.Background(), o, LoginOptions{Open: open, Timeout: time.Minute}); err != nil {
		t.Fatalf("Login: %v\n%s", err, stderr)
	}
	if !strings.HasPrefix(forged, "400 ") || !strings.Contains(forged, "Not this sign-in") {
		t.Errorf("a callback with another state = %q, want 400", forged)
	}
	if p.exchanged != 1 {
		t.Errorf("%d exchanges, want 1", p.exchanged)
	}
}

func TestLoopbackReportsARefusalAndATimeout(t *testing.T) {
	t.Parallel()
	p := newFakeProvider(t, "")
	o, _ := loginOptions(t, p.URL)
	refuse := func(u string) error {
		parsed, _ := url.Parse(u)
		q := parsed.Query()
		resp, err := http.Get(q.Get("redirect_uri") + "?error=access_denied&error_description=no&state=" + url.QueryEscape(q.Get("state")))
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	err := Login(context.Background(), o, LoginOptions{Open: refuse, Timeout: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "the sign-in was refused: access_denied") {
		t.Errorf("Login refused in the browser = %v", err)
	}

	o, _ = loginOptions(t, p.URL)
	err = Login(context.Background(), o, LoginOptions{Open: func(string) error { return nil }, Timeout: 50 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "--no-browser") {
		t.Errorf("Login with no answer from the browser = %v; want a timeout naming --no-browser", err)
	}
}

func TestBrowserCommandFromTheEnvironment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "opened")
	script := filepath.Join(dir, "browser.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s' \"$*\" > "+out+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

	// PRESSROOM_BROWSER wins over BROWSER; "%s" stands for the address;
	// a command that fails is skipped for the next.
	open := SystemOpener(env(map[string]string{"PRESSROOM_BROWSER": "/nonexistent/browser:" + script + " --new-tab %s", "BROWSER": "false"}))
	if err := open("http://127.0.0.1:1/x"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "--new-tab http://127.0.0.1:1/x" {
		t.Errorf("the command got %q", b)
	}
	// Every command failing is "no browser", so Login falls back.
	if err := SystemOpener(env(map[string]string{"BROWSER": "false"}))("http://x"); !errors.Is(err, errNoBrowser) {
		t.Errorf("a failing BROWSER = %v, want errNoBrowser", err)
	}
	// No graphical session: the system's launcher is not tried.
	if reason := noGraphicalSession(env(nil)); reason == "" && runtime.GOOS == "linux" {
		t.Error("no DISPLAY nor WAYLAND_DISPLAY, yet a graphical session")
	}
	if reason := noGraphicalSession(env(map[string]string{"DISPLAY": ":0"})); reason != "" {
		t.Errorf("DISPLAY set, yet %q", reason)
	}
}
