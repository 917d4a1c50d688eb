package api

import (
	"context"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
)

type draftAttributes struct {
	Event         string         `json:"event" oas:"enum:draft-event"`
	ObjectChanges map[string]any `json:"object-changes"`
	// Locale is the locale of a locale draft's values (object-changes
	// keyed "title@de"); null for the record's shared draft.
	Locale *string `json:"locale"`
	timestamps
}

// draftResource renders a draft; draftRenderer fills its to-many
// relationships.
func draftResource(l links, d *drafts.Draft) *jsonapi.Resource {
	p := "/drafts/" + d.ID.String()
	item := d.ItemID.String()
	user := optionalID(d.UserID)
	oc := d.ObjectChanges
	if oc == nil {
		oc = map[string]any{}
	}
	rels := map[string]*jsonapi.Relationship{
		"item":    l.relationship(p, "item", jsonapi.ToOne(d.ItemType, &item)),
		"user":    l.relationship(p, "user", jsonapi.ToOne("users", user)),
		"release": l.relationship(p, "release", jsonapi.ToOne("releases", optionalID(d.ReleaseID))),
	}
	for _, name := range draftLists {
		rels[name] = l.relationship(p, name, nil)
	}
	return versioned(&jsonapi.Resource{Type: "drafts", ID: d.ID.String(), Links: l.self(p),
		Attributes:    draftAttributes{Event: d.Event, ObjectChanges: oc, Locale: draftLocale(d), timestamps: timestampsOf(d.CreatedAt, d.UpdatedAt)},
		Relationships: rels}, d.Version)
}

// draftLocale is d's locale attribute: nil (null) for a shared draft.
func draftLocale(d *drafts.Draft) *string {
	if d.Locale == "" {
		return nil
	}
	return &d.Locale
}

// draftLists are a draft's to-many relationships.
var draftLists = []string{"publication-dependencies", "reversion-dependencies", "hyperlinks"}

// draftRenderer renders drafts, wherever they appear (GET /drafts, a
// drafted read's included draft, a publish plan), with their to-many
// linkage: both dependency closures and the hyperlinks to the item.
type draftRenderer struct {
	db    *bun.DB
	links links
	// deps batches the linkage of single drafts that concurrent requests
	// render (a page read with include=draft is the hot path).
	deps *drafts.DependencyLoader
}

func newDraftRenderer(db *bun.DB, l links) *draftRenderer {
	return &draftRenderer{db: db, links: l, deps: drafts.NewDependencyLoader(db, maxPageSize)}
}

// render renders ds of the site with their linkage.
func (dr *draftRenderer) render(ctx context.Context, siteID uuid.UUID, ds []*drafts.Draft) ([]*jsonapi.Resource, error) {
	out := make([]*jsonapi.Resource, len(ds))
	if len(ds) == 0 {
		return out, nil
	}
	var all map[*drafts.Draft]*drafts.DraftLinks
	if len(ds) > 1 {
		var err error
		if all, err = drafts.LinksOf(ctx, dr.db, siteID, ds, maxPageSize); err != nil {
			return nil, err
		}
	}
	for i, d := range ds {
		dl := all[d]
		if dl == nil {
			var err error
			if dl, err = dr.deps.Load(ctx, d); err != nil {
				return nil, err
			}
		}
		r := draftResource(dr.links, d)
		setPage(r.Relationships["publication-dependencies"], "drafts", firstPage(dl.Publication), false)
		setPage(r.Relationships["reversion-dependencies"], "drafts", firstPage(dl.Reversion), false)
		setPage(r.Relationships["hyperlinks"], "hyperlinks", idPage{ids: uuidStrings(dl.Hyperlinks), total: dl.HyperlinksTotal}, false)
		out[i] = r
	}
	return out, dr.fillComments(ctx, siteID, ds, out)
}

// fillComments sets the drafts' comments linkage (one query for all).
func (dr *draftRenderer) fillComments(ctx context.Context, siteID uuid.UUID, ds []*drafts.Draft, rs []*jsonapi.Resource) error {
	ids := make([]uuid.UUID, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	pages, err := commentsOf(dr.db, "drafts")(ctx, siteID, ids, false, models.Window{Limit: maxPageSize})
	if err != nil {
		return err
	}
	for i, r := range rs {
		r.Relationships["comments"] = dr.links.relationship("/drafts/"+ds[i].ID.String(), "comments", nil)
		setPage(r.Relationships["comments"], "comments", pages[ds[i].ID], false)
	}
	return nil
}

// fetch is the drafts' fetchFunc.
func (dr *draftRenderer) fetch(ctx context.Context, siteID uuid.UUID, ids []uuid.UUID, _ bool) ([]*jsonapi.Resource, error) {
	ds, err := drafts.Drafts(ctx, dr.db, siteID, ids, false)
	if err != nil {
		return nil, err
	}
	return dr.render(ctx, siteID, ds)
}

// firstPage is the first page of a closure's linkage.
func firstPage(ds []*drafts.Draft) idPage {
	return windowPage(draftIDStrings(ds), models.Window{Limit: maxPageSize})
}

// draftIDStrings are the drafts' ids, as a closure's linkage lists them.
func draftIDStrings(ds []*drafts.Draft) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID.String()
	}
	return out
}

