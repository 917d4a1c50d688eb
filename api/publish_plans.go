package api

import (
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models/drafts"
)

// Publish plans (docs/drafts.md "Publish plans"): a dry run of
// POST /revisions, computed by the code that publishes.

type publishPlansHandler struct {
	db     *bun.DB
	engine *drafts.Engine
	links  links
	drafts *draftRenderer
}

type planRequest struct{}

type planItem struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

type planStep struct {
	Draft  string   `json:"draft"`
	Item   planItem `json:"item"`
	Event  string   `json:"event"`
	Group  int      `json:"group"`
	HeldBy *string  `json:"held-by"`
}

type brokenHyperlink struct {
	Hyperlink string   `json:"hyperlink"`
	Block     string   `json:"block"`
	Draft     *string  `json:"draft"`
	Href      string   `json:"href"`
	Page      planItem `json:"page"`
	OldPath   string   `json:"old-path"`
	NewPath   *string  `json:"new-path"`
}

type planAttributes struct {
	Steps            []planStep        `json:"steps"`
	BrokenHyperlinks []brokenHyperlink `json:"broken-hyperlinks"`
}

// create serves POST /publish-plans: 200 with what POST /revisions would
// publish for the same relationships.drafts, changing nothing. Drafts held
// by an in-flight or scheduled revision are reported per step (held-by).
func (h publishPlansHandler) create(c *fiber.Ctx) error {
	q, err := parseQuery(c, QuerySpec{Includes: []string{"drafts"}, Fields: []string{"publish-plans", "drafts"}})
	if err != nil {
		return err
	}
	data, err := decodeCreate[planRequest](c, "publish-plans")
	if err != nil {
		return err
	}
	ids, _, err := readDraftIdents(data.Relationships)
	if err != nil {
		return err
	}
	plan, err := h.engine.Plan(c.UserContext(), h.db, siteOf(c), ids)
	if err != nil {
		return err
	}
	attrs := planAttributes{Steps: make([]planStep, len(plan.Steps)), BrokenHyperlinks: make([]brokenHyperlink, len(plan.BrokenLinks))}
	draftIDs := make([]string, len(plan.Steps))
	var planned []*drafts.Draft
	for i, st := range plan.Steps {
		d := st.Draft
		var held *string
		if d.RevisionID != nil {
			s := d.RevisionID.String()
			held = &s
		}
		attrs.Steps[i] = planStep{Draft: d.ID.String(), Item: planItem{d.ItemType, d.ItemID.String()}, Event: d.Event, Group: st.Group, HeldBy: held}
		draftIDs[i] = d.ID.String()
		if q.Include["drafts"] {
			planned = append(planned, d)
		}
	}
	included, err := h.drafts.render(c.UserContext(), siteOf(c), planned)
	if err != nil {
		return err
	}
	for i, bl := range plan.BrokenLinks {
		var draft, newPath *string
		if bl.DraftID != nil {
			s := bl.DraftID.String()
			draft = &s
		}
		if bl.NewPath != "" {
			newPath = &bl.NewPath
		}
		attrs.BrokenHyperlinks[i] = brokenHyperlink{Hyperlink: bl.ID.String(), Block: bl.LinkableID.String(), Draft: draft, Href: bl.Href,
			Page: planItem{"pages", bl.LinkedID.String()}, OldPath: bl.OldPath, NewPath: newPath}
	}
	res := &jsonapi.Resource{Type: "publish-plans", ID: uuid.NewString(), Attributes: attrs,
		Relationships: map[string]*jsonapi.Relationship{"drafts": {Data: jsonapi.ToMany("drafts", draftIDs)}},
		Meta:          map[string]any{"drafts-count": len(plan.Steps), "pulled-in-count": len(plan.Steps) - plan.Listed}}
	return respondIncluded(c, fiber.StatusOK, jsonapi.Document{Data: q.Sparse(res), Included: sparseAll(q, included)}, q.Include["drafts"])
}

// registerPublishPlanRoutes registers /publish-plans (docs/drafts.md).
func registerPublishPlanRoutes(r routes, engine *drafts.Engine) {
	h := publishPlansHandler{db: r.deps.DB, engine: engine, links: r.links, drafts: r.drafts}
	r.post("/publish-plans", h.create)
}
