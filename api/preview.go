package api

import (
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models/drafts"
)

// previewParam is the query parameter every read takes (docs/releases.md,
// "Preview"): the live site with that release's drafts and their
// publication closure laid over it, and no other drafts.
const previewParam = "preview-release"

// previews computes releases' previews for reads (drafts.PreviewRelease,
// the publication set Publish applies) and keeps each for a moment: a
// kept preview serves while the site's drafts and the release are as they
// were (drafts.PreviewStamp, one cheap query), at most previewTTL.
type previews struct {
	db     *bun.DB
	engine *drafts.Engine
	mu     sync.Mutex
	kept   map[uuid.UUID]keptPreview
}

type keptPreview struct {
	p     *drafts.Preview
	stamp drafts.PreviewStamp
	at    time.Time
}

// previewTTL bounds how long a kept preview serves: changes of live rows
// alone (a rollback) that move a closure show within it.
const previewTTL = 2 * time.Second

// maxKeptPreviews bounds the kept previews; past it they are all dropped.
const maxKeptPreviews = 256

// wrap serves h with the preview preview-release names, when given: 400
// when it is no UUID, 404 for a release the site does not have.
func (pv *previews) wrap(h fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		raw := c.Query(previewParam)
		if raw == "" && !c.Request().URI().QueryArgs().Has(previewParam) {
			return h(c)
		}
		id, err := uuid.Parse(raw)
		if err != nil {
			return jsonapi.BadRequest("invalid_parameter", "preview-release must be the id of a release.").AtParameter(previewParam)
		}
		p, err := pv.get(c, id)
		if err != nil {
			return err
		}
		c.SetUserContext(drafts.WithPreview(c.UserContext(), p))
		return h(c)
	}
}

// get is the preview of the caller's site's release id.
func (pv *previews) get(c *fiber.Ctx, id uuid.UUID) (*drafts.Preview, error) {
	ctx, siteID := c.UserContext(), siteOf(c)
	stamp, err := drafts.StampOf(ctx, pv.db, siteID, id)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	pv.mu.Lock()
	k, ok := pv.kept[id]
	pv.mu.Unlock()
	if ok && k.stamp == stamp && now.Sub(k.at) < previewTTL && k.p.SiteID == siteID {
		return k.p, nil
	}
	p, err := pv.engine.PreviewRelease(ctx, pv.db, siteID, id)
	if err != nil {
		return nil, err
	}
	pv.mu.Lock()
	if len(pv.kept) >= maxKeptPreviews {
		clear(pv.kept)
	}
	pv.kept[id] = keptPreview{p: p, stamp: stamp, at: now}
	pv.mu.Unlock()
	return p, nil
}
