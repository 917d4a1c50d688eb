package api

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/intake"
	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
)

// Releases (docs/releases.md): a named set of drafts, staged through the
// relationship endpoints of drafts, previewed by every read's
// preview-release (preview.go) and published by POST /revisions with the
// relationship release (revisions.go).

type releaseAttributes struct {
	Title       string  `json:"title"`
	Description *string `json:"description"`
	Status      string  `json:"status" oas:"enum:release-status"`
	// The review step (docs/releases.md "Review"): valid approvals, and
	// how many the site requires (release-approvals).
	ApprovalsCount    int `json:"approvals-count"`
	ApprovalsRequired int `json:"approvals-required"`
	timestamps
}

// releaseRequest is what POST and PATCH /releases accept.
type releaseRequest struct {
	Title       *string `json:"title" oas:"required"`
	Description *string `json:"description" oas:"nullable"`
	// Read-only, accepted only to be refused with a pointer at them.
	Status            any `json:"status"`
	ApprovalsCount    any `json:"approvals-count"`
	ApprovalsRequired any `json:"approvals-required"`
	readOnlyTimestamps
}

// releaseFields are the validated attributes of a request.
type releaseFields struct {
	title       string
	description *string
}

// maxReleaseDescription bounds a release's description (the column's check).
const maxReleaseDescription = 10000

func (r releaseRequest) validate(sent map[string]bool, create bool) (f releaseFields, err error) {
	if err = checkReadOnly(sent, "status", "approvals-count", "approvals-required"); err != nil {
		return f, err
	}
	if create || sent["title"] {
		if r.Title == nil || strings.TrimSpace(*r.Title) == "" || utf8.RuneCountInString(*r.Title) > 200 {
			return f, invalidAttr("title", "invalid_title", "title is required: 1 to 200 characters.")
		}
		f.title = strings.TrimSpace(*r.Title)
	}
	if r.Description != nil {
		d := cleanText(*r.Description)
		if utf8.RuneCountInString(d) > maxReleaseDescription {
			return f, invalidAttr("description", "invalid_description", fmt.Sprintf("description is at most %d characters.", maxReleaseDescription))
		}
		f.description = &d
	}
	return f, nil
}

// releaseReadOnlyRels are the relationships of a release the server sets
// (drafts change through their relationship endpoints).
var releaseReadOnlyRels = relNames{readOnly: []string{"drafts", "user", "revision", "reviews"}}

// releaseColumns are the attributes a PATCH /releases may change.
var releaseColumns = []attrColumn[drafts.Release, releaseFields]{
	{"title", "title", func(r *drafts.Release, f releaseFields) { r.Title = f.title }},
	{"description", "description", func(r *drafts.Release, f releaseFields) { r.Description = f.description }},
}

func releaseSpec(collection bool) QuerySpec {
	// include=drafts.comments: the comments of the release's drafts.
	s := QuerySpec{Includes: includesOf("releases", "drafts.comments"), Fields: fieldsOf("releases", "comments")}
	if collection {
		s.Collection = true
		s.Filters = map[string]string{"status": "shown_status"} // approved is derived (drafts.ListReleases)
		s.Sorts = map[string]string{"created-at": "created_at", "updated-at": "updated_at", "title": "title"}
		s.DefaultSort = models.OrderOldest
	}
	return s
}

type releasesHandler struct {
	db     *bun.DB
	engine *drafts.Engine
	links  links
	cat    *catalog
	rows   rowRenderer[drafts.Release]
}

// resource renders r in its review state st (its drafts' linkage:
// catalog.fillMany).
func (h releasesHandler) resource(r *drafts.Release, st drafts.ReviewState) *jsonapi.Resource {
	p := "/releases/" + r.ID.String()
	return versioned(&jsonapi.Resource{Type: "releases", ID: r.ID.String(), Links: h.links.self(p),
		Attributes: releaseAttributes{Title: r.Title, Description: r.Description, Status: drafts.ShownStatus(r, st),
			ApprovalsCount: st.Approvals, ApprovalsRequired: st.Required, timestamps: timestampsOf(r.CreatedAt, r.UpdatedAt)},
		Relationships: map[string]*jsonapi.Relationship{
			"drafts":   h.links.relationship(p, "drafts", nil),
			"user":     h.links.relationship(p, "user", jsonapi.ToOne("users", optionalID(r.UserID))),
			"revision": h.links.relationship(p, "revision", jsonapi.ToOne("revisions", optionalID(r.RevisionID))),
			"reviews":  h.links.relationship(p, "reviews", nil),
		}}, r.Version)
}

// render renders releases with their drafts' linkage.
func (h releasesHandler) render(ctx context.Context, siteID uuid.UUID, rows []drafts.Release) ([]*jsonapi.Resource, error) {
	ids := make([]uuid.UUID, len(rows))
	for i := range rows {
		ids[i] = rows[i].ID
	}
	states, err := drafts.ReviewStates(ctx, h.db, siteID, ids)
	if err != nil {
		return nil, err
	}
	rs := make([]*jsonapi.Resource, len(rows))
	for i := range rows {
		rs[i] = h.resource(&rows[i], states[rows[i].ID])
	}
	return rs, h.cat.fillMany(ctx, siteID, h.cat.types["releases"], rs, false)
}

func (h releasesHandler) load(c *fiber.Ctx) (*drafts.Release, error) {
	return loadByID(c, h.db, "release", drafts.FindRelease)
}

