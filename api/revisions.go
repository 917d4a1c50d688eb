package api

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
	"github.com/pressroom/pressroom/workflows"
)

// maxRevisionDrafts bounds the drafts one revision may list.
const maxRevisionDrafts = 5000

type revisionsHandler struct {
	db       *bun.DB
	temporal client.Client
	cfg      config.Config
	links    links
	log      *slog.Logger
	engine   *drafts.Engine
	cat      *catalog
	faults   Faults
}

type revisionAttributes struct {
	Comments      string  `json:"comments"`
	Status        string  `json:"status" oas:"enum:revision-status"` // scheduled, publishing, published, failed or cancelled
	VersionsCount int     `json:"versions-count"`                    // versions it wrote (a publish's closure included); 0 until published
	ErrorMessage  *string `json:"error-message"`                     // why publishing failed; null unless failed
	PublishAt     *string `json:"publish-at" oas:"date-time"`        // when a scheduled revision publishes; null for one published at once
	// Locales are the locales its versions changed (a shared version
	// counts as the base locale); empty until published (docs/locales.md).
	Locales   []string `json:"locales"`
	CreatedAt string   `json:"created-at" oas:"date-time"`
}

// resource renders a revision: its drafts' linkage from the row (the
// first page), its versions' filled by render.
func (h revisionsHandler) resource(r *drafts.Revision) *jsonapi.Resource {
	p := "/revisions/" + r.ID.String()
	ids := make([]string, len(r.DraftIDs))
	for i, d := range r.DraftIDs {
		ids[i] = d.String()
	}
	page := idPage{ids: ids[:min(len(ids), maxPageSize)], total: len(ids)}
	rels := map[string]*jsonapi.Relationship{
		"drafts":   h.links.relationship(p, "drafts", nil),
		"user":     h.links.relationship(p, "user", jsonapi.ToOne("users", optionalID(r.UserID))),
		"versions": h.links.relationship(p, "versions", nil),
	}
	setPage(rels["drafts"], "drafts", page, false)
	// Only a revert has reverts (GET /revisions carries no null linkage).
	if r.RevertsID != nil {
		rels["reverts"] = h.links.relationship(p, "reverts", jsonapi.ToOne("revisions", optionalID(r.RevertsID)))
	}
	// Only a release's revision has release.
	if r.ReleaseID != nil {
		rels["release"] = h.links.relationship(p, "release", jsonapi.ToOne("releases", optionalID(r.ReleaseID)))
	}
	return &jsonapi.Resource{Type: "revisions", ID: r.ID.String(), Links: h.links.self(p), Relationships: rels,
		Attributes: revisionAttributes{Comments: r.Comments, Status: r.Status, VersionsCount: r.VersionsCount, ErrorMessage: r.ErrorMessage,
			PublishAt: optionalTimestamp(r.PublishAt), Locales: revisionLocales(r), CreatedAt: timestamp(r.CreatedAt)}}
}

// revisionLocales is r's locales attribute: [] rather than null before
// it is published.
func revisionLocales(r *drafts.Revision) []string {
	if r.Locales == nil {
		return []string{}
	}
	return r.Locales
}

// render renders revisions with the first page of their versions' linkage.
func (h revisionsHandler) render(ctx context.Context, siteID uuid.UUID, revs []*drafts.Revision) ([]*jsonapi.Resource, error) {
	out := make([]*jsonapi.Resource, len(revs))
	for i, r := range revs {
		out[i] = h.resource(r)
	}
	return out, h.cat.fillMany(ctx, siteID, h.cat.types["revisions"], out, false)
}

// revisionSpec is the query a revision's document reads.
func revisionSpec() QuerySpec {
	return QuerySpec{Includes: includesOf("revisions"), Fields: fieldsOf("revisions")}
}

type revisionRequest struct {
	Comments  string  `json:"comments"`
	PublishAt *string `json:"publish-at" oas:"date-time,nullable"`
	// Force, with reverts, restores over changes of later revisions.
	Force *bool `json:"force" oas:"nullable"`
}

// publishRequest is the body of a POST /revisions, validated: what a
// revision asks for, and what its publish plan (POST /publish-plans, the
// same members) plans.
type publishRequest struct {
	comments  string
	publishAt time.Time          // zero: at once
	drafts    []uuid.UUID        // the listed drafts, in order (none for a rollback)
	want      map[uuid.UUID]*int // the meta.version each draft identifier asks for
	reverts   *uuid.UUID         // the revision a rollback reverts; nil for a publish
	release   *uuid.UUID         // the release a publish publishes (its staged drafts); nil for listed drafts
	force     bool               // a rollback restores over later revisions
}

