package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"go.temporal.io/sdk/activity"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
	"github.com/pressroom/pressroom/workflows"
)

// Publisher is the activity of the publish-revision workflow.
type Publisher struct {
	DB     *bun.DB
	Engine *drafts.Engine
}

// Publish applies a revision in one database transaction. It is safe to
// run twice: a revision already published is reported, not applied again.
// A revision that cannot be published (a draft gone, a rule broken) is
// marked failed, with every draft left as it was, and rejected.
func (p *Publisher) Publish(ctx context.Context, revisionID string) (*workflows.PublishResult, error) {
	id, err := uuid.Parse(revisionID)
	if err != nil {
		return nil, reject("bad revision id %q", revisionID)
	}
	committed, err := drafts.RevisionCommitted(ctx, p.DB, id)
	if err != nil {
		return nil, err // transient: retried
	}
	if !committed {
		// Only a run an older API started inside its transaction
		// (drafts.RevisionCommitted).
		return &workflows.PublishResult{Status: workflows.NotCommitted}, nil
	}
	// Heartbeat while the transaction runs, so a worker that dies mid-way
	// is noticed within the heartbeat timeout rather than the whole
	// start-to-close timeout; the transaction it held rolls back.
	stop := heartbeat(ctx, 5*time.Second)
	var rev *drafts.Revision
	err = p.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var err error
		rev, err = p.Engine.Publish(ctx, tx, id)
		return err
	})
	stop()
	var pe *drafts.PublishError
	rule, broken := models.BrokenRule(err)
	switch {
	case errors.As(err, &pe):
	case broken:
		// A constraint the drafts break together (a duplicate, a missing
		// parent, two live pages at one path): retrying cannot help.
		pe = &drafts.PublishError{Message: "the revision breaks a rule of the content: " + rule}
		if models.IsExclusionViolation(err, "pages_live_path_excl") {
			pe.Code = drafts.PathTaken
		}
	case err != nil:
		return nil, fmt.Errorf("publish revision: %w", err) // transient: retried
	}
	if pe != nil {
		if err := drafts.MarkFailed(ctx, p.DB, id, pe); err != nil {
			return nil, fmt.Errorf("record failed publish: %w", err)
		}
		return nil, reject("%s", pe.Message)
	}
	return &workflows.PublishResult{Status: rev.Status, VersionsCount: rev.VersionsCount}, nil
}

// recordHeartbeat is activity.RecordHeartbeat (a seam: tests count the calls,
// which the SDK batches before they reach a listener).
var recordHeartbeat = activity.RecordHeartbeat

// heartbeat records a heartbeat every interval until the returned stop is
// called (outside an activity, as in unit tests, it does nothing). Each
// heartbeat carries details, so a later attempt can read them.
func heartbeat(ctx context.Context, every time.Duration, details ...any) (stop func()) {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				recordHeartbeat(ctx, details...)
			}
		}
	}()
	return func() { close(done) }
}

// RecordPublishAt records a scheduled revision's moved time for its
// workflow's move-publish-at update (a local activity: the API waits for
// the answer), and reports false when the revision is no longer scheduled.
// Safe to run twice: it writes the same time.
func (p *Publisher) RecordPublishAt(ctx context.Context, revisionID string, at time.Time) (bool, error) {
	id, err := uuid.Parse(revisionID)
	if err != nil {
		return false, reject("bad revision id %q", revisionID)
	}
	return drafts.RecordPublishAt(ctx, p.DB, id, at)
}

// AwaitRevision reports whether the revision exists: scheduled publishes
// recorded before their workflow was started after the commit (the
// started-after-commit change of PublishRevision) check it before they
// wait, so a revision rolled back leaves no timer behind. Runs started
// since do not call it.
func (p *Publisher) AwaitRevision(ctx context.Context, revisionID string) (bool, error) {
	id, err := uuid.Parse(revisionID)
	if err != nil {
		return false, reject("bad revision id %q", revisionID)
	}
	return drafts.RevisionCommitted(ctx, p.DB, id)
}