func uuidStrings(ids []uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

// dependencies pages through the drafts' closures in direction dir.
func (dr *draftRenderer) dependencies(dir drafts.Direction) manyFunc {
	return func(ctx context.Context, siteID uuid.UUID, parents []uuid.UUID, _ bool, w models.Window) (map[uuid.UUID]idPage, error) {
		ds, err := drafts.Drafts(ctx, dr.db, siteID, parents, false)
		if err != nil {
			return nil, err
		}
		deps, err := drafts.Dependencies(ctx, dr.db, siteID, ds, dir)
		if err != nil {
			return nil, err
		}
		out := make(map[uuid.UUID]idPage, len(ds))
		for _, d := range ds {
			out[d.ID] = windowPage(draftIDStrings(deps[d.ID]), w)
		}
		return out, nil
	}
}

// hyperlinksTo pages through the hyperlinks to the drafts' items.
func (dr *draftRenderer) hyperlinksTo(ctx context.Context, siteID uuid.UUID, parents []uuid.UUID, _ bool, w models.Window) (map[uuid.UUID]idPage, error) {
	rows, err := drafts.HyperlinksToDrafts(ctx, dr.db, siteID, parents, w)
	if err != nil {
		return nil, err
	}
	return idPages(rows, parents, w), nil
}

type hyperlinkAttributes struct {
	Href      string `json:"href"`
	CreatedAt string `json:"created-at" oas:"date-time"`
}

func hyperlinkResource(l links, h *drafts.Hyperlink) *jsonapi.Resource {
	p := "/hyperlinks/" + h.ID.String()
	block, target := h.LinkableID.String(), h.LinkedID.String()
	return &jsonapi.Resource{Type: "hyperlinks", ID: h.ID.String(),
		Attributes: hyperlinkAttributes{Href: h.Href, CreatedAt: timestamp(h.CreatedAt)},
		Relationships: map[string]*jsonapi.Relationship{
			"linkable":  l.relationship(p, "linkable", jsonapi.ToOne("content-blocks", &block)),
			"linked-to": l.relationship(p, "linked-to", jsonapi.ToOne(h.LinkedType, &target)),
		}, Links: l.self(p)}
}

type draftsHandler struct {
	db     *bun.DB
	engine *drafts.Engine
	links  links
	render *draftRenderer
	cat    *catalog
}

// draftSpec is the query GET /drafts reads: the site's pending drafts.
var draftSpec = QuerySpec{Collection: true, Includes: includesOf("drafts"), Fields: fieldsOf("drafts"),
	Filters:     map[string]string{"item-type": "item_type", "user": "user_id", "event": "event", "release": "release_id"},
	NoneFilters: map[string]bool{"release": true},
	Sorts:       map[string]string{"created-at": "created_at", "updated-at": "updated_at"},
	DefaultSort: models.OrderDraftsOldest}

// load finds the draft named by the URL.
func (h draftsHandler) load(c *fiber.Ctx) (*drafts.Draft, error) {
	return loadByID(c, h.db, "draft", drafts.FindDraft)
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
	pr := oauth.PrincipalOf(c)
	err = runTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
		return h.engine.RevertDraft(ctx, tx, d.SiteID, d.ID, func(locked *drafts.Draft) error {
			if err := mayRevert(pr, locked); err != nil {
				return err
			}
			if err := h.inSection(ctx, tx, pr, locked); err != nil {
				return err
			}
			return checkVersion(c, locked.ID.String(), locked.Version, nil)
		})
	})
	if err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// mayRevert refuses an author the revert of a draft someone else made
// (revert-any: editors and admins).
func mayRevert(pr *oauth.Principal, d *drafts.Draft) error {
	if pr.Can(models.PermRevertAny) || (d.UserID != nil && *d.UserID == pr.UserID) {
		return nil
	}
	return models.ForbiddenDraft(models.PermRevertAny, d.ID.String(), d.ItemType, d.ItemID.String(), "someone else made it")
}

// inSection refuses a section's author or editor the revert of a draft
// outside their section.
func (h draftsHandler) inSection(ctx context.Context, tx bun.Tx, pr *oauth.Principal, d *drafts.Draft) error {
	prefix := sectionOf(pr)
	outside, err := h.engine.OutsideSection(ctx, tx, pr.SiteID, prefix, []*drafts.Draft{d})
	if err != nil {
		return err
	}
	if path, ok := outside[d.ID]; ok {
		return models.ForbiddenDraft(models.PermEdit, d.ID.String(), d.ItemType, d.ItemID.String(), "it is at "+path+", outside your section "+*prefix)
	}
	return nil
}

// registerDraftRoutes registers /drafts and /hyperlinks/:id (their
// relationships' endpoints: catalog.routes).
func registerDraftRoutes(r routes, engine *drafts.Engine) {
	h := draftsHandler{db: r.deps.DB, engine: engine, links: r.links, render: r.drafts, cat: r.cat}
	rows := rowRenderer[*drafts.Draft]{render: h.render.render, cat: r.cat}
	t := &resourceType{typ: "drafts", what: "draft", fetch: h.render.fetch, drafted: map[string]bool{"item": true},
		many: map[string]manyFunc{"publication-dependencies": h.render.dependencies(drafts.Publication),
			"reversion-dependencies": h.render.dependencies(drafts.Reversion), "hyperlinks": h.render.hyperlinksTo,
			"comments": commentsOf(h.db, "drafts")}}
	r.cat.add(t)
	r.get("/drafts", models.PermRead, rows.list(draftSpec, h.links, "/drafts", h.db, drafts.List))
	r.get("/drafts/:id", models.PermRead, r.cat.get(t))
	r.delete("/drafts/:id", models.PermEdit, h.revert)
	// Hyperlinks join what they link (drafted bodies' links join records
	// that may be unpublished): read drafted.
	hyperlinks := &resourceType{typ: "hyperlinks", what: "hyperlink", drafted: map[string]bool{"linkable": true, "linked-to": true},
		fetch: byIDs(h.db, func(x *drafts.Hyperlink) *jsonapi.Resource { return hyperlinkResource(h.links, x) })}
	r.cat.add(hyperlinks)
	r.get("/hyperlinks/:id", models.PermRead, r.cat.get(hyperlinks))
}
