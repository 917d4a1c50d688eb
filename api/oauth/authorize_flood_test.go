package oauth_test

// GET /oauth/authorize stores a row per request: one address cannot make
// it store rows without end, nor make a row large.

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/pressroom/pressroom/config"
)

// authRequests counts the stored authorization requests.
func (s *server) authRequests(t *testing.T) int64 {
	t.Helper()
	n, err := s.DB.NewSelect().Table("oauth_auth_requests").Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// authorizeFrom opens authURL as a browser at addr would, through a
// trusted proxy.
func (s *server) authorizeFrom(t *testing.T, addr, authURL string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, authURL, nil)
	req.Header.Set("X-Forwarded-For", addr)
	r, err := newBrowser().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Body.Close() })
	return r
}

// A flood of authorization requests from one address gets 429 with
// Retry-After once it has stored PRESSROOM_AUTHORIZE_MAX_PER_ADDRESS (60)
// within the window, and stores nothing more; another address is not
// affected.
func TestAuthorizeFloodFromOneAddressIsThrottled(t *testing.T) {
	t.Parallel()
	const limit = 60 // the default
	s := newServer(t, func(c *config.Config) { c.TrustedProxies = []string{"127.0.0.1"} })
	authURL := s.authURL(s.ConfID, s.RedirectURI, url.Values{"state": {strings.Repeat("s", 1000)}})
	accepted := 0
	var refused *http.Response
	for range 200 {
		r := s.authorizeFrom(t, "203.0.113.7", authURL)
		if r.StatusCode != http.StatusFound {
			refused = r
			break
		}
		accepted++
	}
	if refused == nil {
		t.Fatalf("200 authorization requests from one address were all accepted; want 429 after %d", limit)
	}
	if accepted != limit {
		t.Errorf("%d requests accepted before the first refusal, want %d", accepted, limit)
	}
	if refused.StatusCode != http.StatusTooManyRequests || refused.Header.Get("Location") != "" {
		t.Fatalf("refusal = %d to %q, want 429 without a redirect", refused.StatusCode, refused.Header.Get("Location"))
	}
	if n, err := strconv.Atoi(refused.Header.Get("Retry-After")); err != nil || n < 1 {
		t.Errorf("Retry-After %q, want whole seconds", refused.Header.Get("Retry-After"))
	}
	if page := string(body(t, refused)); !strings.Contains(page, "Too many sign-in requests") {
		t.Errorf("429 page: %s", page)
	}
	for range 5 {
		if r := s.authorizeFrom(t, "203.0.113.7", authURL); r.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("a locked address's request = %d, want 429", r.StatusCode)
		}
	}
	if n := s.authRequests(t); n != int64(limit) {
		t.Errorf("%d authorization requests stored, want %d", n, limit)
	}
	if r := s.authorizeFrom(t, "203.0.113.8", authURL); r.StatusCode != http.StatusFound {
		t.Errorf("another address = %d, want 302", r.StatusCode)
	}
}

// A state (or nonce) over 1024 bytes is refused with invalid_request: by
// redirect to the client's registered redirect URI (with the state, as
// RFC 6749 §4.1.2.1 asks), on a page for the out-of-band URI; nothing is
// stored. 1024 bytes are fine.
func TestAuthorizeRefusesAnOverlongState(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	long := strings.Repeat("s", 1025)
	if r := s.browse(t, newBrowser(), http.MethodGet, s.authURL(s.ConfID, s.RedirectURI, url.Values{"state": {long[:1024]}, "nonce": {long[:1024]}}), nil); r.StatusCode != http.StatusFound || !strings.HasPrefix(r.Header.Get("Location"), "/oauth/login?") {
		t.Fatalf("1024-byte state = %d to %q, want the login form", r.StatusCode, r.Header.Get("Location"))
	}
	stored := s.authRequests(t)
	for name, extra := range map[string]url.Values{
		"state": {"state": {long}},
		"nonce": {"state": {"st"}, "nonce": {long}},
	} {
		r := s.browse(t, newBrowser(), http.MethodGet, s.authURL(s.ConfID, s.RedirectURI, extra), nil)
		loc, err := url.Parse(r.Header.Get("Location"))
		if r.StatusCode != http.StatusFound || err != nil || !strings.HasPrefix(loc.String(), s.RedirectURI+"?") {
			t.Fatalf("over-long %s = %d to %q, want a redirect to the client", name, r.StatusCode, r.Header.Get("Location"))
		}
		if q := loc.Query(); q.Get("error") != "invalid_request" || q.Get("state") != extra.Get("state") || q.Get("code") != "" {
			t.Errorf("over-long %s: redirected with %v, want invalid_request and the state", name, q)
		}
	}
	r := s.browse(t, newBrowser(), http.MethodGet, s.authURL("pressroom", "urn:ietf:wg:oauth:2.0:oob", url.Values{"state": {long}}), nil)
	if r.StatusCode != http.StatusBadRequest || r.Header.Get("Location") != "" {
		t.Errorf("over-long state, out of band = %d to %q, want a 400 page", r.StatusCode, r.Header.Get("Location"))
	}
	if n := s.authRequests(t); n != stored {
		t.Errorf("%d authorization requests stored by refused requests", n-stored)
	}
}
