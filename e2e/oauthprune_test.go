package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"

	"github.com/pressroom/pressroom/worker"
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

	if err := worker.EnsureSchedules(ctx, s.Temporal, s.Config); err != nil {
		t.Fatal(err)
	}
	id := workflows.OAuthPruneScheduleID + "-" + s.Config.TaskQueue
	sched := s.Temporal.ScheduleClient().GetHandle(ctx, id)
	t.Cleanup(func() {
		hooks := s.Config.Webhooks.TaskQueue
		for _, id := range []string{id, workflows.WebhookSweepScheduleID + "-" + hooks, workflows.WebhookPruneScheduleID + "-" + hooks} {
			_ = s.Temporal.ScheduleClient().GetHandle(ctx, id).Delete(ctx)
		}
	})
	d, err := sched.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if every := d.Schedule.Spec.Intervals; len(every) != 1 || every[0].Every != time.Hour {
		t.Errorf("OAuth prune schedule intervals %+v, want hourly", every)
	}
	// Run it now rather than wait for the hour.
	if err := sched.Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
		t.Fatal(err)
	}
	var run string
	for deadline := time.Now().Add(time.Minute); run == "" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if d, err = sched.Describe(ctx); err == nil && len(d.Info.RecentActions) > 0 {
			run = d.Info.RecentActions[0].StartWorkflowResult.WorkflowID
		}
	}
	if run == "" {
		t.Fatal("the triggered prune did not start")
	}
	var got workflows.PrunedOAuth
	wait, cancel := context.WithTimeout(ctx, 2*time.Minute) // the run's own timeout is an hour
	defer cancel()
	if err := s.Temporal.GetWorkflow(wait, run, "").Get(wait, &got); err != nil {
		t.Fatalf("prune run %s: %v", run, err)
	}
	s.recordHistory(t, run, "prune-expired-oauth.history.json")
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