// readPublishRequest decodes and validates the body of POST /revisions
// (typ "revisions") or of its plan (typ "publish-plans"): one decoder and
// one set of refusals, so a plan takes exactly the body a publish takes and
// refuses what it refuses.
func readPublishRequest(c *fiber.Ctx, typ string) (*publishRequest, error) {
	data, err := decodeCreate[revisionRequest](c, typ)
	if err != nil {
		return nil, err
	}
	req := &publishRequest{comments: cleanText(data.Attributes.Comments)}
	if utf8.RuneCountInString(req.comments) > 10000 {
		return nil, jsonapi.Unprocessable("invalid_comments", "comments are at most 10000 characters.").AtPointer("/data/attributes/comments")
	}
	_, release := data.Relationships["release"]
	if _, reverts := data.Relationships["reverts"]; reverts {
		if release {
			return nil, jsonapi.Unprocessable("invalid_relationship", "A revision that reverts another publishes no release.").AtPointer("/data/relationships/release")
		}
		if _, ok := data.Relationships["drafts"]; ok {
			return nil, jsonapi.Unprocessable("invalid_relationship", "A revision that reverts another lists no drafts.").AtPointer("/data/relationships/drafts")
		}
		if data.Attributes.PublishAt != nil {
			return nil, jsonapi.Unprocessable("invalid_publish_at", "A revert publishes at once; it cannot be scheduled.").AtPointer("/data/attributes/publish-at")
		}
		req.force = data.Attributes.Force != nil && *data.Attributes.Force
		target, err := readRequiredToOne(data.Relationships, "reverts", "revisions", "revision", "the revision to revert")
		req.reverts = &target
		return req, err
	}
	if data.Attributes.Force != nil {
		return nil, jsonapi.Unprocessable("invalid_force", "force applies only to a revision that reverts another.").AtPointer("/data/attributes/force")
	}
	if data.Attributes.PublishAt != nil {
		if req.publishAt, err = parsePublishAt(*data.Attributes.PublishAt); err != nil {
			return nil, err
		}
	}
	if release {
		// A release's staged drafts, as its relationship drafts lists them.
		if _, ok := data.Relationships["drafts"]; ok {
			return nil, jsonapi.Unprocessable("invalid_relationship", "A revision that publishes a release lists no drafts: it publishes the release's.").
				AtPointer("/data/relationships/drafts")
		}
		id, err := readRequiredToOne(data.Relationships, "release", "releases", "release", "the release to publish")
		req.release = &id
		return req, err
	}
	req.drafts, req.want, err = readDraftIdents(data.Relationships)
	return req, err
}

// readDraftIdents reads relationships.drafts of a revision or a publish
// plan: the draft ids in order (duplicates dropped) and the meta.version
// each identifier asks for (nil: any).
func readDraftIdents(rels map[string]jsonapi.RequestRelationship) ([]uuid.UUID, map[uuid.UUID]*int, error) {
	rel, ok := rels["drafts"]
	if !ok {
		return nil, nil, jsonapi.Unprocessable("required", "relationships.drafts lists the drafts to publish.").AtPointer("/data/relationships/drafts")
	}
	var idents []struct {
		Type string         `json:"type"`
		ID   string         `json:"id"`
		Meta map[string]any `json:"meta"`
	}
	if err := json.Unmarshal(rel.Data, &idents); err != nil || len(idents) == 0 {
		return nil, nil, jsonapi.Unprocessable("required", "drafts must be a non-empty array of {type: drafts, id}.").AtPointer("/data/relationships/drafts/data")
	}
	if len(idents) > maxRevisionDrafts {
		return nil, nil, jsonapi.Unprocessable("too_many", fmt.Sprintf("A revision lists at most %d drafts.", maxRevisionDrafts)).AtPointer("/data/relationships/drafts/data")
	}
	ids := make([]uuid.UUID, 0, len(idents))
	want := map[uuid.UUID]*int{}
	for i, ident := range idents {
		ptr := fmt.Sprintf("/data/relationships/drafts/data/%d", i)
		if ident.Type != "drafts" {
			return nil, nil, jsonapi.Unprocessable("invalid_relationship_type", `relationships.drafts.data members must be of type "drafts".`).AtPointer(ptr + "/type")
		}
		id, err := uuid.Parse(ident.ID)
		if err != nil {
			e := models.RefNotFound("drafts", "draft")
			e.At = models.RelItem("drafts", i, models.PartID)
			return nil, nil, e
		}
		if _, dup := want[id]; dup {
			continue
		}
		v, err := metaVersion(ident.Meta)
		if err != nil {
			return nil, nil, jsonapi.BadRequest("invalid_member", "meta.version must be a positive whole number.").AtPointer(ptr + "/meta/version")
		}
		want[id] = v
		ids = append(ids, id)
	}
	return ids, want, nil
}

