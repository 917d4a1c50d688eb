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
	s := newServer(t, func(c *config.Config) { c.OAuth.RefreshGrace = time.Second })
	first := passwordToken(t, s)
	second := s.refreshed(t, first.RefreshToken)

	// A retry within the grace period (the client lost the response) gets
	// the very same pair.
	retry := s.refreshed(t, first.RefreshToken)
	if retry != second {
		t.Fatalf("retry within grace got a different response:\n%+v\n%+v", retry, second)
	}
	time.Sleep(1500 * time.Millisecond)

	// After it, presenting the spent token again is reuse: refused, and the
	// whole chain is revoked.
	status, b := s.refresh(t, first.RefreshToken)
	if status != 400 || !json.Valid(b) {
		t.Fatalf("reuse = %d %s", status, b)
	}
	var e struct{ Error string }
	_ = json.Unmarshal(b, &e)
	if e.Error != "invalid_grant" {
		t.Errorf("reuse error = %q", e.Error)
	}
	if status, b := s.refresh(t, second.RefreshToken); status != 400 {
		t.Errorf("the chain's newest refresh token still works after reuse: %d %s", status, b)
	}
	for _, at := range []string{first.AccessToken, second.AccessToken} {
		if r := s.get(t, "/users/me", at); r.StatusCode != 401 {
			t.Errorf("an access token of the revoked chain still works: %d", r.StatusCode)
		}
	}
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
	s := newServer(t, func(c *config.Config) { c.OAuth.RefreshGrace = time.Minute })
	first := passwordToken(t, s)
	second := s.refreshed(t, first.RefreshToken)
	third := s.refreshed(t, second.RefreshToken)

	status, b := s.refresh(t, first.RefreshToken)
	var e struct{ Error string }
	_ = json.Unmarshal(b, &e)
	if status != 400 || e.Error != "invalid_grant" {
		t.Fatalf("the spent token after its successor was used = %d %s, want 400 invalid_grant", status, b)
	}
	if status, b := s.refresh(t, third.RefreshToken); status != 400 {
		t.Errorf("the chain's newest refresh token still works after reuse: %d %s", status, b)
	}
	if r := s.get(t, "/users/me", third.AccessToken); r.StatusCode != 401 {
		t.Errorf("the chain's newest access token still works after reuse: %d", r.StatusCode)
	}
}
