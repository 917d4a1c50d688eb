package models

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// PruneStep is one statement of a prune: a DELETE of at most one batch of
// rows (its query bounds itself with LIMIT over a FOR UPDATE SKIP LOCKED
// selection), run again and again until a batch comes back short.
type PruneStep struct {
	// What names the rows in errors ("audit events").
	What string
	// Query is the DELETE; Args its arguments, the batch size among them.
	Query string
	Args  []any
	// Count is where the step adds the rows it deleted.
	Count *int
	// Run, when set, replaces Query: one batch in its own transaction
	// (a prune that must lock before it judges, as the trash purge),
	// answering the rows deleted and the units of the batch it took (a
	// batch shorter than batch units is the last).
	Run func(ctx context.Context, tx bun.Tx) (deleted, units int, err error)
}

// PruneInBatches is the one way Pressroom prunes a table (audit events,
// webhook history, expired OAuth rows, trashed records and old versions):
// each step's statement runs, each its own short transaction when db is
// the pool, until it deletes fewer than batch rows; then the next step.
// No statement holds row locks or builds a large delete for long, whatever
// the backlog; rows another transaction holds locked are left to the next
// run, so running it twice, or at once on two workers, is harmless.
// progress, if not nil, is called after every statement (the activities
// heartbeat there).
func PruneInBatches(ctx context.Context, db bun.IDB, batch int, steps []PruneStep, progress func()) error {
	if batch <= 0 {
		return fmt.Errorf("prune: batch %d is not positive", batch)
	}
	for _, s := range steps {
		for {
			n, units, err := s.once(ctx, db)
			if err != nil {
				return fmt.Errorf("prune %s: %w", s.What, err)
			}
			*s.Count += n
			if progress != nil {
				progress()
			}
			// A short batch was the last: what is left is younger, still
			// referred to, or locked by someone else (the next run's).
			if units < batch {
				break
			}
		}
	}
	return nil
}

// once runs one batch of s: the rows it deleted and the units it took.
func (s PruneStep) once(ctx context.Context, db bun.IDB) (n, units int, err error) {
	if s.Run != nil {
		err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			n, units, err = s.Run(ctx, tx)
			return err
		})
		return n, units, err
	}
	res, err := db.NewRaw(s.Query, s.Args...).Exec(ctx)
	if err != nil {
		return 0, 0, err
	}
	affected, err := res.RowsAffected()
	return int(affected), int(affected), err
}