// create serves POST /revisions: it reserves the listed drafts for this
// revision (409 if another in-flight or scheduled revision holds one),
// starts publish-revision-<id>, and waits for it up to the configured
// time: 201 when published, 202 with Location while still publishing, 422
// when the publish failed (the revision records why; nothing changed).
// With publish-at the revision is scheduled: 201 at once, status
// scheduled, and the workflow waits on a durable timer.
func (h revisionsHandler) create(c *fiber.Ctx) error {
	q, err := parseQuery(c, revisionSpec())
	if err != nil {
		return err
	}
	pr := oauth.PrincipalOf(c)
	ctx := c.UserContext()
	key := strings.TrimSpace(c.Get("Idempotency-Key"))
	if len(key) > 200 {
		return jsonapi.BadRequest("invalid_idempotency_key", "Idempotency-Key is at most 200 characters.").AtHeader("Idempotency-Key")
	}
	if key != "" {
		prev, err := drafts.RevisionByKey(ctx, h.db, pr.SiteID, pr.UserID, pr.ClientID, key)
		if err != nil {
			return err
		}
		if prev != nil { // a replay: recorded when it was made
			models.AuditOf(ctx).Unchanged()
			return h.respondAfterWait(c, q, prev.ID)
		}
	}
	req, err := readPublishRequest(c, "revisions")
	if err != nil {
		return err
	}
	if req.reverts != nil {
		return h.revert(c, q, req, key)
	}
	publishAt := req.publishAt
	rev := &drafts.Revision{SiteRecord: models.NewSiteRecord(pr.SiteID), UserID: models.Person(pr.UserID), OAuthClientID: actingClient(pr),
		Comments: req.comments, Status: drafts.Publishing, DraftIDs: req.drafts}
	if !publishAt.IsZero() {
		rev.Status, rev.PublishAt = drafts.Scheduled, &publishAt
	}
	if key != "" {
		rev.IdempotencyKey = &key
	}
	err = runTx(ctx, h.db, func(ctx context.Context, tx bun.Tx) error {
		var rl *drafts.Release
		if req.release != nil {
			// The release, locked: its staged drafts are the listed ones.
			var err error
			if rl, err = drafts.ReleaseDrafts(ctx, tx, rev, *req.release); err != nil {
				return err
			}
		} else if err := drafts.CheckDirectPublish(ctx, tx, pr.SiteID); err != nil {
			return err // the site's review step: drafts go live through an approved release
		}
		// A section's publisher: the closure, locked, lies in the section
		// (Publish checks again over the closure it computes).
		if err := h.engine.CheckPublishable(ctx, tx, pr.SiteID, sectionOf(pr), rev.DraftIDs); err != nil {
			return err
		}
		if err := drafts.Reserve(ctx, tx, rev, req.want); err != nil {
			return err
		}
		if rl != nil {
			if err := drafts.MarkReleasePublishing(ctx, tx, rl, rev); err != nil {
				return err
			}
		}
		auditItem(ctx, rev.ID)
		return h.faults.beforeCommit("revisions", rev.ID)
	})
	if err != nil {
		return err
	}
	if err := h.faults.afterCommit("revisions", rev.ID); err != nil {
		return err
	}
	h.startPublish(ctx, rev)
	return h.respondAfterWait(c, q, rev.ID)
}

// actingClient is the integration client a revision is posted by: pr's
// client when its token names no person, else nil.
func actingClient(pr *oauth.Principal) *string {
	if pr.UserID != uuid.Nil || pr.ClientID == "" {
		return nil
	}
	id := pr.ClientID
	return &id
}