// create serves POST /releases: an open release of no drafts.
func (h releasesHandler) create(c *fiber.Ctx) error {
	req, err := readCreate[releaseRequest, releaseFields](c, releaseSpec(false), "releases", releaseReadOnlyRels)
	if err != nil {
		return err
	}
	pr := oauth.PrincipalOf(c)
	r := &drafts.Release{SiteRecord: models.NewSiteRecord(pr.SiteID), Title: req.fields.title, Description: req.fields.description,
		UserID: models.Person(pr.UserID)}
	return createRow(c, h.db, h.rows, req.q, r.ID, r, drafts.CreateRelease)
}

// update serves PATCH /releases/:id (title, description) of an open release.
func (h releasesHandler) update(c *fiber.Ctx) error {
	req, err := readPatch[releaseRequest, releaseFields](c, releaseSpec(false), "release", "releases", releaseReadOnlyRels)
	if err != nil {
		return err
	}
	p := patchOf(c, req, h.rows, drafts.FindRelease, releaseColumns)
	p.check = drafts.CheckOpen
	return patchRow(c, h.db, p)
}

// stage serves POST (stage) and DELETE (unstage) of
// /releases/:id/relationships/drafts: {"data": [{"type": "drafts", "id"}]}; 204.
func (h releasesHandler) stage(add bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if _, err := parseQuery(c, QuerySpec{}); err != nil {
			return err
		}
		id, err := idParam(c, "release")
		if err != nil {
			return err
		}
		ids, err := readDraftLinkage(c)
		if err != nil {
			return err
		}
		if err := runTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
			auditItem(ctx, id)
			if add {
				return drafts.StageDrafts(ctx, tx, siteOf(c), id, ids)
			}
			return drafts.UnstageDrafts(ctx, tx, siteOf(c), id, ids)
		}); err != nil {
			return inRelationshipDocument(err)
		}
		return c.SendStatus(fiber.StatusNoContent)
	}
}

// maxStage bounds the drafts one request stages or unstages.
const maxStage = 1000

// readDraftLinkage reads a relationship document of drafts: the ids in
// order, duplicates dropped.
func readDraftLinkage(c *fiber.Ctx) ([]uuid.UUID, error) {
	body, err := intake.Body(c) // read and bounded by the route's intake.ReadBody
	if err != nil {
		return nil, err
	}
	var doc struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || len(doc.Data) == 0 {
		return nil, jsonapi.BadRequest("malformed_document", "The body is a relationship document: {\"data\": [{\"type\": \"drafts\", \"id\": …}]}.").AtPointer("/data")
	}
	var idents []struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	}
	if err := json.Unmarshal(doc.Data, &idents); err != nil || len(idents) == 0 {
		return nil, jsonapi.Unprocessable("required", "data must be a non-empty array of {type: drafts, id}.").AtPointer("/data")
	}
	if len(idents) > maxStage {
		return nil, jsonapi.Unprocessable("too_many", fmt.Sprintf("One request stages at most %d drafts.", maxStage)).AtPointer("/data")
	}
	seen := map[uuid.UUID]bool{}
	ids := make([]uuid.UUID, 0, len(idents))
	for i, ident := range idents {
		if ident.Type != "drafts" {
			return nil, jsonapi.Unprocessable("invalid_relationship_type", `data members must be of type "drafts".`).AtPointer(fmt.Sprintf("/data/%d/type", i))
		}
		id, err := uuid.Parse(ident.ID)
		if err != nil {
			return nil, jsonapi.NotFound("No draft with that id.").AtPointer(fmt.Sprintf("/data/%d/id", i))
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// stagedOf pages through the releases' staged drafts.
func (h releasesHandler) stagedOf(ctx context.Context, siteID uuid.UUID, parents []uuid.UUID, _ bool, w models.Window) (map[uuid.UUID]idPage, error) {
	rows, err := drafts.StagedPages(ctx, h.db, siteID, parents, draftLocaleOf(ctx), w)
	if err != nil {
		return nil, err
	}
	return idPages(rows, parents, w), nil
}

// registerReleaseRoutes registers /releases (docs/releases.md). Authors
// create, edit, stage and cancel releases (as they plan publishes);
// publishing one is POST /revisions, which needs publish.
func registerReleaseRoutes(r routes, engine *drafts.Engine) {
	h := releasesHandler{db: r.deps.DB, engine: engine, links: r.links, cat: r.cat}
	h.rows = rowRenderer[drafts.Release]{render: h.render, cat: r.cat, version: func(rl *drafts.Release) int { return rl.Version }}
	r.cat.add(&resourceType{typ: "releases", what: "release", many: map[string]manyFunc{"drafts": h.stagedOf, "reviews": reviewsOf(h.db)},
		params: map[string]relParams{"drafts": {names: []string{draftLocaleParam}, read: withDraftLocale}},
		fetch:  fetchRows(h.db, drafts.ReleasesByIDs, h.render)})
	r.get("/releases", models.PermRead, h.rows.list(releaseSpec(true), r.links, "/releases", r.deps.DB, drafts.ListReleases))
	r.post("/releases", models.PermEdit, h.create)
	r.get("/releases/:id", models.PermRead, h.rows.get(releaseSpec(false), h.load))
	r.patch("/releases/:id", models.PermEdit, h.update)
	// DELETE cancels an open release; its drafts stay, unstaged, and its
	// review workflow is told to end.
	r.delete("/releases/:id", models.PermEdit, newReviewNotifier(r.deps).cancel())
	r.post("/releases/:id/relationships/drafts", models.PermEdit, h.stage(true))
	r.delete("/releases/:id/relationships/drafts", models.PermEdit, h.stage(false))
}
