package workflows_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"

	"github.com/pressroom/pressroom/activities"
	"github.com/pressroom/pressroom/workflows"
)

// The prune runs its activity, retrying a failure, and returns what it
// deleted.
func TestPruneExpiredOAuth(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	e := s.NewTestWorkflowEnvironment()
	a := &activities.OAuthPrune{}
	e.RegisterActivity(a)
	want := workflows.PrunedOAuth{AuthRequests: 120, AccessTokens: 7, RefreshTokens: 2}
	e.OnActivity(a.PruneExpiredOAuth, mock.Anything).Return(workflows.PrunedOAuth{}, errors.New("database down")).Once()
	e.OnActivity(a.PruneExpiredOAuth, mock.Anything).Return(want, nil).Once()
	e.ExecuteWorkflow(workflows.PruneExpiredOAuth)
	var got workflows.PrunedOAuth
	if err := e.GetWorkflowResult(&got); err != nil || got != want {
		t.Fatalf("prune = %+v, %v", got, err)
	}
	e.AssertExpectations(t)
}