// startPublish starts the committed revision's publish workflow and marks
// it started (docs/architecture.md, "From a commit to a workflow"). A start
// that fails leaves the revision to the worker's commit sweep, which starts
// it; the answer is then 202 (publishing), or 201 for a scheduled one.
func (h revisionsHandler) startPublish(ctx context.Context, rev *drafts.Revision) {
	var at time.Time
	if rev.PublishAt != nil {
		at = *rev.PublishAt
	}
	err := workflows.StartPublishRevision(ctx, h.temporal, h.cfg.PublishTaskQueue, rev.SiteID.String(), rev.ID.String(), releaseIDOf(rev), at)
	if err == nil {
		err = drafts.MarkRevisionStarted(ctx, h.db, rev.ID)
	}
	if err != nil && !workflows.IsAlreadyStarted(err) {
		h.log.WarnContext(ctx, "revision recorded, its workflow not started: the commit sweep starts it", "revision", rev.ID, "error", err)
	}
}

// revert serves POST /revisions with relationships.reverts (and no
// drafts): in one transaction a new revision restores every record the
// named one changed (drafts.Engine.RevertRevision); 201 with its versions,
// 409 with one error per conflicting record.
func (h revisionsHandler) revert(c *fiber.Ctx, q *Query, req *publishRequest, key string) error {
	pr := oauth.PrincipalOf(c)
	if pr.Sectioned() {
		// A rollback restores whatever the revision changed: only a
		// publisher of the whole site may.
		return &models.Error{Kind: models.ErrForbidden, Meta: map[string]any{"permission": string(models.PermPublish)},
			Detail: "Rolling back needs the permission \"publish\" for the whole site; yours covers " + *pr.PathPrefix + " only."}
	}
	rev := &drafts.Revision{SiteRecord: models.NewSiteRecord(pr.SiteID), UserID: models.Person(pr.UserID), OAuthClientID: actingClient(pr),
		Comments: req.comments}
	if key != "" {
		rev.IdempotencyKey = &key
	}
	if err := runTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
		return h.engine.RevertRevision(ctx, tx, rev, *req.reverts, req.force)
	}); err != nil {
		return err
	}
	c.Set(fiber.HeaderLocation, h.links.base+"/revisions/"+rev.ID.String())
	return h.respondRevision(c, q, rev, fiber.StatusCreated)
}

// respondAfterWait waits for a revision's workflow (up to the configured
// time) and answers with its state; a scheduled or cancelled revision is
// answered at once.
func (h revisionsHandler) respondAfterWait(c *fiber.Ctx, q *Query, id uuid.UUID) error {
	ctx := c.UserContext()
	siteID := siteOf(c)
	rev, err := drafts.FindRevision(ctx, h.db, siteID, id)
	if err != nil {
		return err
	}
	if rev.Status == drafts.Publishing {
		wait, cancel := context.WithTimeout(ctx, h.cfg.PublishWait)
		defer cancel()
		_ = h.temporal.GetWorkflow(wait, workflows.PublishRevisionID(id.String()), "").Get(wait, nil)
		if rev, err = drafts.FindRevision(ctx, h.db, siteID, id); err != nil {
			return err
		}
	}
	location := h.links.base + "/revisions/" + id.String()
	c.Set(fiber.HeaderLocation, location)
	switch rev.Status {
	case drafts.Failed:
		msg := "publishing failed"
		if rev.ErrorMessage != nil {
			msg = *rev.ErrorMessage
		}
		if rev.ErrorCode != nil && *rev.ErrorCode == drafts.PathTaken {
			// The rule a write that drafts the same place breaks, answered alike.
			return &models.Error{Kind: models.ErrConflict, Code: drafts.PathTaken, At: models.Rel("drafts", models.PartMember), Meta: rev.ErrorMeta,
				Detail: "Nothing was published: " + msg + ". The revision at " + location + " records this; every draft is as it was."}
		}
		if rev.ErrorCode != nil && *rev.ErrorCode == drafts.DefaultLocaleRequired {
			// As Reserve refuses it, when the refusal arose after the request.
			return drafts.DefaultLocaleError(&drafts.PublishError{Message: msg, Meta: rev.ErrorMeta})
		}
		if rev.ErrorCode != nil && *rev.ErrorCode == "forbidden" {
			// The publisher's rights, checked over the closure Publish computed.
			return &models.Error{Kind: models.ErrForbidden, At: models.Rel("drafts", models.PartMember), Meta: rev.ErrorMeta,
				Detail: "Nothing was published: " + msg + ". The revision at " + location + " records this; every draft is as it was."}
		}
		return jsonapi.Unprocessable("publish_failed", "Nothing was published: "+msg+". The revision at "+location+" records this; every draft is as it was.")
	case drafts.Publishing:
		return h.respondRevision(c, q, rev, fiber.StatusAccepted)
	}
	return h.respondRevision(c, q, rev, fiber.StatusCreated)
}

