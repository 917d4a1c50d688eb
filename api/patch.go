package api

import (
	"context"
	"errors"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
)

// patchAttempts bounds how often a PATCH without a precondition is
// retried when another write lands between its read and its write.
const patchAttempts = 3

// attrColumn maps an attribute a PATCH may change to its column, and sets
// its validated value (from the fields F) on the row M.
type attrColumn[M, F any] struct {
	attr, col string
	set       func(*M, F)
}

// patchOf is the rowPatch of the PATCH w of a row rr renders, found by
// find: it writes the columns of the attributes sent (in the order of
// cols), set from w's fields, and answers with rr. The caller adds check
// and conflict.
func patchOf[A attributesOf[F], F, M any](c *fiber.Ctx, req write[A, F], rr rowRenderer[M], find models.FindFunc[M], cols []attrColumn[M, F]) rowPatch[M] {
	var sent []attrColumn[M, F]
	var names []string
	for _, a := range cols {
		if req.data.Sent[a.attr] {
			sent, names = append(sent, a), append(names, a.col)
		}
	}
	return rowPatch[M]{id: req.id, bodyVersion: req.bodyVersion, cols: names, find: find, version: rr.version,
		apply: func(m *M) {
			for _, a := range sent {
				a.set(m, req.fields)
			}
		},
		respond: func(m *M) error { return rr.respondOne(c, req.q, fiber.StatusOK, m) },
	}
}

// rowPatch is a PATCH of one versioned row (of type M) of the caller's site.
type rowPatch[M any] struct {
	id          uuid.UUID
	bodyVersion *int
	// cols are the columns the request changes; with none, nothing is written.
	cols    []string
	find    models.FindFunc[M]
	version func(*M) int
	// check judges the preconditions other than the version (nil: none).
	check func(*M) error
	// apply sets the attributes sent on the row read (models.UpdateVersioned
	// stamps updated_at).
	apply func(*M)
	// respond answers with the row.
	respond func(*M) error
	// conflict is the error of a write that breaks a unique constraint
	// (nil: the database's error is passed on).
	conflict error
}

// patchRow runs a PATCH under optimistic concurrency (DESIGN.md §2): it
// reads the row and judges the preconditions against it (If-Match and
// meta.version, then check). With no columns to change, it answers with the
// row as read. Otherwise it writes the row read, changed by apply (its cols
// and updated_at, version + 1), only while the stored row is still at the
// version read; when another write lands in between it reads and tries
// again, up to patchAttempts times.
//
// The write runs through runTx, which records the request's audit event
// with it; a PATCH that changes nothing records none.
func patchRow[M any](c *fiber.Ctx, db *bun.DB, p rowPatch[M]) error {
	ctx, siteID := c.UserContext(), siteOf(c)
	for attempt := 1; ; attempt++ {
		m, err := p.find(ctx, db, siteID, p.id)
		if err != nil {
			return err
		}
		read := p.version(m)
		if err := checkVersion(c, p.id.String(), read, p.bodyVersion); err != nil {
			return err
		}
		if p.check != nil {
			if err := p.check(m); err != nil {
				return err
			}
		}
		if len(p.cols) == 0 {
			models.AuditOf(ctx).Unchanged()
			return p.respond(m)
		}
		p.apply(m)
		err = runTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
			return models.UpdateVersioned(ctx, tx, m, siteID, p.id, read, p.cols...)
		})
		switch {
		case err == nil:
			return p.respond(m)
		case p.conflict != nil && models.IsConflict(err):
			return p.conflict
		case !errors.Is(err, models.ErrStaleVersion):
			return err
		case attempt == patchAttempts:
			return stale(read)
		}
		// Another write landed between the read and this one: read again,
		// so a precondition is judged against the newest version.
	}
}

// createRow stores row, whose id is id, in one audited transaction and
// answers 201 with it (respondOne sets its Location); create's error goes
// through the error table.
func createRow[M any](c *fiber.Ctx, db *bun.DB, rr rowRenderer[M], q *Query, id uuid.UUID, row *M, create func(context.Context, bun.IDB, *M) error) error {
	if err := runTx(c.UserContext(), db, func(ctx context.Context, tx bun.Tx) error {
		auditItem(ctx, id)
		return create(ctx, tx, row)
	}); err != nil {
		return err
	}
	return rr.respondOne(c, q, fiber.StatusCreated, row)
}

// deleteRow is the handler of a DELETE /<type>/:id whose store function
// del removes (or ends) the site's row id in one audited transaction: 204,
// or del's error through the error table. T is bun.Tx for a store that
// needs a transaction, bun.IDB for one that takes either; the transaction
// is both.
func deleteRow[T bun.IDB](db *bun.DB, what string, del func(context.Context, T, uuid.UUID, uuid.UUID) error) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := idParam(c, what)
		if err != nil {
			return err
		}
		if err := runTx(c.UserContext(), db, func(ctx context.Context, tx bun.Tx) error {
			return del(ctx, any(tx).(T), siteOf(c), id)
		}); err != nil {
			return err
		}
		return c.SendStatus(fiber.StatusNoContent)
	}
}
