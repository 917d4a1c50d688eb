package oauth_test

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"

	"golang.org/x/oauth2"

	"github.com/pressroom/pressroom/testsupport"
)

func TestPasswordGrantWithOAuth2Client(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	conf := &oauth2.Config{Endpoint: oauth2.Endpoint{TokenURL: s.URL + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams}}
	tok, err := conf.PasswordCredentialsToken(context.Background(), "editor@demo.test", password)
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccessToken == "" || tok.RefreshToken == "" || tok.TokenType != "bearer" || tok.ExpiresIn != 7200 {
		t.Fatalf("token = %+v", tok)
	}
	r := s.get(t, "/users/me", tok.AccessToken)
	b := body(t, r)
	if r.StatusCode != 200 {
		t.Fatalf("/users/me = %d %s", r.StatusCode, b)
	}
	testsupport.ValidateJSONAPI(t, b)
	var doc struct {
		Data struct {
			ID         string
			Type       string
			Attributes struct{ Email string }
			Links      struct{ Self string }
		}
	}
	_ = json.Unmarshal(b, &doc)
	if doc.Data.ID != s.Editor.ID.String() || doc.Data.Type != "users" || doc.Data.Attributes.Email != "editor@demo.test" ||
		doc.Data.Links.Self != s.URL+"/users/"+s.Editor.ID.String() {
		t.Errorf("users/me = %s", b)
	}
}

func TestTokenResponseIsExactlyAsSpecified(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	for _, path := range []string{"/oauth/token", "/oauth/token.json"} {
		for _, ct := range []string{"application/x-www-form-urlencoded", "application/x-www-form-urlencoded;charset=UTF-8"} {
			r := s.form(t, path, url.Values{"grant_type": {"password"}, "username": {"editor@demo.test"}, "password": {password}}, "Content-Type", ct)
			b := body(t, r)
			if r.StatusCode != 200 {
				t.Fatalf("%s (%s) = %d %s", path, ct, r.StatusCode, b)
			}
			for h, want := range map[string]string{"Content-Type": "application/json;charset=UTF-8", "Cache-Control": "no-store", "Pragma": "no-cache"} {
				if got := r.Header.Get(h); got != want {
					t.Errorf("%s: %s = %q, want %q", path, h, got, want)
				}
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			if m["token_type"] != "bearer" || m["access_token"] == "" || m["refresh_token"] == "" || m["expires_in"] != float64(7200) {
				t.Errorf("%s body = %s", path, b)
			}
		}
	}
}
