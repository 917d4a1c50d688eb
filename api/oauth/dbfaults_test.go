package oauth_test

// A database that fails in the middle of a token exchange or a revocation
// must never be reported as the client's fault (invalid_grant: the client
// discards its token) nor as a success (a logout that did not happen):
// both are 503 with Retry-After, and the token is as it was.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
)

// dbFault is how a statement of the API fails while the test holds its
// table.
type dbFault string

const (
	// lockTimeout: the API's wait for the lock ends at its lock_timeout
	// (SQLSTATE 55P03, a database error that is not an outage).
	lockTimeout dbFault = "lock timeout"
	// terminatedBackend: the test terminates the API's waiting backend
	// (57P01, what a restart does; a cutting proxy looks the same).
	terminatedBackend dbFault = "terminated backend"
)

var dbFaults = []dbFault{lockTimeout, terminatedBackend}

// holdTables makes every statement of the API on tables fail, the way
// fault says, until release: a transaction of the test holds the tables
// locked ACCESS EXCLUSIVE, so even a plain SELECT waits.
func (s *server) holdTables(t *testing.T, fault dbFault, tables ...string) (release func()) {
	t.Helper()
	ctx := context.Background()
	if fault == lockTimeout {
		s.setLockTimeout(t, "200ms")
	}
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range tables {
		if _, err := tx.ExecContext(ctx, "LOCK TABLE "+table+" IN ACCESS EXCLUSIVE MODE"); err != nil {
			t.Fatal(err)
		}
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for fault == terminatedBackend {
			// Whoever waits for a lock in this database waits for ours.
			_, _ = s.DB.ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`)
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	var once sync.Once
	release = func() {
		once.Do(func() {
			close(stop)
			<-stopped
			_ = tx.Rollback()
			if fault == lockTimeout {
				s.setLockTimeout(t, "")
			}
		})
	}
	t.Cleanup(release)
	return release
}

// setLockTimeout sets the database's lock_timeout ("" resets it) and
// recycles the pool's idle connections, so the API's next connections
// start with it.
func (s *server) setLockTimeout(t *testing.T, d string) {
	t.Helper()
	ctx := context.Background()
	q := "ALTER DATABASE ? RESET lock_timeout"
	args := []any{bun.Ident(s.dbName(t))}
	if d != "" {
		q = "ALTER DATABASE ? SET lock_timeout = ?"
		args = append(args, d)
	}
	if _, err := s.DB.NewRaw(q, args...).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	s.DB.SetMaxIdleConns(0)
	s.DB.SetMaxIdleConns(models.DefaultMaxConns)
}

func (s *server) dbName(t *testing.T) string {
	t.Helper()
	var name string
	if err := s.DB.NewRaw("SELECT current_database()").Scan(context.Background(), &name); err != nil {
		t.Fatal(err)
	}
	return name
}

// assertUnavailable checks a 503 with Retry-After and, for the token
// endpoint and op's endpoints alike, an RFC 6749 error body.
func assertUnavailable(t *testing.T, what string, r *http.Response) {
	t.Helper()
	b := body(t, r)
	var e struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(b, &e)
	if r.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("%s = %d %s, want 503", what, r.StatusCode, b)
	}
	t.Logf("%s: %d Retry-After %s %s", what, r.StatusCode, r.Header.Get("Retry-After"), b)
	if n, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || n < 1 {
		t.Errorf("%s: Retry-After %q, want whole seconds", what, r.Header.Get("Retry-After"))
	}
	if e.Error == "" || e.Error == "invalid_grant" || e.Error == "invalid_client" {
		t.Errorf("%s: error %q in %s", what, e.Error, b)
	}
}

// A refresh or a code exchange whose database read fails is 503 with
// Retry-After, not invalid_grant; the same refresh token and the same code
// work once the database answers again.
func TestDatabaseErrorDuringExchangeIs503(t *testing.T) {
	t.Parallel()
	for _, fault := range dbFaults {
		t.Run(string(fault), func(t *testing.T) {
			t.Parallel()
			s := newServer(t)
			tok := passwordToken(t, s)
			release := s.holdTables(t, fault, "oauth_refresh_tokens")
			assertUnavailable(t, "refresh", s.form(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}}))
			release()
			s.refreshed(t, tok.RefreshToken) // still the live token of its chain

			r := s.authorize(t, s.authURL(s.ConfID, s.RedirectURI, url.Values{"state": {"st"}}), "editor@demo.test", password)
			code := s.followToCode(t, r).Get("code")
			exchange := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {s.RedirectURI},
				"client_id": {s.ConfID}, "client_secret": {s.ConfSecret}}
			release = s.holdTables(t, fault, "oauth_auth_requests")
			assertUnavailable(t, "code exchange", s.form(t, "/oauth/token", exchange))
			release()
			if status, m := s.exchange(t, code, s.RedirectURI, url.Values{"client_id": {s.ConfID}, "client_secret": {s.ConfSecret}}); status != 200 {
				t.Fatalf("the code after the fault = %d %v, want 200", status, m)
			}
		})
	}
}

// A revocation that cannot be recorded is 503 with Retry-After, not 200,
// and the token keeps working; once the database answers, revoking works.
func TestRevokeWithTheDatabaseDownIs503(t *testing.T) {
	t.Parallel()
	for _, fault := range dbFaults {
		t.Run(string(fault), func(t *testing.T) {
			t.Parallel()
			s := newServer(t)
			tok := passwordToken(t, s)
			revoke := func(token string, hint ...string) *http.Response {
				v := url.Values{"token": {token}, "client_id": {"pressroom"}}
				if len(hint) > 0 {
					v.Set("token_type_hint", hint[0])
				}
				return s.form(t, "/oauth/revoke", v)
			}

			// A refresh token: its lookup fails.
			release := s.holdTables(t, fault, "oauth_refresh_tokens")
			assertUnavailable(t, "revoke refresh token", revoke(tok.RefreshToken))
			release()
			next := s.refreshed(t, tok.RefreshToken) // not revoked
			if r := s.get(t, "/users/me", next.AccessToken); r.StatusCode != 200 {
				t.Fatalf("/users/me with the new access token = %d", r.StatusCode)
			}

			// An access token: its revocation cannot be written.
			release = s.holdTables(t, fault, "oauth_access_tokens")
			assertUnavailable(t, "revoke access token", revoke(next.AccessToken, "access_token"))
			release()
			if r := s.get(t, "/users/me", next.AccessToken); r.StatusCode != 200 {
				t.Fatalf("/users/me after the failed revocation = %d, want 200", r.StatusCode)
			}

			// With the database up, revocation works.
			if r := revoke(next.RefreshToken); r.StatusCode != 200 {
				t.Fatalf("revoke = %d %s", r.StatusCode, body(t, r))
			}
			if status, b := s.refresh(t, next.RefreshToken); status != 400 {
				t.Fatalf("refresh after the revocation = %d %s, want 400", status, b)
			}
			if r := s.get(t, "/users/me", next.AccessToken); r.StatusCode != 401 {
				t.Fatalf("/users/me after the revocation = %d, want 401", r.StatusCode)
			}
		})
	}
}
