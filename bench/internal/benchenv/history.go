package benchenv

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
)

// RunTimes are the event times of a workflow run of one activity, read
// from its history: where Temporal's share of a run goes.
type RunTimes struct {
	Started, Completed                                    time.Time
	ActivityScheduled, ActivityStarted, ActivityCompleted time.Time
	// TaskScheduled, TaskStarted and TaskCompleted hold each workflow
	// task's, in order.
	TaskScheduled, TaskStarted, TaskCompleted []time.Time
}

// ReadRunTimes reads a completed run's RunTimes. It fails unless the run
// had two workflow tasks and an activity (the shape of a publish).
func ReadRunTimes(ctx context.Context, c client.Client, workflowID string) (RunTimes, error) {
	var r RunTimes
	it := c.GetWorkflowHistory(ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return r, fmt.Errorf("history of %s: %w", workflowID, err)
		}
		at := ev.GetEventTime().AsTime()
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
			r.Started = at
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
			r.Completed = at
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
			r.TaskScheduled = append(r.TaskScheduled, at)
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
			r.TaskStarted = append(r.TaskStarted, at)
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			r.TaskCompleted = append(r.TaskCompleted, at)
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			r.ActivityScheduled = at
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			r.ActivityStarted = at
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			r.ActivityCompleted = at
		}
	}
	if len(r.TaskScheduled) < 2 || len(r.TaskStarted) < 2 || len(r.TaskCompleted) < 1 || r.ActivityStarted.IsZero() || r.Completed.IsZero() {
		return r, fmt.Errorf("workflow %s: history without two workflow tasks and an activity", workflowID)
	}
	return r, nil
}

// FirstTask and LastTask are the dispatch (scheduled → started) of the
// first and the last workflow task.
func (r RunTimes) FirstTask() time.Duration { return r.TaskStarted[0].Sub(r.TaskScheduled[0]) }

// LastTask: see FirstTask.
func (r RunTimes) LastTask() time.Duration {
	return r.TaskStarted[len(r.TaskStarted)-1].Sub(r.TaskScheduled[len(r.TaskScheduled)-1])
}
