package drafts

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// CommitLockKey names the transaction lock POST /revisions holds from
// before it starts a revision's publish workflow until it commits the
// revision (pg_advisory_xact_lock(hashtextextended(key, 0))).
func CommitLockKey(revisionID uuid.UUID) string { return "revision-commit:" + revisionID.String() }

// LockCommit takes the revision's commit lock (CommitLockKey) in tx, held
// until tx ends: POST /revisions takes it before it starts the publish
// workflow, AwaitCommit waits on it.
func LockCommit(ctx context.Context, tx bun.IDB, revisionID uuid.UUID) error {
	_, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", CommitLockKey(revisionID))
	return err
}

// AwaitCommit reports whether the revision exists, waiting for the
// transaction that creates it to end first: a publish workflow is started
// inside that transaction, so its activity can run before the commit. False
// means the transaction rolled back (refused, or its API process died):
// there is nothing to publish.
func AwaitCommit(ctx context.Context, db *bun.DB, revisionID uuid.UUID) (bool, error) {
	exists := func(ctx context.Context, q bun.IDB) (bool, error) {
		return q.NewSelect().Model((*Revision)(nil)).Where("id = ?", revisionID).Exists(ctx)
	}
	ok, err := exists(ctx, db)
	if err != nil || ok {
		return ok, err
	}
	err = db.RunInTx(ctx, &sql.TxOptions{ReadOnly: true}, func(ctx context.Context, tx bun.Tx) error {
		if err := LockCommit(ctx, tx, revisionID); err != nil {
			return err
		}
		ok, err = exists(ctx, tx)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("wait for the revision to commit: %w", err)
	}
	return ok, nil
}
