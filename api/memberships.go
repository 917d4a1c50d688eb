package api

import (
	"context"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/auth"
	"github.com/pressroom/pressroom/models"
)

// Memberships: who belongs to the site, with which role (docs/auth.md,
// "Managing the team"). Admins only (models.PermMemberships).

type membershipAttributes struct {
	Email      string  `json:"email" oas:"email"`
	Name       string  `json:"name"`
	Role       string  `json:"role" oas:"enum:role"`
	PathPrefix *string `json:"path-prefix"`
	timestamps
}

// membershipRequest is what POST /memberships accepts.
type membershipRequest struct {
	Email      *string `json:"email" oas:"email,required"`
	Name       *string `json:"name"`
	Role       *string `json:"role" oas:"enum:role,required"`
	PathPrefix *string `json:"path-prefix" oas:"nullable"`
	readOnlyTimestamps
}

// membershipPatch is what PATCH /memberships/:id accepts: the role and
// the section; the e-mail and name are the user's own.
type membershipPatch struct {
	Role       *string `json:"role" oas:"enum:role"`
	PathPrefix *string `json:"path-prefix" oas:"nullable"`
	Email      any     `json:"email"`
	Name       any     `json:"name"`
	readOnlyTimestamps
}

// membershipFields are a request's validated attributes.
type membershipFields struct {
	email, name string
	role        models.Role
	prefix      *string
	prefixSent  bool
}

// roleNames are the built-in roles' names (the role enum).
func roleNames() []string {
	out := make([]string, len(models.Roles))
	for i, r := range models.Roles {
		out[i] = string(r)
	}
	return out
}

// maxPathPrefix bounds a path prefix (the column's check).
const maxPathPrefix = 2048

// roleAttr checks a role sent (required: a create must send one).
func roleAttr(role *string, sent, required bool) (models.Role, error) {
	if !sent && !required {
		return "", nil
	}
	if role == nil || !models.ValidRole(*role) {
		return "", invalidAttr("role", "invalid_role", "role must be one of viewer, author, editor, admin.")
	}
	return models.Role(*role), nil
}

// pathPrefixAttr checks a path prefix sent: null (the whole site), or a
// path that starts and ends with "/".
func pathPrefixAttr(p *string) (*string, error) {
	if p == nil {
		return nil, nil
	}
	if !strings.HasPrefix(*p, "/") || !strings.HasSuffix(*p, "/") || len(*p) > maxPathPrefix {
		return nil, invalidAttr("path-prefix", "invalid_path_prefix", "path-prefix must be null or a path that starts and ends with / (for example /blog/), at most 2048 bytes.")
	}
	return p, nil
}

func (r membershipRequest) validate(sent map[string]bool, _ bool) (f membershipFields, err error) {
	if err = checkReadOnly(sent); err != nil {
		return f, err
	}
	if r.Email == nil || !validEmail(*r.Email) {
		return f, invalidAttr("email", "invalid_email", "email is required: an e-mail address of 3 to 320 characters.")
	}
	f.email = strings.TrimSpace(*r.Email)
	if r.Name != nil {
		if f.name = strings.TrimSpace(*r.Name); len(f.name) > 200 {
			return f, invalidAttr("name", "invalid_name", "name is longer than 200 characters.")
		}
	}
	if f.role, err = roleAttr(r.Role, sent["role"], true); err != nil {
		return f, err
	}
	f.prefix, err = pathPrefixAttr(r.PathPrefix)
	return f, err
}

func (r membershipPatch) validate(sent map[string]bool, _ bool) (f membershipFields, err error) {
	if err = checkReadOnly(sent, "email", "name"); err != nil {
		return f, err
	}
	if f.role, err = roleAttr(r.Role, sent["role"], false); err != nil {
		return f, err
	}
	f.prefixSent = sent["path-prefix"]
	f.prefix, err = pathPrefixAttr(r.PathPrefix)
	return f, err
}

// validEmail is the users table's rule: 3 to 320 characters, with an @.
func validEmail(s string) bool {
	s = strings.TrimSpace(s)
	at := strings.Index(s, "@")
	return len(s) >= 3 && len(s) <= 320 && at > 0 && at < len(s)-1 && !strings.ContainsAny(s, " \t\r\n")
}

var membershipRels = relNames{readOnly: []string{"user", "site"}}

func membershipSpec(collection bool) QuerySpec {
	s := QuerySpec{Includes: includesOf("memberships"), Fields: fieldsOf("memberships")}
	if collection {
		s.Collection = true
		s.Sorts = map[string]string{"created-at": "m.created_at", "role": "m.role"}
		s.DefaultSort = models.OrderMembersOldest
		s.Filters = map[string]string{"role": "m.role"}
	}
	return s
}

