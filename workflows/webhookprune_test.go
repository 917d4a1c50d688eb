package workflows_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/mock"

	"github.com/pressroom/pressroom/workflows"
)

// The prune runs its activity, retrying a failure (the next schedule's run
// would otherwise be the first to try again), and returns what it deleted.
func TestPruneWebhookHistory(t *testing.T) {
	e, a := webhookEnv(t)
	e.OnActivity(a.PruneWebhookHistory, mock.Anything).Return(workflows.PrunedWebhookHistory{}, errors.New("database down")).Once()
	e.OnActivity(a.PruneWebhookHistory, mock.Anything).Return(workflows.PrunedWebhookHistory{Deliveries: 12, Events: 4}, nil).Once()
	e.ExecuteWorkflow(workflows.PruneWebhookHistory)
	var got workflows.PrunedWebhookHistory
	if err := e.GetWorkflowResult(&got); err != nil || got != (workflows.PrunedWebhookHistory{Deliveries: 12, Events: 4}) {
		t.Fatalf("prune = %+v, %v", got, err)
	}
	e.AssertExpectations(t)
}
