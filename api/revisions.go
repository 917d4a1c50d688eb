package api

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

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
}

type revisionAttributes struct {
	Comments      string  `json:"comments"`
	Status        string  `json:"status"`
	VersionsCount int     `json:"versions-count"`
	ErrorMessage  *string `json:"error-message"`
	CreatedAt     string  `json:"created-at"`
}

func (h revisionsHandler) resource(r *drafts.Revision, versionIDs []string) *jsonapi.Resource {
	p := "/revisions/" + r.ID.String()
	ids := make([]string, len(r.DraftIDs))
	for i, d := range r.DraftIDs {
		ids[i] = d.String()
	}
	var user *string
	if r.UserID != nil {
		s := r.UserID.String()
		user = &s
	}
	rels := map[string]*jsonapi.Relationship{
		"drafts":   h.links.relationship(p, "drafts", jsonapi.ToMany("drafts", ids)),
		"user":     h.links.relationship(p, "user", jsonapi.ToOne("users", user)),
		"versions": {Links: &jsonapi.Links{Self: h.links.base + p + "/relationships/versions", Related: h.links.base + p + "/versions"}},
	}
	if versionIDs != nil {
		rels["versions"].Data = jsonapi.ToMany("versions", versionIDs)
	}
	return &jsonapi.Resource{Type: "revisions", ID: r.ID.String(), Links: h.links.self(p), Relationships: rels,
		Attributes: revisionAttributes{Comments: r.Comments, Status: r.Status, VersionsCount: r.VersionsCount, ErrorMessage: r.ErrorMessage, CreatedAt: timestamp(r.CreatedAt)}}
}

type versionAttributes struct {
	Event         string         `json:"event"`
	ObjectChanges map[string]any `json:"object-changes"`
	CreatedAt     string         `json:"created-at"`
}

func (h revisionsHandler) versionResource(v *drafts.Version) *jsonapi.Resource {
	p := "/versions/" + v.ID.String()
	item, rev := v.ItemID.String(), v.RevisionID.String()
	var user *string
	if v.UserID != nil {
		s := v.UserID.String()
		user = &s
	}
	oc := v.ObjectChanges
	if oc == nil {
		oc = map[string]any{}
	}
	return &jsonapi.Resource{Type: "versions", ID: v.ID.String(), Links: h.links.self(p),
		Attributes: versionAttributes{Event: v.Event, ObjectChanges: oc, CreatedAt: timestamp(v.CreatedAt)},
		Relationships: map[string]*jsonapi.Relationship{
			"item":     h.links.relationship(p, "item", jsonapi.ToOne(v.ItemType, &item)),
			"revision": h.links.relationship(p, "revision", jsonapi.ToOne("revisions", &rev)),
			"user":     h.links.relationship(p, "user", jsonapi.ToOne("users", user)),
		}}
}

type revisionRequest struct {
	Comments string `json:"comments"`
}

