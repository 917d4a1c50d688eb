package activities

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models/drafts"
)

// Publisher is the activity of the publish-revision workflow.
type Publisher struct {
	DB     *bun.DB
	Engine *drafts.Engine
}

// PublishResult is what a publish produced.
type PublishResult struct {
	Status        string
	VersionsCount int
}

// Publish applies a revision in one database transaction. It is safe to
// run twice: a revision already published is reported, not applied again.
// A revision that cannot be published (a draft gone, a rule broken) is
// marked failed, with every draft left as it was, and rejected.
func (p *Publisher) Publish(ctx context.Context, revisionID string) (*PublishResult, error) {
	id, err := uuid.Parse(revisionID)
	if err != nil {
		return nil, reject("bad revision id %q", revisionID)
	}
	var rev *drafts.Revision
	err = p.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var err error
		rev, err = p.Engine.Publish(ctx, tx, id)
		return err
	})
	msg := ""
	var pe *drafts.PublishError
	var pg *pgconn.PgError
	switch {
	case errors.As(err, &pe):
		msg = pe.Message
	case errors.As(err, &pg) && (pg.Code == "23505" || pg.Code == "23503" || pg.Code == "23514"):
		// A constraint the drafts break together (a duplicate, a missing
		// parent): retrying cannot help.
		msg = "the revision breaks a rule of the content: " + pg.Message
	case err != nil:
		return nil, fmt.Errorf("publish revision: %w", err) // transient: retried
	}
	if msg != "" {
		if err := drafts.MarkFailed(ctx, p.DB, id, msg); err != nil {
			return nil, fmt.Errorf("record failed publish: %w", err)
		}
		return nil, reject("%s", msg)
	}
	return &PublishResult{Status: rev.Status, VersionsCount: rev.VersionsCount}, nil
}
