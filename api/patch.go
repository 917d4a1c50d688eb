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

// attrColumn maps an attribute a PATCH may change to its column.
type attrColumn struct{ attr, col string }

// sentColumns lists the columns of the attributes sent, in the order of cols.
func sentColumns(sent map[string]bool, cols []attrColumn) []string {
	var out []string
	for _, a := range cols {
		if sent[a.attr] {
			out = append(out, a.col)
		}
	}
	return out
}

// rowPatch is a PATCH of one versioned row (of type M) of the caller's site.
type rowPatch[M any] struct {
	id          uuid.UUID
	bodyVersion *int
	// cols are the columns the request changes; with none, nothing is written.
	cols    []string
	find    func(ctx context.Context, db bun.IDB, siteID, id uuid.UUID) (*M, error)
	version func(*M) int
	// check judges the preconditions other than the version (nil: none).
	check func(*M) error
	// apply sets the attributes sent, and updated_at, on the row read.
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
func patchRow[M any](c *fiber.Ctx, db bun.IDB, p rowPatch[M]) error {
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
			return p.respond(m)
		}
		p.apply(m)
		err = models.UpdateVersioned(ctx, db, m, siteID, p.id, read, p.cols...)
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
