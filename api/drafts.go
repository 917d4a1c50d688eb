package api

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
)

type draftAttributes struct {
	Event         string         `json:"event"`
	ObjectChanges map[string]any `json:"object-changes"`
	timestamps
}

// draftResource renders a draft; its dependency relationships carry links
// only (their data needs the closures, computed by GET /drafts/:id).
func draftResource(l links, d *drafts.Draft) *jsonapi.Resource {
	p := "/drafts/" + d.ID.String()
	item := d.ItemID.String()
	user := optionalID(d.UserID)
	oc := d.ObjectChanges
	if oc == nil {
		oc = map[string]any{}
	}
	rels := map[string]*jsonapi.Relationship{
		"item": l.relationship(p, "item", jsonapi.ToOne(d.ItemType, &item)),
		"user": l.relationship(p, "user", jsonapi.ToOne("users", user)),
	}
	for _, name := range []string{"publication-dependencies", "reversion-dependencies", "hyperlinks"} {
		rels[name] = &jsonapi.Relationship{Links: &jsonapi.Links{Self: l.base + p + "/relationships/" + name, Related: l.base + p + "/" + name}}
	}
	return versioned(&jsonapi.Resource{Type: "drafts", ID: d.ID.String(), Links: l.self(p),
		Attributes:    draftAttributes{Event: d.Event, ObjectChanges: oc, timestamps: timestampsOf(d.CreatedAt, d.UpdatedAt)},
		Relationships: rels}, d.Version)
}

type hyperlinkAttributes struct {
	Href      string `json:"href"`
	CreatedAt string `json:"created-at"`
}

func hyperlinkResource(l links, h drafts.Hyperlink) *jsonapi.Resource {
	p := "/hyperlinks/" + h.ID.String()
	block, target := h.LinkableID.String(), h.LinkedID.String()
	return &jsonapi.Resource{Type: "hyperlinks", ID: h.ID.String(),
		Attributes: hyperlinkAttributes{Href: h.Href, CreatedAt: timestamp(h.CreatedAt)},
		Relationships: map[string]*jsonapi.Relationship{
			"linkable":  {Data: jsonapi.ToOne("content-blocks", &block)},
			"linked-to": {Data: jsonapi.ToOne(h.LinkedType, &target)},
		}, Links: l.self(p)}
}

type draftsHandler struct {
	db      *bun.DB
	engine  *drafts.Engine
	links   links
	content map[string]contentHandler
}

// draftSpec is the query GET /drafts reads: the site's pending drafts,
// with their authors and records when include asks (the CLI's listing
// shows who changed what: sort=-updated-at&include=user,item).
var draftSpec = QuerySpec{Collection: true, Includes: []string{"user", "item"},
	Fields:      []string{"drafts", "users", "pages", "contents", "content-blocks"},
	Filters:     map[string]string{"item-type": "item_type", "user": "user_id", "event": "event"},
	Sorts:       map[string]string{"created-at": "created_at", "updated-at": "updated_at"},
	DefaultSort: "d.created_at, d.id"}

// load finds the draft named by the URL.
func (h draftsHandler) load(c *fiber.Ctx) (*drafts.Draft, error) {
	return loadByID(c, h.db, "draft", drafts.FindDraft)
}

// dependencies computes a draft's closure in one direction, without itself.
func (h draftsHandler) dependencies(ctx context.Context, d *drafts.Draft, dir drafts.Direction) ([]*drafts.Draft, error) {
	all, err := drafts.Closure(ctx, h.db, d.SiteID, []*drafts.Draft{d}, dir, false)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, x := range all {
		if x.ID != d.ID {
			out = append(out, x)
		}
	}
	return out, nil
}

// get serves GET /drafts/:id with its dependencies and hyperlinks.
func (h draftsHandler) get(c *fiber.Ctx) error {
	q, err := parseQuery(c, QuerySpec{
		Includes: []string{"publication-dependencies", "reversion-dependencies", "hyperlinks", "item", "user"},
		Fields:   []string{"drafts", "hyperlinks", "pages", "contents", "content-blocks", "users"}})
	if err != nil {
		return err
	}
	d, err := h.load(c)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	res := draftResource(h.links, d)
	cd := newCompound(q, res)
	for name, dir := range map[string]drafts.Direction{"publication-dependencies": drafts.Publication, "reversion-dependencies": drafts.Reversion} {
		deps, err := h.dependencies(ctx, d, dir)
		if err != nil {
			return err
		}
		ids := make([]string, len(deps))
		for i, x := range deps {
			ids[i] = x.ID.String()
			if q.Include[name] {
				cd.add(draftResource(h.links, x))
			}
		}
		res.Relationships[name].Data = jsonapi.ToMany("drafts", ids)
	}
	links, err := drafts.HyperlinksTo(ctx, h.db, d)
	if err != nil {
		return err
	}
	ids := make([]string, len(links))
	for i, l := range links {
		ids[i] = l.ID.String()
		if q.Include["hyperlinks"] {
			cd.add(hyperlinkResource(h.links, l))
		}
	}
	res.Relationships["hyperlinks"].Data = jsonapi.ToMany("hyperlinks", ids)
	if err := h.includeItemAndUser(ctx, q, cd, d); err != nil {
		return err
	}
	setETag(c, d.ID.String(), d.Version)
	return cd.respondOne(c, fiber.StatusOK, res)
}

