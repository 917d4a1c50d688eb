package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pressroom/pressroom/models"
)

// Integration tokens (issue 28, section 4; docs/auth.md, "Integration
// tokens"): an admin makes an OAuth client for the site, which gets tokens
// with the client_credentials grant and acts as itself with its role, for
// no person, within its own rate limit.

// createClient makes an integration client through POST /oauth-clients
// and returns its resource id, client id and secret.
func (e *editor) createClient(name string, role models.Role, rateLimit int) (string, string, string) {
	e.t.Helper()
	attrs := map[string]any{"name": name, "role": string(role)}
	if rateLimit > 0 {
		attrs["rate-limit"] = rateLimit
	}
	d := e.do(http.MethodPost, "/oauth-clients", map[string]any{"data": map[string]any{"type": "oauth-clients", "attributes": attrs}})
	if d.Status != 201 {
		e.t.Fatalf("POST /oauth-clients = %d %s", d.Status, d.Raw)
	}
	r := d.resource(e.t)
	id, _ := r.Attributes["client-id"].(string)
	secret, _ := r.Attributes["client-secret"].(string)
	if id == "" || secret == "" || r.Attributes["role"] != string(role) {
		e.t.Fatalf("POST /oauth-clients answered %s: want client-id, client-secret and role %s", d.Raw, role)
	}
	return r.ID, id, secret
}

// clientToken gets an access token with the client_credentials grant.
func (s *system) clientToken(t *testing.T, id, secret string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/oauth/token", strings.NewReader(url.Values{"grant_type": {"client_credentials"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	resp, err := s.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var tok map[string]any
	_ = json.Unmarshal(body, &tok)
	if resp.StatusCode != 200 || tok["access_token"] == nil {
		t.Fatalf("client_credentials = %d %s", resp.StatusCode, body)
	}
	if _, ok := tok["refresh_token"]; ok {
		t.Errorf("client_credentials answered a refresh token: %s", body)
	}
	return tok["access_token"].(string)
}

// TestIntegrationClient: an admin's client with the author role creates a
// page whose draft names no user; a viewer client's write is 403; DELETE
// revokes the client's tokens at once; a member who is not an admin cannot
// make clients; the secret is shown only once.
func TestIntegrationClient(t *testing.T) {
	t.Parallel()
	s := start(t)
	admin := s.editor(t, "editor@demo.test")
	id, clientID, secret := admin.createClient("Importer", models.RoleAuthor, 0)
	bot := &editor{t: t, s: s, token: s.clientToken(t, clientID, secret)}

	d := admin.do(http.MethodGet, "/oauth-clients/"+id, nil)
	if r := d.resource(t); d.Status != 200 || r.Attributes["client-secret"] != nil || r.Attributes["rate-limit"] != float64(models.DefaultRateLimit) {
		t.Errorf("GET /oauth-clients/%s = %d %s: want the secret null and rate-limit %d", id, d.Status, d.Raw, models.DefaultRateLimit)
	}

	_, draft := bot.page("From the importer", "imported", "")
	d = bot.do(http.MethodGet, "/drafts/"+draft, nil)
	if d.Status != 200 || string(d.resource(t).Relationships["user"].Data) != "null" {
		t.Errorf("GET /drafts/%s by the client = %d %s: want user null", draft, d.Status, d.Raw)
	}
	if d.Header.Get("RateLimit-Policy") == "" || d.Header.Get("RateLimit") == "" {
		t.Errorf("a client token's answer has RateLimit-Policy %q, RateLimit %q", d.Header.Get("RateLimit-Policy"), d.Header.Get("RateLimit"))
	}

	_, viewerID, viewerSecret := admin.createClient("Reader", models.RoleViewer, 0)
	viewer := &editor{t: t, s: s, token: s.clientToken(t, viewerID, viewerSecret)}
	if status, code, _, _ := viewer.raw(http.MethodPost, "/pages", []byte(`{"data":{"type":"pages","attributes":{"title":"No","slug":"no"}}}`)); status != 403 || code != "forbidden" {
		t.Errorf("a viewer client's POST /pages = %d %s, want 403 forbidden", status, code)
	}
	if status, _, _, _ := viewer.raw(http.MethodGet, "/pages", nil); status != 200 {
		t.Errorf("a viewer client's GET /pages = %d, want 200", status)
	}

	author := s.member(t, "author@demo.test", models.RoleAuthor, "")
	if status, code, _, _ := author.raw(http.MethodPost, "/oauth-clients", []byte(`{"data":{"type":"oauth-clients","attributes":{"name":"Mine","role":"admin"}}}`)); status != 403 || code != "forbidden" {
		t.Errorf("an author's POST /oauth-clients = %d %s, want 403 forbidden", status, code)
	}

	if d := admin.do(http.MethodDelete, "/oauth-clients/"+id, nil); d.Status != 204 {
		t.Fatalf("DELETE /oauth-clients/%s = %d %s", id, d.Status, d.Raw)
	}
	if status, code, _, _ := bot.raw(http.MethodGet, "/pages", nil); status != 401 || code != "invalid_token" {
		t.Errorf("the deleted client's next request = %d %s, want 401 invalid_token", status, code)
	}
}

