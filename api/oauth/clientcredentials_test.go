package oauth_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/pressroom/pressroom/models"
)

// TestClientCredentialsGrant: an integration client of a site gets an
// access token with its secret, without a refresh token; the token reads
// the site with the client's role and carries the rate limit's header
// fields; a wrong secret is invalid_client, a sign-in client is
// unauthorized_client, and a deleted client's token stops at once.
// (Fails on the code before integration clients: unsupported_grant_type.)
func TestClientCredentialsGrant(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	sc, secret, err := models.CreateSiteClient(ctx, s.DB, []byte(s.Config.OAuth.ClientSecretKey), s.Site.ID, "Importer", models.RoleViewer, 0)
	if err != nil {
		t.Fatal(err)
	}
	a := s.post("/oauth/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {sc.ClientID}, "client_secret": {secret}})
	var tok map[string]any
	if err := json.Unmarshal(a.body, &tok); err != nil || a.status != 200 {
		t.Fatalf("client_credentials = %d %s", a.status, a.body)
	}
	if _, ok := tok["refresh_token"]; ok || tok["token_type"] != "bearer" {
		t.Errorf("client_credentials answered %s: want a bearer token and no refresh token", a.body)
	}
	token := tok["access_token"].(string)
	r := s.get(t, "/site", token)
	if r.StatusCode != 200 || r.Header.Get("RateLimit-Policy") != `"client";q=600;w=60` || !strings.HasPrefix(r.Header.Get("RateLimit"), `"client";r=599;t=`) {
		t.Errorf("GET /site with the client's token = %d %s, RateLimit-Policy %q, RateLimit %q", r.StatusCode, body(t, r), r.Header.Get("RateLimit-Policy"), r.Header.Get("RateLimit"))
	}

	for _, c := range []struct {
		name, id, secret string
		status           int
		code             string
	}{
		{"a wrong secret", sc.ClientID, secret + "x", 401, "invalid_client"},
		{"a sign-in client", s.ConfID, s.ConfSecret, 400, "unauthorized_client"},
		{"no secret", s.PublicID, "", 400, "invalid_request"},
	} {
		a := s.post("/oauth/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {c.id}, "client_secret": {c.secret}})
		var e struct{ Error string }
		_ = json.Unmarshal(a.body, &e)
		if a.status != c.status || e.Error != c.code {
			t.Errorf("%s: client_credentials = %d %s, want %d %s", c.name, a.status, a.body, c.status, c.code)
		}
	}

	if err := models.DeleteSiteClient(ctx, s.DB, s.Site.ID, sc.ID); err != nil {
		t.Fatal(err)
	}
	if r := s.get(t, "/site", token); r.StatusCode != 401 {
		t.Errorf("GET /site with a deleted client's token = %d, want 401", r.StatusCode)
	}
}
