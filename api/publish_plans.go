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

// Publish plans (docs/drafts.md "Publish plans"): a dry run of
// POST /revisions, of the same body, computed by the code that publishes
// or reverts.

type publishPlansHandler struct {
	db     *bun.DB
	engine *drafts.Engine
	links  links
	drafts *draftRenderer
}

type planItem struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

type planStep struct {
	Draft *string  `json:"draft"` // null for a step of a rollback
	Item  planItem `json:"item"`
	Event string   `json:"event" oas:"enum:draft-event"`
	// Locale is the locale whose values the step changes; null for the
	// shared attributes and the base locale's (docs/locales.md).
	Locale *string `json:"locale" oas:"nullable"`
	Group  int     `json:"group"`
	HeldBy *string `json:"held-by"`
	// Staged: for a plan of a release, whether the step's draft is staged
	// in it (false: the closure pulls it in); null otherwise.
	Staged *bool `json:"staged" oas:"nullable"`
	// MayPublish: whether the caller may publish this step (their role
	// has publish, and the step lies in their section), so an author sees
	// what an editor will have to publish.
	MayPublish bool `json:"may-publish"`
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

// planConflict is one reason the POST would be refused: the record, and
// the code and detail of the error object the POST would answer.
type planConflict struct {
	Item   planItem `json:"item"`
	Code   string   `json:"code"`
	Reason string   `json:"reason"`
}

type planAttributes struct {
	Steps            []planStep        `json:"steps"`
	BrokenHyperlinks []brokenHyperlink `json:"broken-hyperlinks"`
	Conflicts        []planConflict    `json:"conflicts"`
}

// create serves POST /publish-plans: 200 with what POST /revisions would
// do with the same body (readPublishRequest: comments, publish-at,
// relationships.drafts or reverts, force; an Idempotency-Key is ignored),
// changing nothing: the steps, and as conflicts what the POST would refuse
// with 409 or 412. Drafts held by an in-flight or scheduled revision are
// also reported per step (held-by).
func (h publishPlansHandler) create(c *fiber.Ctx) error {
	q, err := parseQuery(c, QuerySpec{Includes: []string{"drafts"}, Fields: []string{"publish-plans", "drafts"}})
	if err != nil {
		return err
	}
	req, err := readPublishRequest(c, "publish-plans")
	if err != nil {
		return err
	}
	var plan *drafts.Plan
	var may func(*drafts.PlanStep) bool
	if err := readOnlyTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
		if req.reverts != nil {
			plan, err = h.engine.PlanRevert(ctx, tx, siteOf(c), *req.reverts, req.force)
		} else if req.release != nil {
			// A release's plan: its staged drafts, listed.
			if req.drafts, err = drafts.StagedIDs(ctx, tx, siteOf(c), *req.release); err != nil {
				return err
			}
			plan, err = h.engine.Plan(ctx, tx, siteOf(c), req.drafts, req.want)
		} else {
			plan, err = h.engine.Plan(ctx, tx, siteOf(c), req.drafts, req.want)
		}
		if err != nil {
			return err
		}
		may, err = h.mayPublish(ctx, tx, oauth.PrincipalOf(c), plan, req.reverts != nil)
		return err
	}); err != nil {
		return err
	}
	res, planned := h.resource(plan, req, q, may)
	// Included drafts carry their linkage, as everywhere a draft appears.
	included, err := h.drafts.render(c.UserContext(), siteOf(c), planned)
	if err != nil {
		return err
	}
	return respondIncluded(c, fiber.StatusOK, jsonapi.Document{Data: q.Sparse(res), Included: sparseAll(q, included)}, q.Include["drafts"])
}