// TestIntegrationClientRateLimit: past its requests per minute a client
// gets 429 with Retry-After and the draft's RateLimit-Policy and
// RateLimit; a person's token is not counted.
func TestIntegrationClientRateLimit(t *testing.T) {
	t.Parallel()
	s := start(t)
	admin := s.editor(t, "editor@demo.test")
	_, clientID, secret := admin.createClient("Bursty", models.RoleViewer, 3)
	token := s.clientToken(t, clientID, secret)
	// The window is the calendar minute on the database's clock (this
	// machine's): start the burst with at least 20 s of the minute left, so
	// its four requests fall in one window.
	if left := 60 - time.Now().Second(); left < 20 {
		time.Sleep(time.Duration(left+1) * time.Second)
	}
	var last *http.Response
	for i := 0; i < 4; i++ {
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/pages", nil)
		req.Header.Set("Accept", "application/vnd.api+json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := s.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if i < 3 && resp.StatusCode != 200 {
			t.Fatalf("request %d = %d, want 200 within the limit of 3", i+1, resp.StatusCode)
		}
		if i == 0 && (resp.Header.Get("RateLimit-Policy") != `"client";q=3;w=60` || !strings.HasPrefix(resp.Header.Get("RateLimit"), `"client";r=2;t=`)) {
			t.Errorf("first answer: RateLimit-Policy %q, RateLimit %q", resp.Header.Get("RateLimit-Policy"), resp.Header.Get("RateLimit"))
		}
		last = resp
	}
	if last.StatusCode != 429 || last.Header.Get("Retry-After") == "" ||
		last.Header.Get("RateLimit-Policy") != `"client";q=3;w=60` || !strings.HasPrefix(last.Header.Get("RateLimit"), `"client";r=0;t=`) {
		t.Errorf("the 4th request = %d, Retry-After %q, RateLimit-Policy %q, RateLimit %q; want 429 with all three",
			last.StatusCode, last.Header.Get("Retry-After"), last.Header.Get("RateLimit-Policy"), last.Header.Get("RateLimit"))
	}
	for i := 0; i < 5; i++ {
		if d := admin.do(http.MethodGet, "/pages", nil); d.Status != 200 || d.Header.Get("RateLimit") != "" {
			t.Fatalf("a person's GET /pages = %d (RateLimit %q): a person's token is not limited", d.Status, d.Header.Get("RateLimit"))
		}
	}
}

// TestIntegrationClientIdempotencyKey: a client's Idempotency-Key is
// remembered per client (its token names no person): the same POST
// /revisions twice with one key gives one revision; another client, or a
// person, using the same key gets a revision of its own.
func TestIntegrationClientIdempotencyKey(t *testing.T) {
	t.Parallel()
	s := start(t)
	admin := s.editor(t, "editor@demo.test")
	_, clientID, secret := admin.createClient("Builder", models.RoleEditor, 0)
	bot := &editor{t: t, s: s, token: s.clientToken(t, clientID, secret)}
	_, otherID, otherSecret := admin.createClient("Other", models.RoleEditor, 0)
	other := &editor{t: t, s: s, token: s.clientToken(t, otherID, otherSecret)}
	post := func(e *editor, draft string) *doc {
		t.Helper()
		body := map[string]any{"data": map[string]any{"type": "revisions", "relationships": map[string]any{"drafts": map[string]any{"data": []any{map[string]any{"type": "drafts", "id": draft}}}}}}
		return s.callWith(t, e.token, http.MethodPost, "/revisions", body, "Idempotency-Key", "build-42")
	}
	_, draft := bot.page("Built", "built", "")
	first, second := post(bot, draft), post(bot, draft)
	if first.Status != 201 || second.Status != 201 || first.resource(t).ID != second.resource(t).ID {
		t.Fatalf("the client's retry: %d %s / %d %s, want one revision", first.Status, first.Raw, second.Status, second.Raw)
	}
	if d := admin.do(http.MethodGet, "/revisions", nil); len(resources(t, d)) != 1 {
		t.Errorf("GET /revisions after the retry: %s, want one revision", d.Raw)
	}
	_, draft2 := other.page("Other", "other", "")
	if d := post(other, draft2); d.Status != 201 || d.resource(t).ID == first.resource(t).ID {
		t.Errorf("another client's POST with the same key = %d %s, want a revision of its own", d.Status, d.Raw)
	}
	_, draft3 := admin.page("Mine", "mine", "")
	if d := post(admin, draft3); d.Status != 201 || d.resource(t).ID == first.resource(t).ID {
		t.Errorf("a person's POST with the same key = %d %s, want a revision of its own", d.Status, d.Raw)
	}
}

