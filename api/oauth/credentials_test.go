package oauth_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/pressroom/pressroom/auth"
	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/testsupport"
)

// answer is one response, read whole; safe to collect from goroutines.
type answer struct {
	status int
	header http.Header
	body   []byte
	err    error
}

func (s *server) post(path string, v url.Values, headers ...string) answer {
	r, err := s.http.Do(formRequest(s.URL+path, v, headers...))
	if err != nil {
		return answer{err: err}
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	return answer{status: r.StatusCode, header: r.Header, body: b, err: err}
}

// parallel runs n calls of f at once and returns their answers.
func parallel(n int, f func(i int) answer) []answer {
	out := make([]answer, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i] = f(i)
		}()
	}
	close(start)
	wg.Wait()
	return out
}

func statuses(t *testing.T, as []answer) map[int]int {
	t.Helper()
	m := map[int]int{}
	for _, a := range as {
		if a.err != nil {
			t.Fatal(a.err)
		}
		m[a.status]++
	}
	return m
}

func login(user, pass string) url.Values {
	return url.Values{"grant_type": {"password"}, "username": {user}, "password": {pass}}
}

// Correct passwords are not guesses: many at once from one address all
// sign in, and leave neither the user nor the address locked.
func TestParallelCorrectLoginsAllSucceed(t *testing.T) {
	t.Parallel()
	// Plenty of time for the hashing queue: this is about what the
	// throttle counts, not about a slow machine's 503s.
	s := newServer(t, func(c *config.Config) { c.OAuth.HashWait = time.Minute })
	const n = 50
	got := statuses(t, parallel(n, func(int) answer { return s.post("/oauth/token", login("editor@demo.test", password)) }))
	if got[200] != n {
		t.Fatalf("%d concurrent correct logins from one address: statuses %v, want %d × 200", n, got, n)
	}
	if r, m := secAttempt(t, s, "editor@demo.test", password); r.StatusCode != 200 {
		t.Errorf("a login after them = %d %v", r.StatusCode, m)
	}
	if r, m := secAttempt(t, s, "editor@other.test", password); r.StatusCode != 200 {
		t.Errorf("another user from the same address = %d %v", r.StatusCode, m)
	}
}

// The throttle key is the user the lookup finds, not the spelling of the
// name: every spelling Postgres's lower() resolves to the user (here İ,
// which this database folds to i) shares the user's budget, whatever Go's
// lowercasing makes of it. (Go and this database fold İ alike; with an ICU
// or builtin collation they do not, and a key from Go's lowercasing gave
// each spelling a budget of its own.)
func TestThrottleKeysOnTheResolvedUser(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	var folded string
	if err := s.DB.NewRaw("SELECT lower('EDİTOR@DEMO.TEST')").Scan(context.Background(), &folded); err != nil {
		t.Fatal(err)
	}
	if folded != "editor@demo.test" {
		t.Skipf("this database folds İ to %q, not to i", folded)
	}
	limit := s.Config.OAuth.LoginMaxFailures
	for i := range limit {
		user := []string{"edİtor@demo.test", "EDİTOR@demo.test", "editor@demo.test"}[i%3]
		if r, m := secAttempt(t, s, user, "guess "+strconv.Itoa(i)); r.StatusCode != 400 {
			t.Fatalf("failure %d (%s) = %d %v", i, user, r.StatusCode, m)
		}
	}
	for _, user := range []string{"editor@demo.test", "edİtor@demo.test"} {
		r, m := secAttempt(t, s, user, password)
		secAssertLocked(t, user+" after failures under every spelling", r, m, s.Config.OAuth.LoginLockout)
	}
}

// A client row from before secrets were HMACs holds an argon2id hash: it
// still authenticates, and the first success replaces it with the HMAC.
func TestLegacyClientSecretIsRehashedOnUse(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	ctx := context.Background()
	secret, _ := auth.RandomSecret(32)
	legacy, _ := auth.HashPassword(secret)
	if err := models.CreateOAuthClient(ctx, s.DB, &models.OAuthClient{ID: "legacy", Name: "Old", Confidential: true, SecretHash: &legacy}); err != nil {
		t.Fatal(err)
	}
	grant := login("editor@demo.test", password)
	withSecret := func(sec string) url.Values {
		v := url.Values{}
		for k, vs := range grant {
			v[k] = vs
		}
		v.Set("client_id", "legacy")
		v.Set("client_secret", sec)
		return v
	}
	if a := s.post("/oauth/token", withSecret("wrong")); a.status != 401 {
		t.Fatalf("wrong secret of a legacy client = %d %s", a.status, a.body)
	}
	stored := func() string {
		var c models.OAuthClient
		if err := s.DB.NewSelect().Model(&c).Where("id = 'legacy'").Scan(ctx); err != nil {
			t.Fatal(err)
		}
		return *c.SecretHash
	}
	if h := stored(); h != legacy {
		t.Fatalf("a failed check changed the stored hash")
	}
	if a := s.post("/oauth/token", withSecret(secret)); a.status != 200 {
		t.Fatalf("right secret of a legacy client = %d %s", a.status, a.body)
	}
	h := stored()
	if auth.IsLegacyClientSecretHash(h) || auth.CheckClientSecret([]byte(s.Config.OAuth.ClientSecretKey), h, secret) != nil {
		t.Fatalf("after a success the stored hash is %q, want the HMAC of the secret", h)
	}
	if a := s.post("/oauth/token", withSecret(secret)); a.status != 200 {
		t.Fatalf("right secret after the rehash = %d %s", a.status, a.body)
	}
	if a := s.post("/oauth/token", withSecret("wrong")); a.status != 401 {
		t.Fatalf("wrong secret after the rehash = %d %s", a.status, a.body)
	}
}

