package api

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/valyala/fasthttp"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/coalesce"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
)

// previewParam is the query parameter every read takes (docs/releases.md,
// "Preview"): the live site with that release's drafts and their
// publication closure laid over it, and no other drafts.
const previewParam = "preview-release"

// previews computes releases' previews for reads (drafts.PreviewRelease,
// the publication set Publish applies) and keeps each: a kept preview
// serves while the release's row is as it was (drafts.ReleaseStamp, one
// row by its key, read by every preview read, batched), and, for a set that is not
// self-contained (drafts.Preview.SelfContained), while the site's drafts
// are as they were (drafts.SiteDraftsStamp, an aggregate over them) and
// for at most previewTTL.
type previews struct {
	db *bun.DB
	// base is the API's public URL, where documents' links point.
	base   string
	engine *drafts.Engine
	mu     sync.Mutex
	kept   map[uuid.UUID]keptPreview
	// runs shares one computation among the concurrent reads of a
	// release that find no preview kept (the first reads of a release).
	runs coalesce.Group[*drafts.Preview]
	// stamps reads the stamps of the releases that concurrent reads
	// preview, one statement per site for those that arrive together (a
	// read joins only a batch that has not started: no stamp predates the
	// read that asked for it).
	stamps coalesce.Batcher[uuid.UUID, drafts.ReleaseStamp]
}

// newPreviews returns the previews of releases read through db.
func newPreviews(db *bun.DB, engine *drafts.Engine, base string) *previews {
	pv := &previews{db: db, engine: engine, base: base, kept: map[uuid.UUID]keptPreview{}}
	pv.stamps.Fetch = func(ctx context.Context, scope string, ids []uuid.UUID) (map[uuid.UUID]drafts.ReleaseStamp, error) {
		siteID, err := uuid.Parse(scope)
		if err != nil {
			return nil, fmt.Errorf("release stamps: bad scope %q: %w", scope, err)
		}
		return drafts.ReleaseStamps(ctx, db, siteID, ids)
	}
	return pv
}

type keptPreview struct {
	p       *drafts.Preview
	release drafts.ReleaseStamp
	// site is the site's drafts when p was computed (a set that is not
	// self-contained depends on them).
	site drafts.SiteDraftsStamp
	at   time.Time
}

// previewTTL bounds how long a kept preview that is not self-contained
// serves: changes of live rows alone (a rollback) that move its closure
// (a live record moved under one the release deletes) show within it. A
// self-contained set depends on no live row (SelfContained) and has no TTL.
const previewTTL = 2 * time.Second

// maxKeptPreviews bounds the kept previews; past it they are all dropped.
const maxKeptPreviews = 256

// wrap serves h with the preview preview-release names, when given: 400
// when it is no UUID, 404 for a release the site does not have. The
// documents it writes link through the same preview (preview_doc.go).
func (pv *previews) wrap(h fiber.Handler) fiber.Handler { return pv.wrapRead(h, false) }

// wrapLoaded is wrap for a handler that reads its record through a
// drafts.Loader (GET /<kind>/:id): the loader's statement reads the
// release's stamp with the record, so a kept preview is checked without a
// statement of its own (optimistic).
func (pv *previews) wrapLoaded(h fiber.Handler) fiber.Handler { return pv.wrapRead(h, true) }

func (pv *previews) wrapRead(h fiber.Handler, loaded bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		raw := c.Query(previewParam)
		if raw == "" && !c.Request().URI().QueryArgs().Has(previewParam) {
			return h(c)
		}
		id, err := uuid.Parse(raw)
		if err != nil {
			return jsonapi.BadRequest("invalid_parameter", "preview-release must be the id of a release.").AtParameter(previewParam)
		}
		if docLinks(c) == nil { // a preview link's gate has set its own
			setDocLinks(c, previewLinks(pv.base, id))
		}
		if k, ok := pv.keptSelfContained(siteOf(c), id); ok {
			if held, err := pv.optimistic(c, h, id, k, loaded); held {
				return err
			}
		}
		p, err := pv.get(c, id)
		if err != nil {
			return err
		}
		c.SetUserContext(drafts.WithPreview(c.UserContext(), p))
		return h(c)
	}
}