// includeItemAndUser adds the draft's item and user when asked. A failed
// load is the request's error (the error table answers it); only a record
// gone since the draft was read (a publish in between) is left out.
func (h draftsHandler) includeItemAndUser(ctx context.Context, q *Query, cd *compound, d *drafts.Draft) error {
	if ch, ok := h.content[d.ItemType]; ok && q.Include["item"] {
		v, err := h.engine.Load(ctx, h.db, ch.kind, d.SiteID, d.ItemID, true)
		if err = skipGone(err); err != nil {
			return err
		}
		if v != nil {
			paths, err := ch.draftedPaths(ctx, d.SiteID, v)
			if err != nil {
				return err
			}
			cd.add(ch.resource(v, true, paths))
		}
	}
	if q.Include["user"] && d.UserID != nil {
		user, err := models.FindUser(ctx, h.db, d.SiteID, *d.UserID)
		if user != nil {
			cd.add(usersHandler{db: h.db, links: h.links}.resource(user))
		}
		return skipGone(err)
	}
	return nil
}

// includeForList adds a page of drafts' users and items when include asks:
// one query for the users and one per kind of item (Engine.LoadMany, with
// the pages' drafted paths in one more), whatever the page's size. Items
// and users are read in the drafts' site only; one gone since the drafts
// were read (published, or the user deleted) is left out.
func (h draftsHandler) includeForList(ctx context.Context, siteID uuid.UUID, q *Query, ds []*drafts.Draft, cd *compound) error {
	if q.Include["user"] {
		var userIDs []uuid.UUID
		for _, d := range ds {
			if d.UserID != nil {
				userIDs = append(userIDs, *d.UserID)
			}
		}
		us, err := models.ByIDs[models.User](ctx, h.db, siteID, userIDs)
		if err != nil {
			return err
		}
		users := usersHandler{db: h.db, links: h.links}
		for i := range us {
			cd.add(users.resource(&us[i]))
		}
	}
	if !q.Include["item"] {
		return nil
	}
	byType := map[string][]uuid.UUID{}
	for _, d := range ds {
		byType[d.ItemType] = append(byType[d.ItemType], d.ItemID)
	}
	for _, typ := range slices.Sorted(maps.Keys(byType)) { // a stable order of included
		ids := byType[typ]
		ch, ok := h.content[typ]
		if !ok {
			continue
		}
		views, err := h.engine.LoadMany(ctx, h.db, ch.kind, siteID, models.Unique(ids), true)
		if err != nil {
			return err
		}
		vs := make([]*drafts.View, 0, len(views))
		for _, id := range models.Unique(ids) { // in the drafts' order, not the map's
			if v := views[id]; v != nil {
				vs = append(vs, v)
			}
		}
		paths, err := ch.draftedPaths(ctx, siteID, vs...)
		if err != nil {
			return err
		}
		for _, v := range vs {
			cd.add(ch.resource(v, true, paths))
		}
	}
	return nil
}

// skipGone is err, or nil when err says the record is not found.
func skipGone(err error) error {
	if errors.Is(err, models.ErrNotFound) {
		return nil
	}
	return err
}

// revert serves DELETE /drafts/:id: the draft and its reversion closure
// are undone in one transaction; 204.
func (h draftsHandler) revert(c *fiber.Ctx) error {
	d, err := h.load(c)
	if err != nil {
		return err
	}
	if err := checkVersion(c, d.ID.String(), d.Version, nil); err != nil {
		return err
	}
	// The check above read before the transaction: a write may have changed
	// the draft since; RevertDraft checks again under the draft's row lock.
	err = runTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
		return h.engine.RevertDraft(ctx, tx, d.SiteID, d.ID, func(locked *drafts.Draft) error {
			return checkVersion(c, locked.ID.String(), locked.Version, nil)
		})
	})
	if err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// registerDraftRoutes registers /drafts; kinds render a draft's item.
func registerDraftRoutes(r routes, engine *drafts.Engine, kinds map[string]contentHandler) {
	h := draftsHandler{db: r.deps.DB, engine: engine, links: r.links, content: kinds}
	rows := rowRenderer[*drafts.Draft]{include: h.includeForList,
		render: renderEach(func(d **drafts.Draft) *jsonapi.Resource { return draftResource(h.links, *d) })}
	r.get("/drafts", rows.list(draftSpec, h.links, "/drafts", h.db, drafts.List))
	r.get("/drafts/:id", h.get)
	r.delete("/drafts/:id", h.revert)
}
