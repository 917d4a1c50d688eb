package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pressroom/pressroom/workflows"
)

// The prune of expired OAuth rows end to end: the schedule every worker
// creates at start runs PruneExpiredOAuth on the task queue, whose activity
// deletes an expired authorization request, access token and refresh token
// and keeps the live tokens of a sign-in; the run's result says what went.
func TestOAuthPruneSchedule(t *testing.T) {
	t.Parallel()
	s := start(t)
	ctx := context.Background()
	token := s.token(t, "editor@demo.test") // live rows, which stay
	var user uuid.UUID
	if err := s.DB.NewRaw("SELECT id FROM users WHERE email = 'editor@demo.test'").Scan(ctx, &user); err != nil {
		t.Fatal(err)
	}
	expired := time.Now().Add(-24 * time.Hour)
	for _, q := range []string{
		`INSERT INTO oauth_auth_requests (id, client_id, redirect_uri, response_type, browser_hash, state, expires_at)
			VALUES (gen_random_uuid(), 'pressroom', 'urn:ietf:wg:oauth:2.0:oob', 'code', 'h', repeat('s', 8000), ?0)`,
		`INSERT INTO oauth_access_tokens (id, site_id, user_id, client_id, expires_at) VALUES (gen_random_uuid(), ?1, ?2, 'pressroom', ?0)`,
		`INSERT INTO oauth_refresh_tokens (id, chain_id, token_hash, site_id, user_id, client_id, auth_time, expires_at)
			VALUES (gen_random_uuid(), gen_random_uuid(), 'expired', ?1, ?2, 'pressroom', ?0, ?0)`,
	} {
		if _, err := s.DB.NewRaw(q, expired, s.Site.ID, user).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}

	var got workflows.PrunedOAuth
	run := s.runScheduleNow(t, workflows.OAuthPruneScheduleID+"-"+s.Config.TaskQueue, time.Hour, &got, "prune-expired-oauth.history.json")
	if want := (workflows.PrunedOAuth{AuthRequests: 1, AccessTokens: 1, RefreshTokens: 1}); got != want {
		t.Errorf("prune run %s deleted %+v, want %+v", run, got, want)
	}
	for table, want := range map[string]int64{"oauth_auth_requests": 0, "oauth_access_tokens": 1, "oauth_refresh_tokens": 1} {
		if n, err := s.DB.NewSelect().Table(table).Count(ctx); err != nil || n != want {
			t.Errorf("%s: %d rows left (%v), want %d", table, n, err, want)
		}
	}
	if d := s.call(t, token, http.MethodGet, "/users/me", nil); d.Status != 200 {
		t.Errorf("the live token after the prune: %d %s", d.Status, d.Raw)
	}
}