// create serves POST /revisions: it reserves the listed drafts for this
// revision (409 if another in-flight revision holds one), starts
// publish-revision-<id>, and waits for it up to the configured time: 201
// when published, 202 with Location while still publishing, 422 when the
// publish failed (the revision records why; nothing changed).
func (h revisionsHandler) create(c *fiber.Ctx) error {
	q, err := parseQuery(c, QuerySpec{Includes: []string{"versions"}, Fields: []string{"revisions", "versions"}})
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
		prev := new(drafts.Revision)
		err := h.db.NewSelect().Model(prev).Where("site_id = ? AND user_id = ? AND idempotency_key = ?", pr.SiteID, pr.UserID, key).Scan(ctx)
		if err == nil {
			return h.respondAfterWait(c, q, prev.ID)
		}
		if !models.IsNoRows(err) {
			return fmt.Errorf("look up the idempotency key: %w", err)
		}
	}
	var doc jsonapi.RequestDocument[revisionRequest]
	if err := jsonapi.Decode(c.Body(), &doc); err != nil {
		return err
	}
	if err := checkType(doc.Data.Type, "revisions"); err != nil {
		return err
	}
	comments := cleanText(doc.Data.Attributes.Comments)
	if utf8.RuneCountInString(comments) > 10000 {
		return jsonapi.Unprocessable("invalid_comments", "comments are at most 10000 characters.").AtPointer("/data/attributes/comments")
	}
	rel, ok := doc.Data.Relationships["drafts"]
	if !ok {
		return jsonapi.Unprocessable("required", "relationships.drafts lists the drafts to publish.").AtPointer("/data/relationships/drafts")
	}
	var idents []struct {
		Type string         `json:"type"`
		ID   string         `json:"id"`
		Meta map[string]any `json:"meta"`
	}
	if err := json.Unmarshal(rel.Data, &idents); err != nil || len(idents) == 0 {
		return jsonapi.Unprocessable("required", "drafts must be a non-empty array of {type: drafts, id}.").AtPointer("/data/relationships/drafts/data")
	}
	if len(idents) > maxRevisionDrafts {
		return jsonapi.Unprocessable("too_many", fmt.Sprintf("A revision lists at most %d drafts.", maxRevisionDrafts)).AtPointer("/data/relationships/drafts/data")
	}
	ids := make([]uuid.UUID, 0, len(idents))
	want := map[uuid.UUID]*int{}
	for i, ident := range idents {
		ptr := fmt.Sprintf("/data/relationships/drafts/data/%d", i)
		if ident.Type != "drafts" {
			return jsonapi.Unprocessable("invalid_relationship_type", `relationships.drafts.data members must be of type "drafts".`).AtPointer(ptr + "/type")
		}
		id, err := uuid.Parse(ident.ID)
		if err != nil {
			return unknownRelated("drafts", "draft").AtPointer(ptr + "/id")
		}
		if _, dup := want[id]; dup {
			continue
		}
		v, err := metaVersion(ident.Meta)
		if err != nil {
			return jsonapi.BadRequest("invalid_member", "meta.version must be a positive whole number.").AtPointer(ptr + "/meta/version")
		}
		want[id] = v
		ids = append(ids, id)
	}

	rev := &drafts.Revision{ID: uuid.New(), SiteID: pr.SiteID, UserID: &pr.UserID, Comments: comments, Status: drafts.Publishing,
		DraftIDs: ids, CreatedAt: time.Now().UTC(), UpdatedAt: time.Now().UTC()}
	if key != "" {
		rev.IdempotencyKey = &key
	}
	err = runTx(ctx, h.db, func(ctx context.Context, tx bun.Tx) error {
		if err := drafts.Reserve(ctx, tx, rev, want); err != nil {
			return err
		}
		// Started inside the transaction, as uploads are: a committed
		// revision always has its workflow. If Temporal refuses, or the API
		// dies before the commit, the revision and its reservations roll back;
		// a workflow already started then finds no revision and ends
		// (activities.Publisher.Publish waits on the lock taken here).
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", drafts.CommitLockKey(rev.ID)); err != nil {
			return fmt.Errorf("lock the new revision: %w", err)
		}
		if _, err := h.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: workflows.PublishRevisionID(rev.ID.String()), TaskQueue: h.cfg.PublishTaskQueue,
			TypedSearchAttributes: temporal.NewSearchAttributes(
				workflows.SiteIDAttribute.ValueSet(pr.SiteID.String()), workflows.RevisionIDAttribute.ValueSet(rev.ID.String())),
		}, workflows.PublishRevision, rev.ID.String()); err != nil {
			return jsonapi.Unavailable("The publishing service is unreachable; nothing was published. Try again shortly.").WithHeader("Retry-After", "5")
		}
		if h.cfg.BeforeRevisionCommit != nil {
			return h.cfg.BeforeRevisionCommit(rev.ID.String())
		}
		return nil
	})
	if err != nil {
		return err
	}
	return h.respondAfterWait(c, q, rev.ID)
}

// respondAfterWait waits for a revision's workflow (up to the configured time) and
// answers with its state.
func (h revisionsHandler) respondAfterWait(c *fiber.Ctx, q *Query, id uuid.UUID) error {
	ctx := c.UserContext()
	wait, cancel := context.WithTimeout(ctx, h.cfg.PublishWait)
	defer cancel()
	_ = h.temporal.GetWorkflow(wait, workflows.PublishRevisionID(id.String()), "").Get(wait, nil)
	rev := new(drafts.Revision)
	if err := h.db.NewSelect().Model(rev).Where("id = ?", id).Scan(ctx); err != nil {
		return err
	}
	location := h.links.base + "/revisions/" + id.String()
	c.Set(fiber.HeaderLocation, location)
	switch rev.Status {
	case drafts.Failed:
		msg := "publishing failed"
		if rev.ErrorMessage != nil {
			msg = *rev.ErrorMessage
		}
		return jsonapi.Unprocessable("publish_failed", "Nothing was published: "+msg+". The revision at "+location+" records this; every draft is as it was.")
	case drafts.Publishing:
		return respondIncluded(c, fiber.StatusAccepted, jsonapi.Document{Data: q.Sparse(h.resource(rev, nil))}, q.Include["versions"])
	}
	return h.respondRevision(c, q, rev, fiber.StatusCreated)
}

