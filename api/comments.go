package api

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/models"
)

// Comments on records (issue 30 §3, docs/releases.md "Comments"): GET and
// POST /comments (filter[item]=type:id), GET, PATCH and DELETE
// /comments/:id. A draft's and a release's comments are their to-many
// comments (GET /releases/:id?include=drafts.comments). Anyone who reads
// the site reads them; authors and up write them; only a comment's author
// changes its body or deletes it.

type commentAttributes struct {
	Body     string `json:"body"`
	Resolved bool   `json:"resolved"`
	timestamps
}

// commentRequest is what POST and PATCH /comments accept.
type commentRequest struct {
	Body     *string `json:"body" oas:"required"`
	Resolved *bool   `json:"resolved"`
	readOnlyTimestamps
}

type commentFields struct {
	body     string
	resolved bool
}

// maxCommentBody bounds a comment's body (the column's check).
const maxCommentBody = 10000

func (r commentRequest) validate(sent map[string]bool, create bool) (f commentFields, err error) {
	if err = checkReadOnly(sent); err != nil {
		return f, err
	}
	if create || sent["body"] {
		if r.Body == nil {
			return f, invalidAttr("body", "invalid_comment_body", "body is required: 1 to 10000 characters.")
		}
		f.body = cleanText(*r.Body)
		if strings.TrimSpace(f.body) == "" || utf8.RuneCountInString(f.body) > maxCommentBody {
			return f, invalidAttr("body", "invalid_comment_body", fmt.Sprintf("body is required: 1 to %d characters.", maxCommentBody))
		}
	}
	if sent["resolved"] {
		if r.Resolved == nil {
			return f, invalidAttr("resolved", "invalid_resolved", "resolved is true or false.")
		}
		f.resolved = *r.Resolved
	}
	return f, nil
}

var commentColumns = []attrColumn[models.Comment, commentFields]{
	{"body", "body", func(c *models.Comment, f commentFields) { c.Body = f.body }},
	{"resolved", "resolved", func(c *models.Comment, f commentFields) { c.Resolved = f.resolved }},
}

func commentSpec(collection bool) QuerySpec {
	s := QuerySpec{Fields: fieldsOf("comments"), Includes: includesOf("comments")}
	if collection {
		s.Collection = true
		s.Filters = map[string]string{"item": "item_key", "resolved": "resolved"}
		s.BoolFilters = map[string]bool{"resolved": true}
		s.Sorts = map[string]string{"created-at": "created_at"}
		s.DefaultSort = models.OrderOldest
	}
	return s
}

type commentsHandler struct {
	db    *bun.DB
	links links
	rows  rowRenderer[models.Comment]
}

func (h commentsHandler) resource(cm *models.Comment) *jsonapi.Resource {
	p := "/comments/" + cm.ID.String()
	item := cm.ItemID.String()
	return versioned(&jsonapi.Resource{Type: "comments", ID: cm.ID.String(), Links: h.links.self(p),
		Attributes: commentAttributes{Body: cm.Body, Resolved: cm.Resolved, timestamps: timestampsOf(cm.CreatedAt, cm.UpdatedAt)},
		Relationships: map[string]*jsonapi.Relationship{
			"item": h.links.relationship(p, "item", jsonapi.ToOne(cm.ItemType, &item)),
			"user": h.links.relationship(p, "user", jsonapi.ToOne("users", optionalID(cm.UserID))),
		}}, cm.Version)
}

