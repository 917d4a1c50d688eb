package activities

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/pressroom/pressroom/testsupport"
	"github.com/pressroom/pressroom/workflows"
)

// The activity cuts OAuthPruneMargin before now, as an activity, and
// deletes nothing without the throttle window.
func TestPruneExpiredOAuthActivity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testsupport.NewDatabase(t)
	request := func(expired time.Duration) uuid.UUID {
		id := uuid.New()
		if _, err := db.NewRaw(`INSERT INTO oauth_auth_requests (id, client_id, redirect_uri, response_type, browser_hash, expires_at)
			VALUES (?, 'pressroom', 'urn:ietf:wg:oauth:2.0:oob', 'code', 'h', ?)`, id, time.Now().Add(-expired)).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		return id
	}
	old := request(OAuthPruneMargin + time.Minute)
	recent := request(OAuthPruneMargin - time.Minute) // expired, but within the margin

	run := func(window time.Duration) (workflows.PrunedOAuth, error) {
		var s testsuite.WorkflowTestSuite
		e := s.NewTestActivityEnvironment()
		a := &OAuthPrune{DB: db.DB, LoginWindow: window}
		e.RegisterActivity(a)
		v, err := e.ExecuteActivity(a.PruneExpiredOAuth)
		var out workflows.PrunedOAuth
		if err == nil {
			err = v.Get(&out)
		}
		return out, err
	}
	_, err := run(0)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || !app.NonRetryable() {
		t.Fatalf("no window: %v, want a non-retryable error", err)
	}
	got, err := run(15 * time.Minute)
	if err != nil || got != (workflows.PrunedOAuth{AuthRequests: 1}) {
		t.Fatalf("pruned %+v, %v; want 1 authorization request", got, err)
	}
	var left []uuid.UUID
	if err := db.NewRaw("SELECT id FROM oauth_auth_requests ORDER BY id").Scan(ctx, &left); err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0] != recent {
		t.Errorf("left %v, want only %s (not %s)", left, recent, old)
	}
}
