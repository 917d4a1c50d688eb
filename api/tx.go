package api

import (
	"context"
	"database/sql"
	"errors"

	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
)

// runTx runs fn in a transaction, retrying (a bounded number of times) when
// Postgres aborts it for a deadlock or a serialization failure, or the
// engine finds the item drafted under it (drafts.ErrRetry): two writers
// racing for the same records, one of which can simply go again. Every
// write of the API runs its transaction through runTx.
//
// It also records the request's audit (api/audit.go), last in the same
// transaction: the change and its audit event commit together or not at
// all.
//
// Writes wait for the pool in arrival order (models.WaitTurn):
// database/sql hands a freed connection to a random waiter, so under more
// concurrent writes than connections a write's wait had no bound but
// chance.
func runTx(ctx context.Context, db *bun.DB, fn func(context.Context, bun.Tx) error) error {
	ctx, leave, err := models.WaitTurn(ctx, db)
	if err != nil {
		return err
	}
	defer leave()
	withAudit := func(ctx context.Context, tx bun.Tx) error {
		if err := fn(ctx, tx); err != nil {
			return err
		}
		return models.RecordAudit(ctx, tx)
	}
	for attempt := 0; attempt < 3; attempt++ {
		err = db.RunInTx(ctx, nil, withAudit)
		if err != nil {
			models.AuditOf(ctx).RolledBack()
		}
		if !errors.Is(err, drafts.ErrRetry) && !models.IsRetryableConflict(err) {
			return err
		}
	}
	return err
}

// readOnlyTx runs fn, a dry run (a publish plan), in a read-only
// transaction on one snapshot (repeatable read): it reads one state of the
// database across its queries and cannot write, even by mistake. A
// read-only repeatable-read transaction never fails for serialization, so
// it is not retried.
func readOnlyTx(ctx context.Context, db *bun.DB, fn func(context.Context, bun.Tx) error) error {
	return db.RunInTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}, fn)
}
