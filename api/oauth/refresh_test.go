package oauth_test

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/config"
)

func passwordToken(t *testing.T, s *server) oauth.TokenResponse {
	t.Helper()
	r := s.form(t, "/oauth/token", url.Values{"grant_type": {"password"}, "username": {"editor@demo.test"}, "password": {password}})
	return decodeToken(t, r.StatusCode, body(t, r))
}

func decodeToken(t *testing.T, status int, b []byte) oauth.TokenResponse {
	t.Helper()
	if status != 200 {
		t.Fatalf("token request = %d %s", status, b)
	}
	var tr oauth.TokenResponse
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatal(err)
	}
	return tr
}

func (s *server) refresh(t *testing.T, rt string) (int, []byte) {
	t.Helper()
	r := s.form(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}})
	return r.StatusCode, body(t, r)
}

// refreshed refreshes rt and decodes the 200 answer.
func (s *server) refreshed(t *testing.T, rt string) oauth.TokenResponse {
	t.Helper()
	status, b := s.refresh(t, rt)
	return decodeToken(t, status, b)
}

// refreshChain is a server whose refresh grace period is grace, a password
// login on it (first) and the refresh of that (second).
func refreshChain(t *testing.T, grace time.Duration) (s *server, first, second oauth.TokenResponse) {
	t.Helper()
	s = newServer(t, func(c *config.Config) { c.OAuth.RefreshGrace = grace })
	first = passwordToken(t, s)
	return s, first, s.refreshed(t, first.RefreshToken)
}

// assertReuseRevokes presents the spent refresh token again: it is reuse,
// refused with 400 invalid_grant, and the chain is revoked: its newest
// refresh token and the access tokens of newest and of older stop working.
func (s *server) assertReuseRevokes(t *testing.T, spent string, newest oauth.TokenResponse, older ...oauth.TokenResponse) {
	t.Helper()
	status, b := s.refresh(t, spent)
	var e struct{ Error string }
	if status != 400 || json.Unmarshal(b, &e) != nil || e.Error != "invalid_grant" {
		t.Fatalf("reuse of a spent refresh token = %d %s, want 400 invalid_grant", status, b)
	}
	if status, b := s.refresh(t, newest.RefreshToken); status != 400 {
		t.Errorf("the chain's newest refresh token still works after reuse: %d %s", status, b)
	}
	for _, tok := range append(older, newest) {
		if r := s.get(t, "/users/me", tok.AccessToken); r.StatusCode != 401 {
			t.Errorf("an access token of the revoked chain still works after reuse: %d", r.StatusCode)
		}
	}
}

func TestRefreshThroughATokenSource(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	first := passwordToken(t, s)
	conf := &oauth2.Config{Endpoint: oauth2.Endpoint{TokenURL: s.URL + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams}}
	expired := &oauth2.Token{AccessToken: first.AccessToken, RefreshToken: first.RefreshToken, Expiry: time.Now().Add(-time.Minute)}
	tok, err := conf.TokenSource(context.Background(), expired).Token()
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccessToken == first.AccessToken || tok.RefreshToken == first.RefreshToken || tok.RefreshToken == "" {
		t.Fatal("refresh did not rotate both tokens")
	}
	if r := s.get(t, "/users/me", tok.AccessToken); r.StatusCode != 200 {
		t.Fatalf("refreshed token: /users/me = %d", r.StatusCode)
	}
}

func TestRefreshRotationGraceAndReuse(t *testing.T) {
	t.Parallel()
	s, first, second := refreshChain(t, time.Second)

	// A retry within the grace period (the client lost the response) gets
	// the very same pair.
	retry := s.refreshed(t, first.RefreshToken)
	if retry != second {
		t.Fatalf("retry within grace got a different response:\n%+v\n%+v", retry, second)
	}
	time.Sleep(1500 * time.Millisecond)

	// After it, presenting the spent token again is reuse: refused, and the
	// whole chain is revoked.
	s.assertReuseRevokes(t, first.RefreshToken, second, first)
	// Another login is a new chain and is not affected.
	if r := s.get(t, "/users/me", passwordToken(t, s).AccessToken); r.StatusCode != 200 {
		t.Errorf("a fresh login after the revocation = %d", r.StatusCode)
	}
}

func TestSpentRefreshTokenWorksOnlyForItsClient(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	first := passwordToken(t, s) // issued to the first-party client
	r := s.form(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first.RefreshToken},
		"client_id": {s.ConfID}, "client_secret": {s.ConfSecret}})
	if b := body(t, r); r.StatusCode != 400 {
		t.Fatalf("refresh by another client = %d %s", r.StatusCode, b)
	}
}

// The grace only covers a client that lost the response: once the
// successor has been refreshed, presenting the spent token again is reuse,
// even within the grace period.
func TestRefreshGraceEndsWhenTheSuccessorIsUsed(t *testing.T) {
	t.Parallel()
	s, first, second := refreshChain(t, time.Minute)
	third := s.refreshed(t, second.RefreshToken)

	s.assertReuseRevokes(t, first.RefreshToken, third)
}
