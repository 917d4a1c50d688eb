package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/pressroom/pressroom/activities"
	"github.com/pressroom/pressroom/workflows"
)

var delivery = workflows.WebhookDeliveryInput{
	DeliveryID: "7b0e1c2d-0000-4000-8000-0000000000d1", WebhookID: "7b0e1c2d-0000-4000-8000-0000000000a1",
	SiteID: "7b0e1c2d-0000-4000-8000-0000000000c1", RetryBase: 5 * time.Second, GiveUpAfter: 72 * time.Hour,
}

func webhookEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, *activities.Webhooks) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	e := s.NewTestWorkflowEnvironment()
	a := &activities.Webhooks{}
	e.RegisterActivity(a)
	return e, a
}

func deliveryStatus(t *testing.T, e *testsuite.TestWorkflowEnvironment) string {
	t.Helper()
	if !e.IsWorkflowCompleted() || e.GetWorkflowError() != nil {
		t.Fatalf("completed %v, error %v", e.IsWorkflowCompleted(), e.GetWorkflowError())
	}
	var status string
	if err := e.GetWorkflowResult(&status); err != nil {
		t.Fatal(err)
	}
	return status
}

func TestWebhookDeliverySucceeds(t *testing.T) {
	e, a := webhookEnv(t)
	e.OnActivity(a.WebhookTurn, mock.Anything, delivery.DeliveryID).Return(workflows.WebhookTurn{Go: true}, nil).Once()
	e.OnActivity(a.DeliverWebhook, mock.Anything, delivery).Return(nil).Once()
	e.OnActivity(a.FinishWebhookDelivery, mock.Anything, delivery.DeliveryID, "").Return("", nil).Once()
	e.ExecuteWorkflow(workflows.WebhookDelivery, delivery)
	if st := deliveryStatus(t, e); st != "succeeded" {
		t.Fatalf("status %q", st)
	}
	e.AssertExpectations(t)
}

// The local steps (whose turn, record the end) wait out a database outage
// longer than one attempt's timeout instead of failing the delivery's run.
func TestWebhookDeliveryOutlivesADatabaseOutage(t *testing.T) {
	e, a := webhookEnv(t)
	down := errors.New("database down")
	// Seven failures back off 1+2+4+8+16+30+30 s each.
	e.OnActivity(a.WebhookTurn, mock.Anything, delivery.DeliveryID).Return(workflows.WebhookTurn{}, down).Times(7)
	e.OnActivity(a.WebhookTurn, mock.Anything, delivery.DeliveryID).Return(workflows.WebhookTurn{Go: true}, nil).Once()
	e.OnActivity(a.DeliverWebhook, mock.Anything, delivery).Return(nil).Once()
	e.OnActivity(a.FinishWebhookDelivery, mock.Anything, delivery.DeliveryID, "").Return("", down).Times(7)
	e.OnActivity(a.FinishWebhookDelivery, mock.Anything, delivery.DeliveryID, "").Return("", nil).Once()
	e.ExecuteWorkflow(workflows.WebhookDelivery, delivery)
	if st := deliveryStatus(t, e); st != "succeeded" {
		t.Fatalf("status %q", st)
	}
	e.AssertExpectations(t)
}

// Failed attempts are retried with exponential backoff from RetryBase,
// doubling: 5 s, 10 s, 20 s.
func TestWebhookDeliveryRetriesWithBackoff(t *testing.T) {
	e, a := webhookEnv(t)
	var starts []time.Time
	e.OnActivity(a.WebhookTurn, mock.Anything, delivery.DeliveryID).Return(workflows.WebhookTurn{Go: true}, nil).Once()
	e.OnActivity(a.DeliverWebhook, mock.Anything, delivery).Return(func(ctx context.Context, _ workflows.WebhookDeliveryInput) error {
		starts = append(starts, e.Now())
		if activity.GetInfo(ctx).Attempt < 4 {
			return errors.New("the receiver answered 500")
		}
		return nil
	}).Times(4)
	e.OnActivity(a.FinishWebhookDelivery, mock.Anything, delivery.DeliveryID, "").Return("", nil).Once()
	e.ExecuteWorkflow(workflows.WebhookDelivery, delivery)
	if st := deliveryStatus(t, e); st != "succeeded" {
		t.Fatalf("status %q", st)
	}
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second}
	for i, w := range want {
		if got := starts[i+1].Sub(starts[i]); got < w || got > w+time.Second {
			t.Errorf("wait before attempt %d = %s, want %s", i+2, got, w)
		}
	}
	e.AssertExpectations(t)
}

// Retrying ends after GiveUpAfter: the delivery is failed with the reason.
func TestWebhookDeliveryGivesUp(t *testing.T) {
	e, a := webhookEnv(t)
	in := delivery
	in.GiveUpAfter = 3 * time.Hour
	attempts := 0
	e.OnActivity(a.WebhookTurn, mock.Anything, in.DeliveryID).Return(workflows.WebhookTurn{Go: true}, nil).Once()
	e.OnActivity(a.DeliverWebhook, mock.Anything, in).Return(func(context.Context, workflows.WebhookDeliveryInput) error {
		attempts++
		return errors.New("request failed: connection refused")
	})
	e.OnActivity(a.FinishWebhookDelivery, mock.Anything, in.DeliveryID, "gave up retrying").Return("", nil).Once()
	e.ExecuteWorkflow(workflows.WebhookDelivery, in)
	if st := deliveryStatus(t, e); st != "failed" {
		t.Fatalf("status %q", st)
	}
	// 5 s doubling, capped at 1 h: 5+10+…+2560 s ≈ 85 min, then 1 h waits.
	if attempts < 10 || attempts > 14 {
		t.Errorf("%d attempts in 3 h", attempts)
	}
	e.AssertExpectations(t)
}

