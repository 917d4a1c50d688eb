package workflows_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"

	"github.com/pressroom/pressroom/activities"
	"github.com/pressroom/pressroom/workflows"
)

// The history prune runs its activity, retrying a failure, and returns
// what it deleted.
func TestPruneHistory(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	e := s.NewTestWorkflowEnvironment()
	a := &activities.HistoryPrune{}
	e.RegisterActivity(a)
	want := workflows.PrunedHistory{Trashed: 12, Versions: 3400}
	e.OnActivity(a.PruneHistory, mock.Anything).Return(workflows.PrunedHistory{}, errors.New("database down")).Once()
	e.OnActivity(a.PruneHistory, mock.Anything).Return(want, nil).Once()
	e.ExecuteWorkflow(workflows.PruneHistory)
	var got workflows.PrunedHistory
	if err := e.GetWorkflowResult(&got); err != nil || got != want {
		t.Fatalf("prune = %+v, %v", got, err)
	}
	e.AssertExpectations(t)
}
