package oauth_test

// Benchmarks of the token endpoint and of a bearer-authenticated request
// through the whole HTTP stack (a real server on a socket, real Postgres).
// They run only with -bench, e.g.
//
//	go test -run XXX -bench . -benchtime 20x ./api/oauth/
//
// Every password grant runs argon2id (64 MiB) by design, so it costs tens of
// milliseconds; the refresh and code exchanges do not.

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/auth"
	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
)

// benchServer is a running API with one site, its editor and a public client.
// (newServer takes a *testing.T; both start the API with startAPI.)
type benchServer struct {
	URL, RedirectURI, PublicID string
	http                       *http.Client
}

func newBenchServer(b *testing.B) *benchServer {
	b.Helper()
	ctx := context.Background()
	// BenchmarkIssueCodeGrant starts b.N code flows from one address.
	db, cfg, base := startAPI(b, func(c *config.Config) { c.OAuth.AuthorizeMaxPerAddress = 1 << 30 })
	jar, _ := cookiejar.New(nil) // the login is bound to the browser's cookie
	s := &benchServer{URL: base, RedirectURI: base + "/bench-callback", http: &http.Client{
		Timeout:       30 * time.Second,
		Jar:           jar,
		Transport:     &http.Transport{MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute}, // keep-alive
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
	hash, err := auth.HashPassword(password)
	if err != nil {
		b.Fatal(err)
	}
	site, err := models.CreateSite(ctx, db, "Demo", "demo")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := models.CreateUser(ctx, db, site.ID, "editor@demo.test", "Ed", hash); err != nil {
		b.Fatal(err)
	}
	if s.PublicID, _, err = models.NewOAuthClient(ctx, db, []byte(cfg.OAuth.ClientSecretKey), "Browser app", false, []string{s.RedirectURI}); err != nil {
		b.Fatal(err)
	}
	return s
}

// do sends req and returns the status, the Location header and the body.
func (s *benchServer) do(b *testing.B, req *http.Request) (int, string, []byte) {
	b.Helper()
	r, err := s.http.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Body.Close()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		b.Fatal(err)
	}
	return r.StatusCode, r.Header.Get("Location"), body
}

func (s *benchServer) post(b *testing.B, path string, v url.Values) (int, string, []byte) {
	b.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.URL+path, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return s.do(b, req)
}

func (s *benchServer) getURL(b *testing.B, u string) (int, string, []byte) {
	b.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	return s.do(b, req)
}

// token posts a token request and decodes a 200 answer.
func (s *benchServer) token(b *testing.B, v url.Values) oauth.TokenResponse {
	b.Helper()
	status, _, body := s.post(b, "/oauth/token", v)
	var tok oauth.TokenResponse
	if status != 200 || json.Unmarshal(body, &tok) != nil || tok.AccessToken == "" {
		b.Fatalf("token request (%s) = %d %s", v.Get("grant_type"), status, body)
	}
	return tok
}

func (s *benchServer) passwordGrant(b *testing.B) oauth.TokenResponse {
	b.Helper()
	return s.token(b, url.Values{"grant_type": {"password"}, "username": {"editor@demo.test"}, "password": {password}})
}

// code walks the browser part of the code flow with PKCE and returns a code.
func (s *benchServer) code(b *testing.B, challenge string) string {
	b.Helper()
	status, loc, body := s.getURL(b, s.URL+"/oauth/authorize?"+url.Values{
		"client_id": {s.PublicID}, "redirect_uri": {s.RedirectURI}, "response_type": {"code"}, "scope": {"openid"},
		"state": {"x"}, "code_challenge": {challenge}, "code_challenge_method": {"S256"},
	}.Encode())
	login, err := url.Parse(loc)
	if status != http.StatusFound || err != nil || login.Path != "/oauth/login" {
		b.Fatalf("authorize = %d to %q: %s", status, loc, body)
	}
	id := login.Query().Get("id")
	status, _, body = s.getURL(b, s.URL+"/oauth/login?id="+url.QueryEscape(id))
	token := formTokenOnPage.FindSubmatch(body)
	if status != http.StatusOK || token == nil {
		b.Fatalf("login form = %d %s", status, body)
	}
	status, loc, body = s.post(b, "/oauth/login", url.Values{"id": {id}, "token": {string(token[1])},
		"username": {"editor@demo.test"}, "password": {password}})
	for i := 0; i < 3 && status == http.StatusFound; i++ {
		if strings.HasPrefix(loc, s.RedirectURI) {
			u, err := url.Parse(loc)
			if err != nil || u.Query().Get("code") == "" {
				b.Fatalf("redirect to the client without a code: %q", loc)
			}
			return u.Query().Get("code")
		}
		next, err := url.Parse(s.URL)
		if err != nil {
			b.Fatal(err)
		}
		ref, err := url.Parse(loc)
		if err != nil {
			b.Fatal(err)
		}
		status, loc, body = s.getURL(b, next.ResolveReference(ref).String())
	}
	b.Fatalf("the code flow never reached the client: %d %q %s", status, loc, body)
	return ""
}

func reportTokensPerSecond(b *testing.B) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkUsersMeRequest is one GET /users/me with a bearer token over a
// kept-alive connection: routing, middleware, verification and the handler.
func BenchmarkUsersMeRequest(b *testing.B) {
	s := newBenchServer(b)
	tok := s.passwordGrant(b).AccessToken
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/users/me", nil)
	req.Header.Set("Accept", "application/vnd.api+json")
	req.Header.Set("Authorization", "Bearer "+tok)
	b.ReportAllocs()
	for b.Loop() {
		if status, _, body := s.do(b, req); status != 200 {
			b.Fatalf("/users/me = %d %s", status, body)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "requests/s")
}

// BenchmarkIssuePasswordGrant is one password grant (argon2id included).
// Each success resets the username's failure count, so the throttle never trips.
func BenchmarkIssuePasswordGrant(b *testing.B) {
	s := newBenchServer(b)
	b.ReportAllocs()
	for b.Loop() {
		s.passwordGrant(b)
	}
	reportTokensPerSecond(b)
}

// BenchmarkIssueRefreshGrant is one refresh-token rotation: spend the
// current refresh token, get the next.
func BenchmarkIssueRefreshGrant(b *testing.B) {
	s := newBenchServer(b)
	rt := s.passwordGrant(b).RefreshToken
	b.ReportAllocs()
	for b.Loop() {
		rt = s.token(b, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}}).RefreshToken
	}
	reportTokensPerSecond(b)
}

// BenchmarkIssueCodeGrant times only the code exchange (with PKCE) of the
// public client; the authorize and login steps run with the timer stopped.
func BenchmarkIssueCodeGrant(b *testing.B) {
	s := newBenchServer(b)
	verifier := strings.Repeat("v", 43) + "-bench-verifier"
	sum := sha256.Sum256([]byte(verifier))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		code := s.code(b, challenge)
		b.StartTimer()
		s.token(b, url.Values{"grant_type": {"authorization_code"}, "client_id": {s.PublicID}, "code": {code},
			"redirect_uri": {s.RedirectURI}, "code_verifier": {verifier}})
	}
	reportTokensPerSecond(b)
}