// mayPublish tells, per step of plan, whether the caller may publish it:
// with publish, and for a section's publisher a draft in the section (a
// rollback: not at all, as POST /revisions answers).
func (h publishPlansHandler) mayPublish(ctx context.Context, tx bun.Tx, pr *oauth.Principal, plan *drafts.Plan, rollback bool) (func(*drafts.PlanStep) bool, error) {
	if !pr.Can(models.PermPublish) || (rollback && pr.Sectioned()) {
		return func(*drafts.PlanStep) bool { return false }, nil
	}
	var ds []*drafts.Draft
	for _, st := range plan.Steps {
		if st.Draft != nil {
			ds = append(ds, st.Draft)
		}
	}
	outside, err := h.engine.OutsideSection(ctx, tx, pr.SiteID, sectionOf(pr), ds)
	if err != nil {
		return nil, err
	}
	return func(st *drafts.PlanStep) bool {
		if st.Draft == nil {
			return true
		}
		_, out := outside[st.Draft.ID]
		return !out
	}, nil
}

// resource renders a plan, with its drafts to include when q asks.
func (h publishPlansHandler) resource(plan *drafts.Plan, req *publishRequest, q *Query, may func(*drafts.PlanStep) bool) (*jsonapi.Resource, []*drafts.Draft) {
	attrs := planAttributes{Steps: make([]planStep, len(plan.Steps)), BrokenHyperlinks: make([]brokenHyperlink, len(plan.BrokenLinks)),
		Conflicts: make([]planConflict, len(plan.Conflicts))}
	draftIDs := []string{}
	var included []*drafts.Draft
	staged := map[uuid.UUID]bool{}
	for _, id := range req.drafts {
		staged[id] = true
	}
	for i, st := range plan.Steps {
		attrs.Steps[i] = planStep{Item: planItem{st.ItemType, st.ItemID.String()}, Event: st.Event, Locale: localeOrNull(st.Locale), Group: st.Group, MayPublish: may(&plan.Steps[i])}
		if d := st.Draft; d != nil {
			id := d.ID.String()
			attrs.Steps[i].Draft, attrs.Steps[i].HeldBy = &id, optionalID(d.RevisionID)
			if req.release != nil {
				s := staged[d.ID]
				attrs.Steps[i].Staged = &s
			}
			draftIDs = append(draftIDs, id)
			if q.Include["drafts"] {
				included = append(included, d)
			}
		}
	}
	for i, bl := range plan.BrokenLinks {
		var newPath *string
		if bl.NewPath != "" {
			newPath = &bl.NewPath
		}
		attrs.BrokenHyperlinks[i] = brokenHyperlink{Hyperlink: bl.ID.String(), Block: bl.LinkableID.String(), Draft: optionalID(bl.DraftID), Href: bl.Href,
			Page: planItem{"pages", bl.LinkedID.String()}, OldPath: bl.OldPath, NewPath: newPath}
	}
	for i, c := range plan.Conflicts {
		attrs.Conflicts[i] = conflictOf(c)
	}
	rels := map[string]*jsonapi.Relationship{"drafts": {Data: jsonapi.ToMany("drafts", draftIDs)}}
	if req.reverts != nil {
		s := req.reverts.String()
		rels["reverts"] = &jsonapi.Relationship{Data: jsonapi.ToOne("revisions", &s)}
	}
	if req.release != nil {
		s := req.release.String()
		rels["release"] = &jsonapi.Relationship{Data: jsonapi.ToOne("releases", &s)}
	}
	res := &jsonapi.Resource{Type: "publish-plans", ID: uuid.NewString(), Attributes: attrs, Relationships: rels,
		Meta: map[string]any{"drafts-count": len(draftIDs), "pulled-in-count": len(draftIDs) - plan.Listed}}
	return res, included
}

// conflictOf is a refusal the plan foresees, as the error object the POST
// would answer (the one error table) says it.
func conflictOf(e *models.Error) planConflict {
	out := toAPIError(e)
	typ, _ := e.Meta["type"].(string)
	id, _ := e.Meta["id"].(string)
	return planConflict{Item: planItem{typ, id}, Code: out.Code, Reason: out.Detail}
}

// registerPublishPlanRoutes registers /publish-plans (docs/drafts.md).
func registerPublishPlanRoutes(r routes, engine *drafts.Engine) {
	h := publishPlansHandler{db: r.deps.DB, engine: engine, links: r.links, drafts: r.drafts}
	r.post("/publish-plans", models.PermEdit, h.create)
}
