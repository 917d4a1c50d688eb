package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rotatingServer is a token endpoint that rotates refresh tokens as
// Pressroom's does: each use returns a new one and the spent one is refused.
type rotatingServer struct {
	*httptest.Server
	mu       sync.Mutex
	current  string
	n        int
	requests atomic.Int32
}

func newRotatingServer(t *testing.T, first string) *rotatingServer {
	s := &rotatingServer{current: first}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		if r.URL.Path != "/oauth/token" || r.ParseForm() != nil || r.PostForm.Get("grant_type") != "refresh_token" ||
			r.PostForm.Get("client_id") != ClientID || r.Header.Get("Authorization") != "" {
			http.Error(w, "bad request", 400)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		s.mu.Lock()
		defer s.mu.Unlock()
		if r.PostForm.Get("refresh_token") != s.current {
			w.WriteHeader(400)
			fmt.Fprint(w, `{"error":"invalid_grant","error_description":"refresh token reused"}`)
			return
		}
		s.n++
		s.current = fmt.Sprintf("refresh-%d", s.n)
		json.NewEncoder(w).Encode(map[string]any{"token_type": "bearer", "access_token": fmt.Sprintf("access-%d", s.n),
			"refresh_token": s.current, "expires_in": 7200})
	}))
	t.Cleanup(s.Close)
	return s
}

