package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/pressroom/pressroom/models"
)

// The per-site upload queue on the workflow side (docs/assets.md, "The
// queue"). The API accepts every valid notice and starts its run; a run
// then waits for one of its site's PRESSROOM_SITE_UPLOAD_LIMIT processing
// slots (the asset_uploads table is the queue, models/uploadqueue.go)
// before its image work, and when its upload ends it wakes the site's next
// waiting runs with TurnSignal. Waiting holds no worker slot: it is a
// signal or a timer, and the timer is the safety net that makes a lost
// wake-up (a run that ended without waking, a limit raised) cost a delay,
// never a stuck upload.

// uploadQueueChange is the workflow.GetVersion change that put IngestUpload
// behind the queue and made a rejection complete the run with an outcome.
// Runs recorded before it (workflow.DefaultVersion) replay ingestSingleStep.
const uploadQueueChange = "upload-queue"

// TurnSignal wakes an ingestion waiting for its turn: its upload may now
// take a processing slot. It carries nothing; the run looks in the
// database (ClaimSlot), so a signal too many or one lost is harmless.
const TurnSignal = "upload-turn"

// The outcomes a completed ingestion records in PressroomOutcome.
const (
	OutcomeFinished = "finished"
	OutcomeRejected = "rejected"
)

// cancelledMessage is the error-message of an upload whose ingestion an
// operator cancelled.
const cancelledMessage = "processing was cancelled by an operator; post the upload notice again to process the file"

// recheckAfter is how long a waiting run sleeps before it looks at the
// queue again without being woken: longer the further back it waits, so
// a backlog of PRESSROOM_SITE_UPLOAD_BACKLOG runs costs a few workflow
// tasks a second at most.
func recheckAfter(position int) time.Duration {
	return min(max(time.Duration(position)*10*time.Second, 30*time.Second), 5*time.Minute)
}

// ingestInTurn is IngestUpload since the queue: wait for a slot (ClaimSlot;
// the run starts after its notice committed), Ingest, Record; then wake the
// site's next uploads (ReleaseSlot), delete the temporary object and record
// the outcome. A rejection marks the upload "error" (Fail) and completes
// the run with the outcome "rejected", so a Failed run always means a fault
// for an operator. A cancelled run marks its upload "error" too, so it
// neither holds a slot nor blocks its site's queue.
func ingestInTurn(ctx workflow.Context, u Upload) error {
	claimed, err := awaitTurn(ctx, u)
	if !claimed {
		return err // nil: the notice never committed, or a later attempt took over
	}
	if err == nil {
		err = ingestAndRecord(ctx, u)
	}
	msg, rejected := rejection(err)
	cancelled := !rejected && temporal.IsCanceledError(err)
	if err != nil && !rejected && !cancelled {
		return err
	}
	if rejected || cancelled {
		// Recording the end must happen even though the run is being
		// cancelled, hence the disconnected context.
		cleanup, cancel := workflow.NewDisconnectedContext(ctx)
		defer cancel()
		ctx = cleanup
		if cancelled {
			msg = cancelledMessage
		}
		if ferr := workflow.ExecuteLocalActivity(localForever(ctx, 30*time.Second), failActivity, u, msg).Get(ctx, nil); ferr != nil {
			return ferr
		}
	}
	woken, werr := wakeNext(ctx, u)
	if werr != nil {
		return werr
	}
	if err == nil {
		if derr := workflow.ExecuteLocalActivity(localForever(ctx, 30*time.Second), deleteTemporaryActivity, u).Get(ctx, nil); derr != nil {
			return derr
		}
	}
	for _, f := range woken {
		// An upload that ended meanwhile cannot be woken, nor needs to be.
		_ = f.Get(ctx, nil)
	}
	if cancelled {
		return err
	}
	outcome := OutcomeFinished
	if rejected {
		outcome = OutcomeRejected
	}
	return workflow.UpsertTypedSearchAttributes(ctx, OutcomeAttribute.ValueSet(outcome))
}

// ingestAndRecord is the image work (Ingest, one activity task) and
// Record (a local activity).
func ingestAndRecord(ctx workflow.Context, u Upload) error {
	ingest := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		// Inspect waits up to a minute for the file; then the image work.
		StartToCloseTimeout: 12 * time.Minute, HeartbeatTimeout: 30 * time.Second, RetryPolicy: retryForever,
	})
	var processed *Processed
	if err := workflow.ExecuteActivity(ingest, ingestActivity, u).Get(ctx, &processed); err != nil {
		return err
	}
	return workflow.ExecuteLocalActivity(localForever(ctx, 30*time.Second), recordActivity, u, processed).Get(ctx, nil)
}

// awaitTurn waits until the upload holds one of its site's processing
// slots, or is found no longer processing (claimed false). Between looks it
// waits for TurnSignal or, failing that, recheckAfter its position. With an
// error, claimed says whether the upload was found processing first.
func awaitTurn(ctx workflow.Context, u Upload) (claimed bool, err error) {
	claim := localForever(ctx, 30*time.Second)
	wake := workflow.GetSignalChannel(ctx, TurnSignal)
	for {
		var turn models.UploadTurn
		if err := workflow.ExecuteLocalActivity(claim, claimSlotActivity, u).Get(ctx, &turn); err != nil {
			return claimed, err
		}
		if !turn.Claimed || turn.Granted {
			return turn.Claimed, nil
		}
		claimed = true
		if err := waitForWake(ctx, wake, recheckAfter(turn.Position)); err != nil {
			return true, err
		}
	}
}

// waitForWake returns when wake is signalled or after d, whichever comes
// first; an error only when the run is cancelled.
func waitForWake(ctx workflow.Context, wake workflow.ReceiveChannel, d time.Duration) error {
	timerCtx, cancelTimer := workflow.WithCancel(ctx)
	defer cancelTimer()
	var timerErr error
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(wake, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil) })
	sel.AddFuture(workflow.NewTimer(timerCtx, d), func(f workflow.Future) { timerErr = f.Get(ctx, nil) })
	sel.Select(ctx)
	// One look at the queue answers every wake-up received meanwhile.
	for wake.ReceiveAsync(nil) {
	}
	if ctx.Err() != nil {
		return temporal.NewCanceledError()
	}
	if timerErr != nil && !errors.Is(timerErr, workflow.ErrCanceled) {
		return timerErr
	}
	return nil
}

// wakeNext asks which of the site's waiting uploads may now take the slots
// free (ReleaseSlot, after the upload ended and so gave its slot back) and
// signals their runs. It returns the signals' futures.
func wakeNext(ctx workflow.Context, u Upload) ([]workflow.Future, error) {
	var next []string
	if err := workflow.ExecuteLocalActivity(localForever(ctx, 30*time.Second), releaseSlotActivity, u).Get(ctx, &next); err != nil {
		return nil, err
	}
	futures := make([]workflow.Future, 0, len(next))
	for _, id := range next {
		futures = append(futures, workflow.SignalExternalWorkflow(ctx, AssetUploadID(id), "", TurnSignal, nil))
	}
	return futures, nil
}