// A 410 (or any rejection) is not retried.
func TestWebhookDeliveryGoneIsNotRetried(t *testing.T) {
	e, a := webhookEnv(t)
	msg := "the receiver answered 410 Gone: the webhook was deactivated"
	e.OnActivity(a.WebhookTurn, mock.Anything, delivery.DeliveryID).Return(workflows.WebhookTurn{Go: true}, nil).Once()
	e.OnActivity(a.DeliverWebhook, mock.Anything, delivery).
		Return(temporal.NewNonRetryableApplicationError(msg, workflows.RejectedType, nil)).Once()
	e.OnActivity(a.FinishWebhookDelivery, mock.Anything, delivery.DeliveryID, msg).Return("", nil).Once()
	e.ExecuteWorkflow(workflows.WebhookDelivery, delivery)
	if st := deliveryStatus(t, e); st != "failed" {
		t.Fatalf("status %q", st)
	}
	e.AssertExpectations(t)
}

// A delivery waits while an earlier one to its webhook is pending, is woken
// by that one's signal, and hands the turn to the next one when it ends.
func TestWebhookDeliveryWaitsForItsTurnAndPassesItOn(t *testing.T) {
	e, a := webhookEnv(t)
	before, next := "7b0e1c2d-0000-4000-8000-0000000000d0", "7b0e1c2d-0000-4000-8000-0000000000d2"
	e.OnActivity(a.WebhookTurn, mock.Anything, delivery.DeliveryID).Return(workflows.WebhookTurn{Before: before}, nil).Once()
	e.OnActivity(a.WebhookTurn, mock.Anything, delivery.DeliveryID).Return(workflows.WebhookTurn{Go: true}, nil).Once()
	e.RegisterDelayedCallback(func() { e.SignalWorkflow(workflows.WebhookTurnSignal, nil) }, time.Second)
	var deliveredAt time.Time
	start := e.Now()
	e.OnActivity(a.DeliverWebhook, mock.Anything, delivery).Return(func(context.Context, workflows.WebhookDeliveryInput) error {
		deliveredAt = e.Now()
		return nil
	}).Once()
	e.OnActivity(a.FinishWebhookDelivery, mock.Anything, delivery.DeliveryID, "").Return(next, nil).Once()
	e.OnSignalExternalWorkflow(mock.Anything, workflows.WebhookDeliveryID(next), "", workflows.WebhookTurnSignal, mock.Anything).Return(nil).Once()
	e.ExecuteWorkflow(workflows.WebhookDelivery, delivery)
	if st := deliveryStatus(t, e); st != "succeeded" {
		t.Fatalf("status %q", st)
	}
	// Woken by the signal after 1 s, not by the 30 s safety-net timer.
	if d := deliveredAt.Sub(start); d < time.Second || d >= 30*time.Second {
		t.Errorf("delivered %s after the start", d)
	}
	e.AssertExpectations(t)
}

// Without a signal, the delivery looks again on a timer that backs off.
func TestWebhookDeliveryLooksAgainWithoutASignal(t *testing.T) {
	e, a := webhookEnv(t)
	e.OnActivity(a.WebhookTurn, mock.Anything, delivery.DeliveryID).Return(workflows.WebhookTurn{Before: "x"}, nil).Times(3)
	e.OnActivity(a.WebhookTurn, mock.Anything, delivery.DeliveryID).Return(workflows.WebhookTurn{Go: true}, nil).Once()
	e.OnActivity(a.DeliverWebhook, mock.Anything, delivery).Return(nil).Once()
	e.OnActivity(a.FinishWebhookDelivery, mock.Anything, delivery.DeliveryID, "").Return("", nil).Once()
	start := e.Now()
	e.ExecuteWorkflow(workflows.WebhookDelivery, delivery)
	if st := deliveryStatus(t, e); st != "succeeded" {
		t.Fatalf("status %q", st)
	}
	if d := e.Now().Sub(start); d < 210*time.Second { // 30 + 60 + 120 s
		t.Errorf("finished %s after the start", d)
	}
	e.AssertExpectations(t)
}

// A delivery that has nothing to do (already ended, webhook gone or
// inactive) ends without an attempt.
func TestWebhookDeliveryDone(t *testing.T) {
	e, a := webhookEnv(t)
	e.OnActivity(a.WebhookTurn, mock.Anything, delivery.DeliveryID).Return(workflows.WebhookTurn{Done: true}, nil).Once()
	// The turn still passes to the next pending delivery.
	e.OnActivity(a.FinishWebhookDelivery, mock.Anything, delivery.DeliveryID, "").Return("", nil).Once()
	e.ExecuteWorkflow(workflows.WebhookDelivery, delivery)
	if st := deliveryStatus(t, e); st != "" {
		t.Fatalf("status %q", st)
	}
	e.AssertExpectations(t)
}

func TestSweepWebhookDeliveries(t *testing.T) {
	e, a := webhookEnv(t)
	e.OnActivity(a.SweepWebhookHeads, mock.Anything).Return(3, nil).Once()
	e.ExecuteWorkflow(workflows.SweepWebhookDeliveries)
	var n int
	if err := e.GetWorkflowResult(&n); err != nil || n != 3 {
		t.Fatalf("sweep = %d, %v", n, err)
	}
}