// optimistic serves h with k, a kept self-contained preview of release
// id, and checks the release's stamp after the request began: held tells
// whether it was k's, and then h's answer (err) stands, as it would had
// the stamp been read first. Otherwise the response is put back as it was
// before h and the caller serves the read again with the preview as it is
// now. With loaded, h's own statement reads the stamp in the snapshot it
// reads the record in (drafts.StampWatch): one round trip, no statement
// of its own; a read that loaded nothing (a 400 before it, ?as-of) reads
// the stamp after h. Otherwise the stamp is read alongside h (not before
// it: a read then waits for one round trip, not two in sequence).
func (pv *previews) optimistic(c *fiber.Ctx, h fiber.Handler, id uuid.UUID, k keptPreview, loaded bool) (held bool, err error) {
	ctx, siteID := c.UserContext(), siteOf(c)
	var alongside chan drafts.ReleaseStamp
	if !loaded {
		alongside = make(chan drafts.ReleaseStamp, 1)
		go func() { alongside <- pv.stampOf(ctx, siteID, id) }()
	}
	var before fasthttp.ResponseHeader
	c.Response().Header.CopyTo(&before)
	hctx, watch := drafts.WithStampWatch(drafts.WithPreview(ctx, k.p))
	c.SetUserContext(hctx)
	err = h(c)
	var rs drafts.ReleaseStamp
	if loaded {
		var seen bool
		if rs, seen = watch.Seen(); !seen {
			rs = pv.stampOf(ctx, siteID, id)
		}
	} else {
		rs = <-alongside
	}
	if rs == k.release && rs.Status != "" {
		return true, err
	}
	before.CopyTo(&c.Response().Header)
	c.Response().ResetBody()
	c.Status(fiber.StatusOK)
	c.SetUserContext(ctx)
	return false, nil
}

// stampOf is the stamp of the site's release id, read now (batched), or
// the zero stamp when it cannot be read (get reads it again and answers
// the error).
func (pv *previews) stampOf(ctx context.Context, siteID, id uuid.UUID) drafts.ReleaseStamp {
	rs, err := pv.stamps.Get(ctx, siteID.String(), id)
	if err != nil {
		return drafts.ReleaseStamp{}
	}
	return rs
}

// keptSelfContained is the kept preview of the site's release id when it
// is self-contained (its stamp alone tells whether it holds).
func (pv *previews) keptSelfContained(siteID, id uuid.UUID) (keptPreview, bool) {
	pv.mu.Lock()
	k, ok := pv.kept[id]
	pv.mu.Unlock()
	return k, ok && k.p.SiteID == siteID && k.p.SelfContained()
}

// get is the preview of the caller's site's release id. The stamps are read
// before the set is computed, so a write that commits in between leaves a
// kept preview that looks stale (computed again by the next read), never
// one that looks current and is not.
func (pv *previews) get(c *fiber.Ctx, id uuid.UUID) (*drafts.Preview, error) {
	ctx, siteID := c.UserContext(), siteOf(c)
	rs, err := pv.stamps.Get(ctx, siteID.String(), id)
	if err != nil {
		return nil, err
	}
	if rs.Status == "" {
		return nil, models.NotFound("release")
	}
	k, ok := pv.keptFor(siteID, id, rs)
	if ok && k.p.SelfContained() {
		return k.p, nil
	}
	ss, err := drafts.SiteDraftsStampOf(ctx, pv.db, siteID)
	if err != nil {
		return nil, err
	}
	if ok && k.holds(ss) {
		return k.p, nil
	}
	p, err, _ := pv.runs.Do(fmt.Sprintf("%s %s %+v %+v", siteID, id, rs, ss), func() (*drafts.Preview, error) {
		if k, ok := pv.keptFor(siteID, id, rs); ok && (k.p.SelfContained() || k.holds(ss)) {
			return k.p, nil // computed by the run before this one
		}
		now := time.Now()
		p, err := pv.engine.PreviewRelease(ctx, pv.db, siteID, id)
		if err != nil {
			return nil, err
		}
		pv.mu.Lock()
		if len(pv.kept) >= maxKeptPreviews {
			clear(pv.kept)
		}
		pv.kept[id] = keptPreview{p: p, release: rs, site: ss, at: now}
		pv.mu.Unlock()
		return p, nil
	})
	return p, err
}

// keptFor is the kept preview of the site's release id computed at the
// release's stamp rs, if any.
func (pv *previews) keptFor(siteID, id uuid.UUID, rs drafts.ReleaseStamp) (keptPreview, bool) {
	pv.mu.Lock()
	k, ok := pv.kept[id]
	pv.mu.Unlock()
	return k, ok && k.release == rs && k.p.SiteID == siteID
}

// holds tells whether k, a set that is not self-contained, still holds
// with the site's drafts at ss.
func (k keptPreview) holds(ss drafts.SiteDraftsStamp) bool {
	return k.site == ss && time.Since(k.at) < previewTTL
}
