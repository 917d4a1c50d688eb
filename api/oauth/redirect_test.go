package oauth_test

// Redirect URI matching and the PKCE method at /oauth/authorize.

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/dev"
)

// otherPort is s.RedirectURI (http://127.0.0.1:<port>/test-callback) on
// another port, and the port.
func (s *server) otherPort(t *testing.T) string {
	t.Helper()
	p, err := dev.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	u := must(url.Parse(s.RedirectURI))
	u.Host = "127.0.0.1:" + strconv.Itoa(p)
	return u.String()
}

// withHost is s.RedirectURI with host (and the same port).
func (s *server) withHost(host string) string {
	u := must(url.Parse(s.RedirectURI))
	u.Host = host + ":" + u.Port()
	return u.String()
}

// refusedAsUnregistered asserts authURL gets the 400 page for a redirect URI
// that is not the client's, and no redirect anywhere.
func (s *server) refusedAsUnregistered(t *testing.T, what, authURL string) {
	t.Helper()
	r := s.browse(t, newBrowser(), http.MethodGet, authURL, nil)
	b := string(body(t, r))
	if r.StatusCode != http.StatusBadRequest || r.Header.Get("Location") != "" || !strings.Contains(b, "not registered") {
		t.Errorf("%s: %d to %q, want the 400 page \"not registered\"", what, r.StatusCode, r.Header.Get("Location"))
	}
}

// A confidential (web) client's redirect URI must be one it registered,
// exactly: op's native-client leniency (any port, "localhost" for
// 127.0.0.1) let a code go to whatever listens on another port.
func TestConfidentialRedirectURIMatchesExactly(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	for what, redirect := range map[string]string{
		"another port":            s.otherPort(t),
		"localhost for 127.0.0.1": s.withHost("localhost"),
		"[::1] for 127.0.0.1":     s.withHost("[::1]"),
		"https":                   strings.Replace(s.RedirectURI, "http:", "https:", 1),
		"another path":            s.RedirectURI + "/more",
		"a query added":           s.RedirectURI + "?next=/",
	} {
		s.refusedAsUnregistered(t, "confidential, "+what, s.authURL(s.ConfID, redirect, nil))
	}
	s.startAuthorize(t, newBrowser(), s.authURL(s.ConfID, s.RedirectURI, nil))
}

// A public (native) client registered with a loopback IP URI may use any
// port on that address (RFC 8252 §7.3), and get its code there; not another
// host, address, scheme or path.
func TestPublicLoopbackRedirectAnyPort(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	const verifier = "loopback-verifier-0123456789-0123456789-0123456789"
	for what, redirect := range map[string]string{
		"localhost for 127.0.0.1": s.withHost("localhost"),
		"[::1] for 127.0.0.1":     s.withHost("[::1]"),
		"https":                   strings.Replace(s.RedirectURI, "http:", "https:", 1),
		"another path":            s.RedirectURI + "/more",
		"another host":            "http://evil.example:" + must(url.Parse(s.RedirectURI)).Port() + "/test-callback",
	} {
		s.refusedAsUnregistered(t, "public, "+what, s.authURL(s.PublicID, redirect, pkce(verifier)))
	}
	other := s.otherPort(t)
	r := s.authorize(t, s.authURL(s.PublicID, other, pkce(verifier)), "editor@demo.test", password)
	if loc := r.Header.Get("Location"); r.StatusCode != http.StatusFound || !strings.HasPrefix(loc, other+"?") {
		t.Fatalf("public client on another port: %d to %q, want its code at %s", r.StatusCode, loc, other)
	}
	code := s.codeOf(t, r)
	if status, m := s.exchange(t, code, other, url.Values{"client_id": {s.PublicID}, "code_verifier": {verifier}}); status != 200 {
		t.Fatalf("exchange = %d %v", status, m)
	}
}

// PKCE's plain method puts the verifier in the URL: refused with
// invalid_request (to the client, or on a page for the out-of-band URN),
// as is a challenge without a method (which means plain) or a method
// without a challenge.
func TestPKCEPlainIsRefused(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	const verifier = "plain-verifier-0123456789-0123456789-0123456789-01"
	for what, extra := range map[string]url.Values{
		"plain":                 {"code_challenge": {verifier}, "code_challenge_method": {"plain"}},
		"no method":             {"code_challenge": {verifier}},
		"S256 and no challenge": {"code_challenge_method": {"S256"}},
		"unknown method":        {"code_challenge": {verifier}, "code_challenge_method": {"S512"}},
	} {
		extra.Set("state", "st")
		for _, client := range []string{s.PublicID, s.ConfID} {
			r := s.browse(t, newBrowser(), http.MethodGet, s.authURL(client, s.RedirectURI, extra), nil)
			loc := must(url.Parse(r.Header.Get("Location")))
			if r.StatusCode != http.StatusFound || !strings.HasPrefix(loc.String(), s.RedirectURI+"?") ||
				loc.Query().Get("error") != "invalid_request" || loc.Query().Get("state") != "st" {
				t.Errorf("%s, %s: %d to %q, want invalid_request at the client", what, client, r.StatusCode, loc)
			}
		}
		r := s.browse(t, newBrowser(), http.MethodGet, s.authURL(oauth.FirstPartyClientID, oauth.OOBRedirectURI, extra), nil)
		if b := string(body(t, r)); r.StatusCode != http.StatusBadRequest || !strings.Contains(b, "S256") {
			t.Errorf("%s, out of band: %d %q, want a 400 page naming S256", what, r.StatusCode, r.Header.Get("Location"))
		}
	}
	s.startAuthorize(t, newBrowser(), s.authURL(s.PublicID, s.RedirectURI, pkce(verifier)))
}