// readItem reads relationships.item: one of the types a comment is on.
func readItem(rels map[string]jsonapi.RequestRelationship) (string, uuid.UUID, error) {
	r, ok := rels["item"]
	if !ok {
		return "", uuid.Nil, jsonapi.Unprocessable("missing_relationship", "relationships.item names the record commented on.").AtPointer("/data/relationships")
	}
	ident, err := r.ToOne()
	if err != nil || ident == nil {
		return "", uuid.Nil, jsonapi.BadRequest("invalid_member", `relationships.item.data must be {"type":…,"id":"..."}.`).AtPointer("/data/relationships/item/data")
	}
	if _, ok := models.CommentItemTables[ident.Type]; !ok {
		return "", uuid.Nil, jsonapi.Unprocessable("invalid_relationship_type", "relationships.item.data.type is pages, contents, content-blocks, drafts or releases.").
			AtPointer("/data/relationships/item/data/type")
	}
	id, err := uuid.Parse(ident.ID)
	if err != nil {
		return "", uuid.Nil, models.RefNotFound("item", "record")
	}
	return ident.Type, id, nil
}

// create serves POST /comments: 201 with the comment.
func (h commentsHandler) create(c *fiber.Ctx) error {
	req, err := readCreate[commentRequest, commentFields](c, commentSpec(false), "comments", relNames{writable: []string{"item"}, readOnly: []string{"user"}})
	if err != nil {
		return err
	}
	typ, id, err := readItem(req.data.Relationships)
	if err != nil {
		return err
	}
	pr := oauth.PrincipalOf(c)
	cm := &models.Comment{SiteRecord: models.NewSiteRecord(pr.SiteID), ItemType: typ, ItemID: id, UserID: models.Person(pr.UserID),
		Body: req.fields.body, Resolved: req.fields.resolved}
	return createRow(c, h.db, h.rows, req.q, cm.ID, cm, models.CreateComment)
}

// update serves PATCH /comments/:id: the author changes the body; anyone
// who may edit resolves it.
func (h commentsHandler) update(c *fiber.Ctx) error {
	req, err := readPatch[commentRequest, commentFields](c, commentSpec(false), "comment", "comments", relNames{readOnly: []string{"item", "user"}})
	if err != nil {
		return err
	}
	p := patchOf(c, req, h.rows, models.FindComment, commentColumns)
	by := models.Person(oauth.PrincipalOf(c).UserID)
	if req.data.Sent["body"] {
		p.check = func(cm *models.Comment) error { return models.CheckCommentAuthor(cm, by) }
	}
	return patchRow(c, h.db, p)
}

// delete serves DELETE /comments/:id (its author only): 204.
func (h commentsHandler) delete(c *fiber.Ctx) error {
	id, err := idParam(c, "comment")
	if err != nil {
		return err
	}
	by := models.Person(oauth.PrincipalOf(c).UserID)
	if err := runTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
		auditItem(ctx, id)
		return models.DeleteComment(ctx, tx, siteOf(c), id, by)
	}); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// commentsOf pages through the comments on records of type typ.
func commentsOf(db bun.IDB, typ string) manyFunc {
	return func(ctx context.Context, siteID uuid.UUID, parents []uuid.UUID, _ bool, w models.Window) (map[uuid.UUID]idPage, error) {
		rows, err := models.CommentPages(ctx, db, siteID, typ, parents, w)
		if err != nil {
			return nil, err
		}
		return idPages(rows, parents, w), nil
	}
}

// registerCommentRoutes registers /comments.
func registerCommentRoutes(r routes) {
	h := commentsHandler{db: r.deps.DB, links: r.links}
	h.rows = rowRenderer[models.Comment]{cat: r.cat, render: renderEach(h.resource), version: func(cm *models.Comment) int { return cm.Version }}
	r.cat.add(&resourceType{typ: "comments", what: "comment",
		fetch: fetchRows(h.db, models.CommentsByIDs, renderEach(h.resource))})
	r.get("/comments", models.PermRead, h.rows.list(commentSpec(true), r.links, "/comments", r.deps.DB, models.ListComments))
	r.post("/comments", models.PermEdit, h.create)
	r.get("/comments/:id", models.PermRead, h.rows.get(commentSpec(false), func(c *fiber.Ctx) (*models.Comment, error) {
		return loadByID(c, h.db, "comment", models.FindComment)
	}))
	r.patch("/comments/:id", models.PermEdit, h.update)
	r.delete("/comments/:id", models.PermEdit, h.delete)
}
