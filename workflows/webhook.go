package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// WebhookDeliveryID is the workflow id of a delivery: the delivery id is
// the idempotency key, so a delivery is never worked on twice at once.
func WebhookDeliveryID(deliveryID string) string { return "webhook-delivery-" + deliveryID }

// WebhookSweepScheduleID names the schedule that runs SweepWebhookDeliveries.
const WebhookSweepScheduleID = "pressroom-sweep-webhook-deliveries"

// WebhookTurnSignal tells a delivery waiting for its turn that the delivery
// before it (to the same webhook) has ended.
const WebhookTurnSignal = "webhook-turn"

// Activities of webhook delivery (activities.Webhooks).
const (
	webhookTurnActivity    = "WebhookTurn"
	deliverWebhookActivity = "DeliverWebhook"
	finishWebhookActivity  = "FinishWebhookDelivery"
	sweepWebhookActivity   = "SweepWebhookHeads"
)

// WebhookDeliveryInput is the input of WebhookDelivery. The retry settings
// travel with it (set from the worker's configuration when it is started),
// so the workflow stays deterministic.
type WebhookDeliveryInput struct {
	DeliveryID string
	WebhookID  string
	SiteID     string
	// RetryBase is the wait before the first retry (doubling, MaxRetryInterval
	// at most); GiveUpAfter bounds the attempts from the first one on.
	RetryBase   time.Duration
	GiveUpAfter time.Duration
}

// WebhookTurn is what WebhookTurn answers: whether the delivery may be
// attempted now (no earlier delivery to its webhook is pending), or has
// nothing left to do (it ended, its webhook is gone or inactive).
type WebhookTurn struct {
	Go, Done bool
	// Before is the pending delivery it waits for.
	Before string
}

// MaxRetryInterval caps the backoff between attempts of a delivery.
const MaxRetryInterval = time.Hour

// firstTurnWait is the first wait for a turn without a signal.
const firstTurnWait = 30 * time.Second

// maxTurnWait caps the wait between looks at the delivery ahead when its
// signal does not come (the signal is the fast path, this the safety net).
const maxTurnWait = 5 * time.Minute

// WebhookDelivery delivers one event to one webhook:
//
//  1. wait for its turn: deliveries to one webhook go out in event order,
//     so while an earlier one is pending (being retried) this one waits,
//     woken by that one's WebhookTurnSignal when it ends (or, as a safety
//     net, by a timer that backs off to 5 minutes);
//  2. DeliverWebhook, retried with exponential backoff from RetryBase,
//     doubling, at most an hour apart, until it succeeds or GiveUpAfter
//     passes (its ScheduleToClose); a 410 or a rejection ends it at once;
//  3. FinishWebhookDelivery records a failure, starts the workflow of the
//     webhook's next pending delivery and names it; it is signalled its
//     turn (which wakes it if it was started before and waits).
//
// Only the head of a webhook's queue normally has a workflow: the worker's
// dispatcher starts a webhook's oldest pending delivery, and each delivery
// starts the next when it ends.
//
// It returns the delivery's final status.
func WebhookDelivery(ctx workflow.Context, in WebhookDeliveryInput) (string, error) {
	local := localForever(ctx, 30*time.Second)
	turns := workflow.GetSignalChannel(ctx, WebhookTurnSignal)
	// A signal of the delivery ahead is the fast path; the timer only
	// covers a signal that was lost. It starts long enough that a backlog
	// of waiting deliveries does not keep the worker busy looking.
	wait := firstTurnWait
	var turn WebhookTurn
	for {
		if err := workflow.ExecuteLocalActivity(local, webhookTurnActivity, in.DeliveryID).Get(ctx, &turn); err != nil {
			return "", err
		}
		if turn.Go || turn.Done {
			break
		}
		timerCtx, cancel := workflow.WithCancel(ctx)
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(turns, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil) })
		sel.AddFuture(workflow.NewTimer(timerCtx, wait), func(workflow.Future) {})
		sel.Select(ctx)
		cancel()
		wait = min(2*wait, maxTurnWait)
	}

	// Done: nothing to send (the delivery ended, or its webhook is gone or
	// inactive), but the turn is still passed on below.
	status, failure := "", ""
	if turn.Go {
		deliver := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			// The HTTP request has 10 s; the rest is for the database.
			StartToCloseTimeout:    30 * time.Second,
			ScheduleToCloseTimeout: in.GiveUpAfter,
			RetryPolicy: &temporal.RetryPolicy{
				InitialInterval:        in.RetryBase,
				BackoffCoefficient:     2,
				MaximumInterval:        MaxRetryInterval,
				NonRetryableErrorTypes: []string{RejectedType},
			},
		})
		status = "succeeded"
		if err := workflow.ExecuteActivity(deliver, deliverWebhookActivity, in).Get(ctx, nil); err != nil {
			status, failure = "failed", failureMessage(err)
		}
	}

	// Recorded even if the workflow is being cancelled.
	finish, cancel := workflow.NewDisconnectedContext(local)
	defer cancel()
	var next string
	if err := workflow.ExecuteLocalActivity(finish, finishWebhookActivity, in.DeliveryID, failure).Get(finish, &next); err != nil {
		return "", err
	}
	if next != "" {
		// FinishWebhookDelivery started the next delivery's workflow; the
		// signal wakes it if it had been started before and waits for its
		// turn. A fresh one finds its turn by itself, so a failed signal
		// does not matter.
		_ = workflow.SignalExternalWorkflow(finish, WebhookDeliveryID(next), "", WebhookTurnSignal, nil).Get(finish, nil)
	}
	// Turn signals that came after the wait (from a delivery ahead that
	// ended while this one was already going) have nothing left to wake.
	for turns.ReceiveAsync(nil) {
	}
	return status, nil
}

// failureMessage is what a failed delivery records: a rejection's
// message, or that retrying ran out of time (the last attempt's error is
// already recorded with the delivery).
func failureMessage(err error) string {
	var app *temporal.ApplicationError
	var timeout *temporal.TimeoutError
	switch {
	case errors.As(err, &timeout):
		return "gave up retrying"
	case errors.As(err, &app) && app.NonRetryable():
		return app.Message()
	case errors.As(err, &app):
		// Retrying stopped because the next attempt would come after
		// GiveUpAfter: the last attempt's error is passed on.
		return "gave up retrying"
	}
	return err.Error()
}

// SweepWebhookDeliveries starts the next delivery of every webhook with
// one pending when a crash left it unstarted (the event committed, the
// dispatcher never got to it) or its workflow is gone. Starting twice is
// harmless: the workflow id is the delivery's.
func SweepWebhookDeliveries(ctx workflow.Context) (int, error) {
	return runScheduled[int](ctx, sweepWebhookActivity, 5*time.Minute)
}
