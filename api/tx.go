package api

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models/drafts"
)

// runTx runs fn in a transaction, retrying (a bounded number of times) when
// Postgres aborts it for a deadlock or a serialization failure, or the
// engine finds the item drafted under it (drafts.ErrRetry): two writers
// racing for the same records, one of which can simply go again. Every
// write of the API runs its transaction through runTx.
func runTx(ctx context.Context, db *bun.DB, fn func(context.Context, bun.Tx) error) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		err = db.RunInTx(ctx, nil, fn)
		var pg *pgconn.PgError
		if errors.Is(err, drafts.ErrRetry) {
			continue
		}
		if !errors.As(err, &pg) || (pg.Code != "40P01" && pg.Code != "40001") {
			return err
		}
	}
	return err
}