func (h revisionsHandler) respondRevision(c *fiber.Ctx, q *Query, rev *drafts.Revision, status int) error {
	var versions []*drafts.Version
	if err := h.db.NewSelect().Model(&versions).Where("revision_id = ?", rev.ID).Order("created_at", "id").Limit(maxRevisionDrafts * 2).Scan(c.UserContext()); err != nil {
		return err
	}
	ids := make([]string, len(versions))
	included := []*jsonapi.Resource{}
	for i, v := range versions {
		ids[i] = v.ID.String()
		if q.Include["versions"] {
			included = append(included, q.Sparse(h.versionResource(v)))
		}
	}
	return respondIncluded(c, status, jsonapi.Document{Data: q.Sparse(h.resource(rev, ids)), Included: included}, q.Include["versions"])
}

func (h revisionsHandler) load(c *fiber.Ctx) (*drafts.Revision, error) {
	id, err := idParam(c, "revision")
	if err != nil {
		return nil, err
	}
	rev := new(drafts.Revision)
	err = h.db.NewSelect().Model(rev).Where("id = ? AND site_id = ?", id, oauth.PrincipalOf(c).SiteID).Scan(c.UserContext())
	if models.IsNoRows(err) {
		return nil, models.NotFound("revision")
	} else if err != nil {
		return nil, err
	}
	return rev, nil
}

// get serves GET /revisions/:id.
func (h revisionsHandler) get(c *fiber.Ctx) error {
	q, err := parseQuery(c, QuerySpec{Includes: []string{"versions"}, Fields: []string{"revisions", "versions"}})
	if err != nil {
		return err
	}
	rev, err := h.load(c)
	if err != nil {
		return err
	}
	return h.respondRevision(c, q, rev, fiber.StatusOK)
}

// list serves GET /revisions, newest first.
func (h revisionsHandler) list(c *fiber.Ctx) error {
	q, err := parseQuery(c, QuerySpec{Collection: true, Fields: []string{"revisions"},
		Filters: map[string]string{"status": "status"}, Sorts: map[string]string{"created-at": "created_at"}, DefaultSort: "r.created_at DESC, r.id"})
	if err != nil {
		return err
	}
	var revs []*drafts.Revision
	total, err := q.Apply(h.db.NewSelect().Model(&revs).Where("r.site_id = ?", oauth.PrincipalOf(c).SiteID)).ScanAndCount(c.UserContext())
	if err != nil {
		return err
	}
	data := make([]*jsonapi.Resource, len(revs))
	for i, r := range revs {
		data[i] = q.Sparse(h.resource(r, nil))
	}
	return respond(c, fiber.StatusOK, jsonapi.Document{Data: data, Links: h.links.collection("/revisions", q, total), Meta: map[string]any{"total": total}})
}

// versions serves GET /revisions/:id/versions.
func (h revisionsHandler) versions(c *fiber.Ctx) error {
	q, err := parseQuery(c, QuerySpec{Collection: true, Fields: []string{"versions"}, DefaultSort: "v.created_at, v.id"})
	if err != nil {
		return err
	}
	rev, err := h.load(c)
	if err != nil {
		return err
	}
	var vs []*drafts.Version
	total, err := q.Apply(h.db.NewSelect().Model(&vs).Where("v.revision_id = ?", rev.ID)).ScanAndCount(c.UserContext())
	if err != nil {
		return err
	}
	data := make([]*jsonapi.Resource, len(vs))
	for i, v := range vs {
		data[i] = q.Sparse(h.versionResource(v))
	}
	return respond(c, fiber.StatusOK, jsonapi.Document{Data: data, Links: h.links.collection("/revisions/"+rev.ID.String()+"/versions", q, total), Meta: map[string]any{"total": total}})
}

// version serves GET /versions/:id.
func (h revisionsHandler) version(c *fiber.Ctx) error {
	if _, err := queryParams(c); err != nil {
		return err
	}
	id, err := idParam(c, "version")
	if err != nil {
		return err
	}
	v := new(drafts.Version)
	if err := h.db.NewSelect().Model(v).Where("id = ? AND site_id = ?", id, oauth.PrincipalOf(c).SiteID).Scan(c.UserContext()); models.IsNoRows(err) {
		return models.NotFound("version")
	} else if err != nil {
		return err
	}
	return respond(c, fiber.StatusOK, jsonapi.Document{Data: h.versionResource(v)})
}

// registerRevisionRoutes registers /revisions and /versions (docs/drafts.md).
func registerRevisionRoutes(r routes) {
	d := r.deps
	h := revisionsHandler{db: d.DB, temporal: d.Temporal, cfg: d.Config, links: r.links}
	r.post("/revisions", h.create)
	r.get("/revisions", h.list)
	r.get("/revisions/:id", h.get)
	r.get("/revisions/:id/versions", h.versions)
	r.get("/versions/:id", h.version)
}