func TestStoreFileIsPrivate(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "pressroom")
	s := Store{Dir: dir}
	for i := range 3 { // replacing the file keeps the mode
		if err := s.Save("http://api.test", Credentials{ClientID: ClientID, RefreshToken: fmt.Sprint("r", i)}); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(s.path())
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("credentials file mode %v, want 0600", st.Mode().Perm())
		}
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v, want 0700", st.Mode().Perm())
	}
	c, ok, err := s.Load("http://api.test")
	if err != nil || !ok || c.RefreshToken != "r2" {
		t.Errorf("Load = %+v %v %v; want the last refresh token", c, ok, err)
	}
	if _, ok, _ := s.Load("http://other.test"); ok {
		t.Error("another API's sign-in was found")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
	if err := s.Forget("http://api.test"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Load("http://api.test"); ok {
		t.Error("Forget kept the sign-in")
	}
}

func TestTokenRotatesTheRefreshToken(t *testing.T) {
	t.Parallel()
	srv := newRotatingServer(t, "refresh-0")
	s := Store{Dir: t.TempDir()}
	ctx := context.Background()
	if err := s.Save(srv.URL, Credentials{ClientID: ClientID, RefreshToken: "refresh-0"}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	clock := func() time.Time { return now }

	tok, err := s.Token(ctx, srv.URL, srv.Client(), clock)
	if err != nil || tok != "access-1" {
		t.Fatalf("Token = %q, %v; want access-1 from a refresh", tok, err)
	}
	c, _, _ := s.Load(srv.URL)
	if c.RefreshToken != "refresh-1" || c.AccessToken != "access-1" {
		t.Fatalf("stored %+v; want the rotated refresh-1", c)
	}
	// While the access token is good, no refresh is spent.
	if tok, err := s.Token(ctx, srv.URL, srv.Client(), clock); err != nil || tok != "access-1" || srv.requests.Load() != 1 {
		t.Fatalf("Token = %q, %v after %d requests; want the stored access-1 and no request", tok, err, srv.requests.Load())
	}
	// Close to its expiry it is refreshed, with the rotated token.
	now = now.Add(2*time.Hour - time.Minute)
	if tok, err := s.Token(ctx, srv.URL, srv.Client(), clock); err != nil || tok != "access-2" {
		t.Fatalf("Token near expiry = %q, %v; want access-2", tok, err)
	}
	if c, _, _ := s.Load(srv.URL); c.RefreshToken != "refresh-2" {
		t.Fatalf("stored refresh token %q, want refresh-2", c.RefreshToken)
	}
}

// TestConcurrentCommandsSpendOneRefreshToken: commands started together
// must not present the same refresh token twice (the server takes that for
// a replay); the lock serialises them and the later ones use the access
// token the first stored.
func TestConcurrentCommandsSpendOneRefreshToken(t *testing.T) {
	t.Parallel()
	srv := newRotatingServer(t, "refresh-0")
	s := Store{Dir: t.TempDir()}
	if err := s.Save(srv.URL, Credentials{ClientID: ClientID, RefreshToken: "refresh-0"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			// Each with its own Store value, as separate processes would.
			if _, err := (Store{Dir: s.Dir}).Token(context.Background(), srv.URL, srv.Client(), time.Now); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := srv.requests.Load(); n != 1 {
		t.Errorf("%d token requests; want 1", n)
	}
}

func TestRefusedRefreshTokenIsForgotten(t *testing.T) {
	t.Parallel()
	srv := newRotatingServer(t, "refresh-0")
	s := Store{Dir: t.TempDir()}
	if err := s.Save(srv.URL, Credentials{ClientID: ClientID, RefreshToken: "spent"}); err != nil {
		t.Fatal(err)
	}
	_, err := s.Token(context.Background(), srv.URL, srv.Client(), time.Now)
	if err == nil || !strings.Contains(err.Error(), "pressroom login") {
		t.Fatalf("Token with a refused refresh token = %v; want an error saying to sign in again", err)
	}
	if _, ok, _ := s.Load(srv.URL); ok {
		t.Error("the refused sign-in is still stored")
	}
	if _, err := s.Token(context.Background(), srv.URL, srv.Client(), time.Now); err != errNotSignedIn {
		t.Errorf("Token without a sign-in = %v; want errNotSignedIn", err)
	}
}

func TestNormalizeAPI(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"http://localhost:8080":             "http://127.0.0.1:8080",
		"http://localhost:8080/":            "http://127.0.0.1:8080",
		"http://127.0.0.1:8080/":            "http://127.0.0.1:8080",
		"HTTP://LocalHost:8080":             "http://127.0.0.1:8080",
		"http://localhost":                  "http://127.0.0.1",
		"http://localhost:80/":              "http://127.0.0.1",
		"https://API.Example.com:443/":      "https://api.example.com",
		"https://api.example.com:8443/v1//": "https://api.example.com:8443/v1",
		"http://[::1]:8080/":                "http://[::1]:8080",
		"http://[::1]:80":                   "http://[::1]",
		" http://127.0.0.1:8080 ":           "http://127.0.0.1:8080",
	} {
		if got, err := NormalizeAPI(in); err != nil || got != want {
			t.Errorf("NormalizeAPI(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "127.0.0.1:8080", "ftp://x", "http://", "http://u:p@x", "http://x/?q=1", "http://x/#f", "mailto:a@b"} {
		if got, err := NormalizeAPI(bad); err == nil {
			t.Errorf("NormalizeAPI(%q) = %q; want an error", bad, got)
		}
	}
}

// TestOneSignInPerAPI: the spellings of one API share its sign-in, and a
// file written before keys were normalized is read under the new keys
// (the sign-in refreshed last wins when two spellings meet) and written
// back so.
func TestOneSignInPerAPI(t *testing.T) {
	t.Parallel()
	s := Store{Dir: t.TempDir()}
	if err := s.Save("http://localhost:8080/", Credentials{ClientID: ClientID, RefreshToken: "r1"}); err != nil {
		t.Fatal(err)
	}
	for _, api := range []string{"http://127.0.0.1:8080", "http://localhost:8080", "HTTP://127.0.0.1:8080/"} {
		if c, ok, err := s.Load(api); err != nil || !ok || c.RefreshToken != "r1" {
			t.Errorf("Load(%q) = %+v %v %v; want the sign-in made at http://localhost:8080/", api, c, ok, err)
		}
	}

	old := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	file := `{"servers":{
		"http://localhost:8080":   {"client_id":"pressroom","refresh_token":"older","expiry":"` + old.Format(time.RFC3339) + `"},
		"http://127.0.0.1:8080/":  {"client_id":"pressroom","refresh_token":"newer","expiry":"` + old.Add(time.Hour).Format(time.RFC3339) + `"},
		"https://api.example.com/": {"client_id":"pressroom","refresh_token":"prod"}}}`
	if err := os.WriteFile(s.path(), []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, _, _ := s.Load("http://localhost:8080"); c.RefreshToken != "newer" {
		t.Errorf("two spellings in an old file: got %q, want the one refreshed last", c.RefreshToken)
	}
	if err := s.Save("https://api.example.com", Credentials{ClientID: ClientID, RefreshToken: "prod2"}); err != nil {
		t.Fatal(err)
	}
	var f credentialsFile
	b, _ := os.ReadFile(s.path())
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Servers) != 2 || f.Servers["http://127.0.0.1:8080"].RefreshToken != "newer" || f.Servers["https://api.example.com"].RefreshToken != "prod2" {
		t.Errorf("the file after a write = %s; want two entries under normalized keys", b)
	}
}