// TestIntegrationClientIdentity: introspection of a client token says
// active, with the client, its site and its role's permissions as scope;
// GET /users/me answers 200 with data null and the client in meta; a
// deleted client's token is inactive.
func TestIntegrationClientIdentity(t *testing.T) {
	t.Parallel()
	s := start(t)
	admin := s.editor(t, "editor@demo.test")
	id, clientID, secret := admin.createClient("Reader", models.RoleViewer, 0)
	token := s.clientToken(t, clientID, secret)
	introspect := func() map[string]any {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/oauth/introspect", strings.NewReader(url.Values{"token": {token}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(url.QueryEscape(clientID), url.QueryEscape(secret))
		resp, err := s.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		if resp.StatusCode != 200 && resp.StatusCode != 401 {
			t.Fatalf("introspection = %d %v", resp.StatusCode, out)
		}
		return out
	}
	got := introspect()
	if got["active"] != true || got["client_id"] != clientID || got["sub"] != clientID || got["site_id"] != s.Site.ID.String() ||
		got["scope"] != "read" || got["role"] != "viewer" {
		t.Errorf("introspection of a client token: %v; want active, client_id and sub %s, site_id %s, scope read, role viewer", got, clientID, s.Site.ID)
	}
	d := s.call(t, token, http.MethodGet, "/users/me", nil)
	var me struct {
		Data json.RawMessage
		Meta struct {
			OAuthClient map[string]any `json:"oauth-client"`
			Memberships []any
		}
	}
	_ = json.Unmarshal(d.Raw, &me)
	if d.Status != 200 || string(me.Data) != "null" || me.Meta.OAuthClient["id"] != id || me.Meta.OAuthClient["client-id"] != clientID ||
		me.Meta.OAuthClient["role"] != "viewer" || me.Meta.OAuthClient["name"] != "Reader" || me.Meta.Memberships == nil {
		t.Errorf("GET /users/me with a client token = %d %s: want 200, data null, the client in meta", d.Status, d.Raw)
	}
	if d := admin.do(http.MethodDelete, "/oauth-clients/"+id, nil); d.Status != 204 {
		t.Fatalf("DELETE /oauth-clients = %d %s", d.Status, d.Raw)
	}
	if got := introspect(); got["active"] == true {
		t.Errorf("introspection after the client's deletion: %v, want inactive (or the client refused)", got)
	}
}

// TestIntegrationClientRateLimitInParallel: parallel requests of one client
// past its limit: exactly the limit pass (the count is one row's UPDATE),
// the rest are 429.
func TestIntegrationClientRateLimitInParallel(t *testing.T) {
	t.Parallel()
	s := start(t)
	admin := s.editor(t, "editor@demo.test")
	const limit, sent = 5, 16
	_, clientID, secret := admin.createClient("Parallel", models.RoleViewer, limit)
	token := s.clientToken(t, clientID, secret)
	if left := 60 - time.Now().Second(); left < 20 { // one calendar minute for the burst
		time.Sleep(time.Duration(left+1) * time.Second)
	}
	statuses := make(chan int, sent)
	var wg sync.WaitGroup
	for range sent {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodGet, s.URL+"/pages", nil)
			req.Header.Set("Accept", "application/vnd.api+json")
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := s.http.Do(req)
			if err != nil {
				statuses <- 0
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses <- resp.StatusCode
		}()
	}
	wg.Wait()
	close(statuses)
	got := map[int]int{}
	for st := range statuses {
		got[st]++
	}
	if got[200] != limit || got[429] != sent-limit {
		t.Errorf("%d parallel requests with a limit of %d: %v, want %d × 200 and %d × 429", sent, limit, got, limit, sent-limit)
	}
}