// respondRevision writes rev with what include asks for.
func (h revisionsHandler) respondRevision(c *fiber.Ctx, q *Query, rev *drafts.Revision, status int) error {
	ctx := c.UserContext()
	rs, err := h.render(ctx, rev.SiteID, []*drafts.Revision{rev})
	if err != nil {
		return err
	}
	cd := newCompound(q, rs...)
	if err := h.cat.include(ctx, rev.SiteID, q, cd, rs, false); err != nil {
		return err
	}
	return respondIncluded(c, status, jsonapi.Document{Data: q.Sparse(rs[0]), Included: cd.list}, len(q.Include) > 0)
}

func (h revisionsHandler) load(c *fiber.Ctx) (*drafts.Revision, error) {
	return loadByID(c, h.db, "revision", drafts.FindRevision)
}

// get serves GET /revisions/:id.
func (h revisionsHandler) get(c *fiber.Ctx) error {
	q, err := parseQuery(c, revisionSpec())
	if err != nil {
		return err
	}
	rev, err := h.load(c)
	if err != nil {
		return err
	}
	return h.respondRevision(c, q, rev, fiber.StatusOK)
}

// list serves GET /revisions, newest first; filter[status]=scheduled lists
// what is coming, soonest first.
func (h revisionsHandler) list(c *fiber.Ctx) error {
	spec := QuerySpec{Collection: true, Includes: includesOf("revisions"), Fields: fieldsOf("revisions"),
		Filters: map[string]string{"status": "status"},
		Sorts:   map[string]string{"created-at": "created_at", "publish-at": "publish_at"}, DefaultSort: models.OrderRevisionsNewest}
	if c.Query("filter[status]") == drafts.Scheduled {
		spec.DefaultSort = models.OrderRevisionsSoonest
	}
	q, err := parseQuery(c, spec)
	if err != nil {
		return err
	}
	ctx, siteID := c.UserContext(), siteOf(c)
	revs, total, err := drafts.ListRevisions(ctx, h.db, siteID, q.Apply)
	if err != nil {
		return err
	}
	revs = cursorRows(q, revs)
	data, err := h.render(ctx, siteID, revs)
	if err != nil {
		return err
	}
	cd := newCompound(q, data...)
	if err := h.cat.include(ctx, siteID, q, cd, data, false); err != nil {
		return err
	}
	return cd.respondPage(c, h.links, "/revisions", data, total)
}

// registerRevisionRoutes registers /revisions and /versions (docs/drafts.md).
func registerRevisionRoutes(r routes, engine *drafts.Engine) {
	d := r.deps
	h := revisionsHandler{db: d.DB, temporal: d.Temporal, cfg: d.Config, links: r.links, log: d.Log, engine: engine, cat: r.cat, faults: r.faults}
	r.post("/revisions", models.PermPublish, h.create)
	r.get("/revisions", models.PermRead, h.list)
	r.get("/revisions/:id", models.PermRead, h.get)
	r.patch("/revisions/:id", models.PermPublish, h.update)
	r.delete("/revisions/:id", models.PermPublish, h.cancel)
	// The relationships' endpoints (GET /revisions/:id/versions among
	// them): catalog.routes.
	r.cat.add(&resourceType{typ: "revisions", what: "revision",
		fetch: fetchRows(h.db, models.ByIDs[*drafts.Revision], h.render),
		many:  map[string]manyFunc{"drafts": h.draftsOf, "versions": childMany(h.db, "versions", "revision_id", models.OrderOldest)}})
	versions := &resourceType{typ: "versions", what: "version", fetch: fetchRows(h.db, models.ByIDs[drafts.Version], h.renderVersions)}
	r.cat.add(versions)
	r.get("/versions/:id", models.PermRead, r.cat.get(versions))
}

// draftsOf pages through the drafts revisions list (their rows hold them).
func (h revisionsHandler) draftsOf(ctx context.Context, siteID uuid.UUID, parents []uuid.UUID, _ bool, w models.Window) (map[uuid.UUID]idPage, error) {
	revs, err := models.ByIDs[drafts.Revision](ctx, h.db, siteID, parents)
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID]idPage, len(revs))
	for _, r := range revs {
		out[r.ID] = windowPage(uuidStrings(r.DraftIDs), w)
	}
	return out, nil
}

// releaseIDOf is the release rev publishes, as the workflow's search
// attribute takes it ("" for none).
func releaseIDOf(rev *drafts.Revision) string {
	if rev.ReleaseID == nil {
		return ""
	}
	return rev.ReleaseID.String()
}