type membershipsHandler struct {
	db    *bun.DB
	links links
	cat   *catalog
	// setupURL is the absolute URL of the password setup page.
	setupURL string
}

func (h membershipsHandler) resource(m *models.Member) *jsonapi.Resource {
	p := "/memberships/" + m.ID.String()
	user, site := m.UserID.String(), m.SiteID.String()
	return &jsonapi.Resource{Type: "memberships", ID: m.ID.String(), Links: h.links.self(p),
		Attributes: membershipAttributes{Email: m.Email, Name: m.Name, Role: string(m.Role), PathPrefix: m.PathPrefix,
			timestamps: timestampsOf(m.CreatedAt, m.UpdatedAt)},
		Relationships: map[string]*jsonapi.Relationship{
			"user": h.links.relationship(p, "user", jsonapi.ToOne("users", &user)),
			"site": h.links.relationship(p, "site", jsonapi.ToOne("sites", &site)),
		}}
}

func (h membershipsHandler) rows() rowRenderer[models.Member] {
	return rowRenderer[models.Member]{render: renderEach(h.resource), cat: h.cat}
}

func (h membershipsHandler) load(c *fiber.Ctx) (*models.Member, error) {
	return loadByID(c, h.db, "membership", models.FindMember)
}

// create serves POST /memberships: an existing user by e-mail, or a new
// one, whose 201 carries meta.password-setup-url, once.
func (h membershipsHandler) create(c *fiber.Ctx) error {
	req, err := readCreate[membershipRequest, membershipFields](c, membershipSpec(false), "memberships", membershipRels)
	if err != nil {
		return err
	}
	f, siteID := req.fields, siteOf(c)
	token, err := auth.RandomSecret(32)
	if err != nil {
		return err
	}
	var m *models.Member
	var created bool
	err = runTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
		nm := models.NewMember{Email: f.email, Name: f.name, Role: f.role, PathPrefix: f.prefix, PasswordHash: auth.UnusablePasswordHash()}
		if m, created, err = models.AddMember(ctx, tx, siteID, nm); err != nil || !created {
			return err
		}
		return models.AddPasswordSetup(ctx, tx, siteID, m.UserID, token)
	})
	if err != nil {
		return err
	}
	r := h.resource(m)
	cd := newCompound(req.q, r)
	if err := h.cat.include(c.UserContext(), siteID, req.q, cd, []*jsonapi.Resource{r}, false); err != nil {
		return err
	}
	var meta map[string]any
	if created { // the only time the link is shown: only its hash is kept
		meta = map[string]any{"password-setup-url": h.setupURL + "?token=" + token}
	}
	c.Set(fiber.HeaderLocation, r.Links.Self)
	return cd.respond(c, fiber.StatusCreated, req.q.Sparse(r), nil, meta)
}

// update serves PATCH /memberships/:id: the role and path prefix. The
// member's next request runs with them (the token check reads the
// membership).
func (h membershipsHandler) update(c *fiber.Ctx) error {
	req, err := readPatch[membershipPatch, membershipFields](c, membershipSpec(false), "membership", "memberships", membershipRels)
	if err != nil {
		return err
	}
	f, siteID := req.fields, siteOf(c)
	var m *models.Member
	err = runTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
		if m, err = models.FindMember(ctx, tx, siteID, req.id); err != nil {
			return err
		}
		role, prefix := m.Role, m.PathPrefix
		if f.role != "" {
			role = f.role
		}
		if f.prefixSent {
			prefix = f.prefix
		}
		if err := models.ChangeMember(ctx, tx, siteID, req.id, role, prefix); err != nil {
			return err
		}
		m, err = models.FindMember(ctx, tx, siteID, req.id)
		return err
	})
	if err != nil {
		return err
	}
	return h.rows().respondOne(c, req.q, fiber.StatusOK, m)
}

// registerMembershipRoutes registers /memberships and the password setup
// page of the users it creates.
func registerMembershipRoutes(r routes) {
	h := membershipsHandler{db: r.deps.DB, links: r.links, cat: r.cat, setupURL: r.links.base + passwordSetupPath}
	p := models.PermMemberships
	editable(r, "/memberships", p, p, h.rows(), membershipSpec, models.ListMembers, h.load, h.create, h.update)
	// DELETE revokes the member's tokens of the site with it.
	r.delete("/memberships/:id", p, deleteRow(h.db, "membership", models.RemoveMember))
	r.cat.add(&resourceType{typ: "memberships", what: "membership",
		fetch: fetchRows(h.db, models.MembersByIDs, renderEach(h.resource))})
	registerPasswordSetup(r)
}