// Failed client authentications lock the address (token endpoint and op's
// introspection and revocation alike); public-client sign-in, which needs
// no client authentication, goes on.
func TestClientAuthenticationFailuresLockTheAddress(t *testing.T) {
	t.Parallel()
	const limit = 3
	s := newServer(t, func(c *config.Config) { c.OAuth.ClientMaxFailuresPerAddress = limit })
	tok := passwordToken(t, s)
	bad := url.Values{"grant_type": {"password"}, "username": {"editor@demo.test"}, "password": {password},
		"client_id": {"made-up"}, "client_secret": {"nope"}}
	for i := range limit {
		if a := s.post("/oauth/introspect", url.Values{"token": {tok.AccessToken}}, "Authorization", secBasic("made-up", "nope")); a.status != 401 {
			t.Fatalf("bad client %d = %d %s, want 401", i, a.status, a.body)
		}
	}
	check := func(what string, a answer) {
		t.Helper()
		ra, err := strconv.Atoi(a.header.Get("Retry-After"))
		if a.status != 429 || err != nil || ra <= 0 {
			t.Errorf("%s from a locked address = %d Retry-After %q %s, want 429 with Retry-After", what, a.status, a.header.Get("Retry-After"), a.body)
		}
	}
	grant := login("editor@demo.test", password)
	grant.Set("client_id", s.ConfID)
	grant.Set("client_secret", s.ConfSecret)
	a := s.post("/oauth/token", grant)
	check("token request of a real confidential client", a)
	var e struct{ Error string }
	if json.Unmarshal(a.body, &e) != nil || e.Error != "slow_down" {
		t.Errorf("locked token request body %s, want error slow_down", a.body)
	}
	check("introspection", s.post("/oauth/introspect", url.Values{"token": {tok.AccessToken}}, "Authorization", secBasic(s.ConfID, s.ConfSecret)))
	check("revocation", s.post("/oauth/revoke", url.Values{"token": {tok.RefreshToken}}, "Authorization", secBasic(s.ConfID, s.ConfSecret)))
	check("token request of an unknown client", s.post("/oauth/token", bad))
	if r, m := secAttempt(t, s, "editor@demo.test", password); r.StatusCode != 200 {
		t.Errorf("first-party (public client) sign-in from the address = %d %v, want 200", r.StatusCode, m)
	}
}

// starveHashing leaves hashing memory for one check at a time and almost
// no wait for it.
func starveHashing(c *config.Config) {
	c.OAuth.HashMemory = 64 << 20
	c.OAuth.HashWait = 5 * time.Millisecond
}

// With hashing memory for one check and almost no wait, parallel sign-ins
// that cannot get it are refused with 503 and Retry-After instead of
// queueing, in the token endpoint's JSON error shape.
func TestHashBudgetExhaustedAnswers503(t *testing.T) {
	t.Parallel()
	s := newServer(t, starveHashing)
	as := parallel(12, func(i int) answer {
		return s.post("/oauth/token", login("editor@"+[]string{"demo", "other"}[i%2]+".test", password))
	})
	got := statuses(t, as)
	if got[200]+got[503] != len(as) || got[503] == 0 || got[200] == 0 {
		t.Fatalf("statuses %v, want some 200 and some 503 only", got)
	}
	for _, a := range as {
		if a.status != 503 {
			continue
		}
		var e struct {
			Error            string `json:"error"`
			ErrorDescription string `json:"error_description"`
		}
		if ra, err := strconv.Atoi(a.header.Get("Retry-After")); err != nil || ra <= 0 {
			t.Errorf("503 without Retry-After: %q", a.header.Get("Retry-After"))
		}
		if json.Unmarshal(a.body, &e) != nil || e.Error != "temporarily_unavailable" || e.ErrorDescription == "" ||
			a.header.Get("Content-Type") != "application/json;charset=UTF-8" {
			t.Errorf("503 body %s (%s)", a.body, a.header.Get("Content-Type"))
		}
	}
	// Nothing was counted as a failure: the right password still works.
	if r, m := secAttempt(t, s, "editor@demo.test", password); r.StatusCode != 200 {
		t.Errorf("after the 503s = %d %v", r.StatusCode, m)
	}
}

// op's endpoints get the same 503 when a (legacy, argon2id) client secret
// cannot be checked in time.
func TestHashBudgetExhaustedAnswers503OnIntrospection(t *testing.T) {
	t.Parallel()
	s := newServer(t, starveHashing, func(c *config.Config) { c.OAuth.ClientMaxFailuresPerAddress = 1000 })
	legacy, _ := auth.HashPassword("the old secret")
	if err := models.CreateOAuthClient(context.Background(), s.DB, &models.OAuthClient{ID: "legacy", Name: "Old", Confidential: true, SecretHash: &legacy}); err != nil {
		t.Fatal(err)
	}
	as := parallel(12, func(int) answer {
		return s.post("/oauth/introspect", url.Values{"token": {"x"}}, "Authorization", secBasic("legacy", "wrong"))
	})
	got := statuses(t, as)
	if got[401]+got[503] != len(as) || got[503] == 0 {
		t.Fatalf("statuses %v, want 401 and some 503 only", got)
	}
	for _, a := range as {
		if a.status == 503 && a.header.Get("Retry-After") == "" {
			t.Errorf("503 without Retry-After")
		}
	}
}

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
