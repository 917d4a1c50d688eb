package api

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/models"
)

// Themes, layouts and theme assets (docs/themes.md). The three handlers
// share themeResources: loading, rendering and the include machinery, so a
// theme looks the same whether it is primary data, included, or related.

// Limits of theme and layout text.
const (
	maxTitle       = 200
	maxDescription = 2000
	// maxLayoutContent bounds a layout's content in bytes (1 MiB). The body
	// limit (PRESSROOM_BODY_LIMIT, 1 MiB by default) may refuse a body
	// before this does (413).
	maxLayoutContent = 1 << 20
	// patchAttempts bounds how often a PATCH without a precondition is
	// retried when another write lands between its read and its write.
	patchAttempts = 3
)

// PageCounter counts, per layout, the live pages that use it. ids absent
// from the result count as zero.
type PageCounter func(ctx context.Context, siteID uuid.UUID, layoutIDs []uuid.UUID) (map[uuid.UUID]int, error)

// livePagesPerLayout counts the live pages of a site using each layout,
// in one query for all the layouts of a response.
func livePagesPerLayout(db *bun.DB) PageCounter {
	return func(ctx context.Context, siteID uuid.UUID, layoutIDs []uuid.UUID) (map[uuid.UUID]int, error) {
		out := map[uuid.UUID]int{}
		if len(layoutIDs) == 0 {
			return out, nil
		}
		var rows []struct {
			LayoutID uuid.UUID `bun:"layout_id"`
			N        int       `bun:"n"`
		}
		err := db.NewSelect().Table("pages").Column("layout_id").ColumnExpr("count(*) AS n").
			Where("site_id = ? AND published_at IS NOT NULL AND layout_id IN (?)", siteID, bun.In(layoutIDs)).
			Group("layout_id").Scan(ctx, &rows)
		for _, r := range rows {
			out[r.LayoutID] = r.N
		}
		return out, err
	}
}

// themeResources is what the themes, layouts and theme-assets handlers share.
type themeResources struct {
	db     *bun.DB
	links  links
	assets assetsHandler
	users  usersHandler
	// pageCounts fills the layouts' pages-count attribute. It defaults to
	// noPages (every count 0); the pages feature plugs in by setting it in
	// routes.themes() (api/themes_routes.go) to a function that counts the
	// site's live pages per layout_id, in one query for all ids.
	pageCounts PageCounter
}

type themeAttributes struct {
	Title       string  `json:"title"`
	Description *string `json:"description"`
	PublishedAt *string `json:"published-at"`
	CreatedAt   string  `json:"created-at"`
	UpdatedAt   string  `json:"updated-at"`
}

// themeRequest is what POST and PATCH /themes accept. Pointers and Sent
// tell omitted from sent (and sent null); read-only members are accepted
// by the decoder only to be refused with a 422 that points at them.
type themeRequest struct {
	Title       *string `json:"title"`
	Description *string `json:"description"`
	PublishedAt any     `json:"published-at"`
	CreatedAt   any     `json:"created-at"`
	UpdatedAt   any     `json:"updated-at"`
}

var themeReadOnly = []string{"published-at", "created-at", "updated-at"}

// themeColumns are the columns of the attributes a PATCH /themes may change.
var themeColumns = []attrColumn{{"title", "title"}, {"description", "description"}}

// themeFields are the validated attributes of a theme request.
type themeFields struct {
	title       string
	description *string
}

// validate checks the attributes sent; on create the title must be there.
func (r themeRequest) validate(sent map[string]bool, create bool) (f themeFields, err error) {
	if err = checkReadOnly(sent, themeReadOnly); err != nil {
		return f, err
	}
	if f.title, err = titleAttr(r.Title, sent["title"], create); err != nil {
		return f, err
	}
	f.description, err = descriptionAttr(r.Description)
	return f, err
}

// Query specs of the themes endpoints.
func themeSpec(collection bool) QuerySpec {
	s := QuerySpec{
		Includes: []string{"user", "layouts", "theme-assets", "theme-assets.asset"},
		Fields:   []string{"themes", "users", "layouts", "theme-assets", "assets"},
	}
	if collection {
		s.Collection = true
		s.Sorts = map[string]string{"title": "title", "created-at": "created_at", "updated-at": "updated_at", "published-at": "published_at"}
		s.DefaultSort = "created_at DESC, id"
		s.Filters = map[string]string{"title": "title"}
	}
	return s
}

func siteOf(c *fiber.Ctx) uuid.UUID { return oauth.PrincipalOf(c).SiteID }

func themePath(id uuid.UUID) string { return "/themes/" + id.String() }

func ids[T any](rows []T, id func(*T) uuid.UUID) []uuid.UUID {
	out := make([]uuid.UUID, len(rows))
	for i := range rows {
		out[i] = id(&rows[i])
	}
	return out
}

// themeResource renders a theme with the linkage of its layouts and theme assets.
func (k *themeResources) themeResource(t *models.Theme, layoutIDs, assetIDs []string) *jsonapi.Resource {
	p := themePath(t.ID)
	var published, user *string
	if t.PublishedAt != nil {
		s := timestamp(*t.PublishedAt)
		published = &s
	}
	if t.UserID != nil {
		s := t.UserID.String()
		user = &s
	}
	r := &jsonapi.Resource{Type: "themes", ID: t.ID.String(), Links: k.links.self(p),
		Attributes: themeAttributes{Title: t.Title, Description: t.Description, PublishedAt: published,
			CreatedAt: timestamp(t.CreatedAt), UpdatedAt: timestamp(t.UpdatedAt)},
		Relationships: map[string]*jsonapi.Relationship{
			"user":         k.links.relationship(p, "user", jsonapi.ToOne("users", user)),
			"layouts":      k.links.relationship(p, "layouts", jsonapi.ToMany("layouts", layoutIDs)),
			"theme-assets": k.links.relationship(p, "theme-assets", jsonapi.ToMany("theme-assets", assetIDs)),
		}}
	return versioned(r, t.Version)
}

// childIDs returns, per theme, the ids of its layouts (by file name) and
// theme assets (by path): the linkage of its to-many relationships.
func (k *themeResources) childIDs(ctx context.Context, db bun.IDB, siteID uuid.UUID, themeIDs []uuid.UUID) (layouts, assets map[uuid.UUID][]string, err error) {
	layouts, assets = map[uuid.UUID][]string{}, map[uuid.UUID][]string{}
	if len(themeIDs) == 0 {
		return layouts, assets, nil
	}
	var ls []models.Layout
	if err := db.NewSelect().Model(&ls).Column("id", "theme_id").
		Where("site_id = ? AND theme_id IN (?)", siteID, bun.In(themeIDs)).OrderExpr("lower(file_name), id").Scan(ctx); err != nil {
		return nil, nil, err
	}
	for _, l := range ls {
		layouts[l.ThemeID] = append(layouts[l.ThemeID], l.ID.String())
	}
	var tas []models.ThemeAsset
	if err := db.NewSelect().Model(&tas).Column("id", "theme_id").
		Where("site_id = ? AND theme_id IN (?)", siteID, bun.In(themeIDs)).OrderExpr("lower(path), id").Scan(ctx); err != nil {
		return nil, nil, err
	}
	for _, ta := range tas {
		assets[ta.ThemeID] = append(assets[ta.ThemeID], ta.ID.String())
	}
	return layouts, assets, nil
}

// renderThemes renders themes, loading their linkage in two queries.
func (k *themeResources) renderThemes(ctx context.Context, db bun.IDB, siteID uuid.UUID, ts []models.Theme) ([]*jsonapi.Resource, error) {
	layouts, assets, err := k.childIDs(ctx, db, siteID, ids(ts, func(t *models.Theme) uuid.UUID { return t.ID }))
	if err != nil {
		return nil, err
	}
	out := make([]*jsonapi.Resource, len(ts))
	for i := range ts {
		out[i] = k.themeResource(&ts[i], layouts[ts[i].ID], assets[ts[i].ID])
	}
	return out, nil
}

// findTheme finds a theme of the site; another site's theme is not found.
func findTheme(ctx context.Context, db bun.IDB, siteID, id uuid.UUID) (*models.Theme, error) {
	t := new(models.Theme)
	err := db.NewSelect().Model(t).Where("id = ? AND site_id = ?", id, siteID).Scan(ctx)
	if models.IsNoRows(err) {
		return nil, jsonapi.NotFound("No theme with that id.")
	}
	return t, err
}

// themesByID loads the site's themes with the given ids.
func themesByID(ctx context.Context, db bun.IDB, siteID uuid.UUID, themeIDs []uuid.UUID) ([]models.Theme, error) {
	var ts []models.Theme
	if len(themeIDs) == 0 {
		return ts, nil
	}
	err := db.NewSelect().Model(&ts).Where("site_id = ? AND id IN (?)", siteID, bun.In(unique(themeIDs))).OrderExpr("created_at, id").Scan(ctx)
	return ts, err
}

func unique(in []uuid.UUID) []uuid.UUID {
	seen := map[uuid.UUID]bool{}
	out := make([]uuid.UUID, 0, len(in))
	for _, id := range in {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// includeForThemes adds what include asks for to the themes' compound document.
func (k *themeResources) includeForThemes(ctx context.Context, siteID uuid.UUID, q *Query, ts []models.Theme, cd *compound) error {
	if len(ts) == 0 || len(q.Include) == 0 {
		return nil
	}
	themeIDs := ids(ts, func(t *models.Theme) uuid.UUID { return t.ID })
	if q.Include["user"] {
		var userIDs []uuid.UUID
		for _, t := range ts {
			if t.UserID != nil {
				userIDs = append(userIDs, *t.UserID)
			}
		}
		if len(userIDs) > 0 {
			var us []models.User
			if err := k.db.NewSelect().Model(&us).Where("site_id = ? AND id IN (?)", siteID, bun.In(unique(userIDs))).OrderExpr("created_at, id").Scan(ctx); err != nil {
				return err
			}
			for i := range us {
				cd.add(k.users.resource(&us[i]))
			}
		}
	}
	if q.Include["layouts"] {
		var ls []models.Layout
		if err := k.db.NewSelect().Model(&ls).Where("site_id = ? AND theme_id IN (?)", siteID, bun.In(themeIDs)).OrderExpr("lower(file_name), id").Scan(ctx); err != nil {
			return err
		}
		rs, err := k.renderLayouts(ctx, siteID, ls)
		if err != nil {
			return err
		}
		cd.add(rs...)
	}
	if q.Include["theme-assets"] {
		var tas []models.ThemeAsset
		if err := k.db.NewSelect().Model(&tas).Where("site_id = ? AND theme_id IN (?)", siteID, bun.In(themeIDs)).OrderExpr("lower(path), id").Scan(ctx); err != nil {
			return err
		}
		for i := range tas {
			cd.add(k.themeAssetResource(&tas[i]))
		}
		if q.Include["theme-assets.asset"] {
			if err := k.includeAssets(ctx, siteID, ids(tas, func(ta *models.ThemeAsset) uuid.UUID { return ta.AssetID }), cd); err != nil {
				return err
			}
		}
	}
	return nil
}

// includeThemes adds the site's themes with the given ids.
func (k *themeResources) includeThemes(ctx context.Context, siteID uuid.UUID, themeIDs []uuid.UUID, cd *compound) error {
	ts, err := themesByID(ctx, k.db, siteID, themeIDs)
	if err != nil {
		return err
	}
	rs, err := k.renderThemes(ctx, k.db, siteID, ts)
	if err != nil {
		return err
	}
	cd.add(rs...)
	return nil
}

// includeAssets adds the site's assets with the given ids.
func (k *themeResources) includeAssets(ctx context.Context, siteID uuid.UUID, assetIDs []uuid.UUID, cd *compound) error {
	if len(assetIDs) == 0 {
		return nil
	}
	var as []models.Asset
	if err := k.db.NewSelect().Model(&as).Where("site_id = ? AND id IN (?)", siteID, bun.In(unique(assetIDs))).OrderExpr("created_at, id").Scan(ctx); err != nil {
		return err
	}
	for i := range as {
		cd.add(k.assets.assetResource(&as[i]))
	}
	return nil
}

// compound collects the included resources of a response: each resource
// once (and never one that is primary data), with the sparse fieldsets
// applied, and nothing that include did not ask for.
type compound struct {
	q    *Query
	seen map[string]bool
	list []*jsonapi.Resource
}

func newCompound(q *Query, primary ...*jsonapi.Resource) *compound {
	cd := &compound{q: q, seen: map[string]bool{}, list: []*jsonapi.Resource{}}
	for _, r := range primary {
		cd.seen[r.Type+"/"+r.ID] = true
	}
	return cd
}

func (cd *compound) add(rs ...*jsonapi.Resource) {
	for _, r := range rs {
		if key := r.Type + "/" + r.ID; !cd.seen[key] {
			cd.seen[key] = true
			cd.list = append(cd.list, cd.q.Sparse(r))
		}
	}
}

// compoundDocument is a top-level document whose included member is
// always present, even when empty, as JSON:API asks when include is given.
type compoundDocument struct {
	Data     any                 `json:"data"`
	Included []*jsonapi.Resource `json:"included"`
	Links    *jsonapi.Links      `json:"links,omitempty"`
	Meta     map[string]any      `json:"meta,omitempty"`
	JSONAPI  *jsonapi.Version    `json:"jsonapi"`
}

// send writes the response: a compound document when include was given.
func (cd *compound) send(c *fiber.Ctx, status int, data any, l *jsonapi.Links, meta map[string]any) error {
	if len(cd.q.Include) == 0 {
		return respond(c, status, jsonapi.Document{Data: data, Links: l, Meta: meta})
	}
	return respondRaw(c, status, compoundDocument{Data: data, Included: cd.list, Links: l, Meta: meta, JSONAPI: jsonapi.V11})
}

// sendOne writes one resource as primary data, with its ETag, and with its
// Location when it was just created.
func (cd *compound) sendOne(c *fiber.Ctx, status int, r *jsonapi.Resource, version int) error {
	setETag(c, r.ID, version)
	if status == fiber.StatusCreated {
		c.Set(fiber.HeaderLocation, r.Links.Self)
	}
	return cd.send(c, status, cd.q.Sparse(r), nil, nil)
}

// sendPage writes a page of the collection at path as primary data, with
// its pagination links and meta.total.
func (cd *compound) sendPage(c *fiber.Ctx, l links, path string, rs []*jsonapi.Resource, total int64) error {
	return cd.send(c, fiber.StatusOK, sparseAll(cd.q, rs), l.collection(path, cd.q, total), map[string]any{"total": total})
}

// sparseAll applies the sparse fieldsets to primary data.
func sparseAll(q *Query, rs []*jsonapi.Resource) []*jsonapi.Resource {
	out := make([]*jsonapi.Resource, len(rs))
	for i, r := range rs {
		out[i] = q.Sparse(r)
	}
	return out
}

// linkageDocument answers GET .../relationships/<name>.
func linkageDocument(c *fiber.Ctx, rel *jsonapi.Relationship) error {
	return respondRaw(c, fiber.StatusOK, map[string]any{"links": rel.Links, "data": rel.Data, "jsonapi": jsonapi.V11})
}

// nullDocument answers a related-resource link whose relationship is empty.
func nullDocument(c *fiber.Ctx, self string) error {
	return respondRaw(c, fiber.StatusOK, map[string]any{"data": nil, "links": &jsonapi.Links{Self: self}, "jsonapi": jsonapi.V11})
}

// ---- request checks shared by the three resources ----

// decodeResource reads a request body: one resource of type typ.
func decodeResource[A any](c *fiber.Ctx, typ string) (*jsonapi.RequestResource[A], error) {
	var doc jsonapi.RequestDocument[A]
	if err := jsonapi.Decode(c.Body(), &doc); err != nil {
		return nil, err
	}
	if err := checkType(doc.Data.Type, typ); err != nil {
		return nil, err
	}
	return doc.Data, nil
}

// decodeCreate reads the body of a POST: one resource of type typ, without
// an id (ids are made by the server).
func decodeCreate[A any](c *fiber.Ctx, typ string) (*jsonapi.RequestResource[A], error) {
	data, err := decodeResource[A](c, typ)
	if err != nil {
		return nil, err
	}
	if err := checkNoClientID(data.ID); err != nil {
		return nil, err
	}
	return data, nil
}

// patchRequest is the request of a PATCH of the resource the URL names.
type patchRequest[A any] struct {
	id          uuid.UUID // the id in the URL
	bodyVersion *int      // meta.version from the body, nil when absent
	data        *jsonapi.RequestResource[A]
}

// decodePatch reads a PATCH: the id in the URL (what names the resource in
// its 404), then the body: one resource of type typ with that id, and its
// meta.version.
func decodePatch[A any](c *fiber.Ctx, what, typ string) (patchRequest[A], error) {
	var req patchRequest[A]
	var err error
	if req.id, err = idParam(c, what); err != nil {
		return req, err
	}
	if req.data, err = decodeResource[A](c, typ); err != nil {
		return req, err
	}
	if err := checkID(req.data.ID, req.id); err != nil {
		return req, err
	}
	req.bodyVersion, err = metaVersion(req.data.Meta)
	return req, err
}

// checkType answers 409 when the body's type is not the endpoint's.
func checkType(got, want string) error {
	if got != want {
		return jsonapi.Conflict("type_mismatch", fmt.Sprintf("data.type must be %q.", want)).AtPointer("/data/type")
	}
	return nil
}

// checkNoClientID refuses a client-generated id on a create (ids are made by the server).
func checkNoClientID(id string) error {
	if id != "" {
		return jsonapi.NewError(fiber.StatusForbidden, "client_id_unsupported", "Ids are made by the server.").AtPointer("/data/id")
	}
	return nil
}

// checkID answers 400 when a PATCH body has no id and 409 when it is not the URL's.
func checkID(got string, want uuid.UUID) error {
	if got == "" {
		return jsonapi.BadRequest("malformed_document", "data.id is required in an update.").AtPointer("/data/id")
	}
	if got != want.String() {
		return jsonapi.Conflict("id_mismatch", "data.id does not match the id in the URL.").AtPointer("/data/id")
	}
	return nil
}

// checkReadOnly answers 422 for the first read-only attribute that was sent.
func checkReadOnly(sent map[string]bool, names []string) error {
	for _, name := range names {
		if sent[name] {
			return jsonapi.Unprocessable("read_only", name+" is set by the server.").AtPointer("/data/attributes/" + name)
		}
	}
	return nil
}

// checkRelationshipNames answers 422 for a read-only relationship and 400
// for one the resource does not have.
func checkRelationshipNames(rels map[string]jsonapi.RequestRelationship, writable, readOnly []string) error {
	names := make([]string, 0, len(rels))
	for name := range rels {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		switch {
		case contains(writable, name):
		case contains(readOnly, name):
			return jsonapi.Unprocessable("read_only", "The "+name+" relationship is set by the server.").AtPointer("/data/relationships/" + name)
		default:
			return jsonapi.BadRequest("unknown_member", fmt.Sprintf("The relationship %q is not recognised here.", name)).AtPointer("/data/relationships/" + name)
		}
	}
	return nil
}

// toOne is a to-one relationship as a request sent it.
type toOne struct {
	sent, null bool
	id         uuid.UUID
}

// readToOne reads the to-one relationship name, whose members must be of
// type typ. An id that is not a UUID cannot name a record: it is answered
// like any unknown id, with a 404 at the identifier's id.
func readToOne(rels map[string]jsonapi.RequestRelationship, name, typ, what string) (toOne, error) {
	r, ok := rels[name]
	if !ok {
		return toOne{}, nil
	}
	ptr := "/data/relationships/" + name + "/data"
	ident, err := r.ToOne()
	if err != nil {
		return toOne{}, jsonapi.BadRequest("invalid_member", fmt.Sprintf(`relationships.%s.data must be null or {"type":%q,"id":"..."}.`, name, typ)).AtPointer(ptr)
	}
	if ident == nil {
		return toOne{sent: true, null: true}, nil
	}
	if ident.Type != typ {
		return toOne{}, jsonapi.Unprocessable("invalid_relationship_type", fmt.Sprintf("relationships.%s.data.type must be %q.", name, typ)).AtPointer(ptr + "/type")
	}
	id, err := uuid.Parse(ident.ID)
	if err != nil {
		return toOne{}, unknownRelated(name, what)
	}
	return toOne{sent: true, id: id}, nil
}

// unknownRelated is the answer for a relationship naming a record that is
// not the caller's site's (missing, not a UUID, or another site's: they
// look alike): 404, as JSON:API 1.1 asks, pointing at the identifier's id
// (/data/relationships/<name>/data/id; callers naming a member of a to-many
// linkage or a relationship endpoint's body re-point it). A record that
// exists but may not be referenced is a 422 instead.
func unknownRelated(name, what string) *jsonapi.Error {
	return jsonapi.NotFound("No " + what + " with that id.").AtPointer("/data/relationships/" + name + "/data/id")
}

// requiredToOne answers 422 when a required relationship is missing or null.
func requiredToOne(rel toOne, name, what string) error {
	if !rel.sent {
		return jsonapi.Unprocessable("missing_relationship", "The "+name+" relationship is required: the "+what+".").AtPointer("/data/relationships/" + name)
	}
	if rel.null {
		return jsonapi.Unprocessable("missing_relationship", "The "+name+" relationship cannot be null.").AtPointer("/data/relationships/" + name + "/data")
	}
	return nil
}

// readRequiredToOne reads a required to-one relationship (readToOne, then
// requiredToOne with role, what the record is to the resource) and answers
// the id it names.
func readRequiredToOne(rels map[string]jsonapi.RequestRelationship, name, typ, what, role string) (uuid.UUID, error) {
	rel, err := readToOne(rels, name, typ, what)
	if err != nil {
		return uuid.Nil, err
	}
	if err := requiredToOne(rel, name, role); err != nil {
		return uuid.Nil, err
	}
	return rel.id, nil
}

func invalidAttr(name, code, detail string) *jsonapi.Error {
	return jsonapi.Unprocessable(code, detail).AtPointer("/data/attributes/" + name)
}

// titleAttr validates a required title: 1 to 200 characters once control
// characters and surrounding space are removed.
func titleAttr(v *string, sent bool, required bool) (string, error) {
	if !sent && !required {
		return "", nil
	}
	if v == nil {
		return "", invalidAttr("title", "invalid_title", "title is required: 1 to 200 characters.")
	}
	t := strings.TrimSpace(cleanText(*v))
	if t == "" || utf8.RuneCountInString(t) > maxTitle {
		return "", invalidAttr("title", "invalid_title", "title must be 1 to 200 characters.")
	}
	return t, nil
}

// descriptionAttr validates a description: null, or up to 2000 characters.
// Line breaks and tabs are kept; other control characters are dropped.
func descriptionAttr(v *string) (*string, error) {
	if v == nil {
		return nil, nil
	}
	d := strings.TrimSpace(cleanProse(*v))
	if utf8.RuneCountInString(d) > maxDescription {
		return nil, invalidAttr("description", "invalid_description", "description must be at most 2000 characters, or null.")
	}
	return &d, nil
}

// cleanProse is cleanText for multi-line text: it keeps \n and \t.
func cleanProse(s string) string {
	s = strings.ToValidUTF8(strings.ReplaceAll(s, "\r\n", "\n"), "")
	return strings.Map(func(r rune) rune {
		if r != '\n' && r != '\t' && unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
}

// serveOne answers a GET of one row: it reads the query against spec, then
// the row the URL names (load), and answers with show.
func serveOne[M any](c *fiber.Ctx, spec QuerySpec, load func(*fiber.Ctx) (*M, error), show func(*Query, *M) error) error {
	q, err := parseQuery(c, spec)
	if err != nil {
		return err
	}
	m, err := load(c)
	if err != nil {
		return err
	}
	return show(q, m)
}

// ---- writes shared by themes and layouts ----

// attrColumn maps an attribute a PATCH may change to its column.
type attrColumn struct{ attr, col string }

// sentColumns lists the columns of the attributes sent, in the order of cols.
func sentColumns(sent map[string]bool, cols []attrColumn) []string {
	var out []string
	for _, a := range cols {
		if sent[a.attr] {
			out = append(out, a.col)
		}
	}
	return out
}

// rowPatch is a PATCH of one versioned row (of type M) of the caller's site.
type rowPatch[M any] struct {
	id          uuid.UUID
	bodyVersion *int
	// cols are the columns the request changes; with none, nothing is written.
	cols    []string
	find    func(ctx context.Context, db bun.IDB, siteID, id uuid.UUID) (*M, error)
	version func(*M) int
	// check judges the preconditions other than the version (nil: none).
	check func(*M) error
	// apply sets the attributes sent, and updated_at, on the row read.
	apply func(*M)
	// show answers with the row.
	show func(*M) error
	// conflict answers a write that breaks a unique constraint (nil: the
	// error is passed on).
	conflict func() *jsonapi.Error
}

// patchRow runs a PATCH under optimistic concurrency (DESIGN.md §2): it
// reads the row and judges the preconditions against it (If-Match and
// meta.version, then check). With no columns to change, it answers with the
// row as read. Otherwise it writes the row read, changed by apply (its cols
// and updated_at, version + 1), only while the stored row is still at the
// version read; when another write lands in between it reads and tries
// again, up to patchAttempts times.
func patchRow[M any](c *fiber.Ctx, db bun.IDB, p rowPatch[M]) error {
	ctx, siteID := c.UserContext(), siteOf(c)
	for attempt := 1; ; attempt++ {
		m, err := p.find(ctx, db, siteID, p.id)
		if err != nil {
			return err
		}
		read := p.version(m)
		if err := checkVersion(c, p.id.String(), read, p.bodyVersion); err != nil {
			return err
		}
		if p.check != nil {
			if err := p.check(m); err != nil {
				return err
			}
		}
		if len(p.cols) == 0 {
			return p.show(m)
		}
		p.apply(m)
		err = db.NewUpdate().Model(m).Column(append(p.cols, "updated_at")...).Set("version = version + 1").
			Where("id = ? AND site_id = ? AND version = ?", p.id, siteID, read).Returning("*").Scan(ctx)
		switch {
		case err == nil:
			return p.show(m)
		case p.conflict != nil && models.IsConflict(err):
			return p.conflict()
		case !models.IsNoRows(err):
			return err
		case attempt == patchAttempts:
			return stale(read)
		}
		// Another write landed between the read and this one: read again,
		// so a precondition is judged against the newest version.
	}
}

// ---- themes ----

type themesHandler struct{ *themeResources }

// list serves GET /themes: the site's themes, newest first, paginated.
func (h themesHandler) list(c *fiber.Ctx) error {
	q, err := parseQuery(c, themeSpec(true))
	if err != nil {
		return err
	}
	ctx, siteID := c.UserContext(), siteOf(c)
	var ts []models.Theme
	total, err := q.Apply(h.db.NewSelect().Model(&ts).Where("site_id = ?", siteID)).ScanAndCount(ctx)
	if err != nil {
		return err
	}
	rs, err := h.renderThemes(ctx, h.db, siteID, ts)
	if err != nil {
		return err
	}
	cd := newCompound(q, rs...)
	if err := h.includeForThemes(ctx, siteID, q, ts, cd); err != nil {
		return err
	}
	return cd.sendPage(c, h.links, "/themes", rs, total)
}

// showTheme answers with one theme as primary data.
func (h themesHandler) showTheme(c *fiber.Ctx, q *Query, status int, t *models.Theme) error {
	ctx, siteID := c.UserContext(), siteOf(c)
	rs, err := h.renderThemes(ctx, h.db, siteID, []models.Theme{*t})
	if err != nil {
		return err
	}
	cd := newCompound(q, rs[0])
	if err := h.includeForThemes(ctx, siteID, q, []models.Theme{*t}, cd); err != nil {
		return err
	}
	return cd.sendOne(c, status, rs[0], t.Version)
}

// load finds the theme named by the URL.
func (h themesHandler) load(c *fiber.Ctx) (*models.Theme, error) {
	id, err := idParam(c, "theme")
	if err != nil {
		return nil, err
	}
	return findTheme(c.UserContext(), h.db, siteOf(c), id)
}

// get serves GET /themes/:id.
func (h themesHandler) get(c *fiber.Ctx) error {
	return serveOne(c, themeSpec(false), h.load, func(q *Query, t *models.Theme) error {
		return h.showTheme(c, q, fiber.StatusOK, t)
	})
}

// create serves POST /themes: a new working-copy theme of the caller's
// site, with copies of the layouts and theme assets of a source theme
// when the source relationship names one.
func (h themesHandler) create(c *fiber.Ctx) error {
	q, err := parseQuery(c, themeSpec(false))
	if err != nil {
		return err
	}
	data, err := decodeCreate[themeRequest](c, "themes")
	if err != nil {
		return err
	}
	f, err := data.Attributes.validate(data.Sent, true)
	if err != nil {
		return err
	}
	if err := checkRelationshipNames(data.Relationships, []string{"source"}, []string{"user", "layouts", "theme-assets"}); err != nil {
		return err
	}
	source, err := readToOne(data.Relationships, "source", "themes", "theme")
	if err != nil {
		return err
	}
	pr := oauth.PrincipalOf(c)
	now := time.Now().UTC()
	t := &models.Theme{ID: uuid.New(), SiteID: pr.SiteID, UserID: &pr.UserID, Title: f.title, Description: f.description,
		Version: 1, CreatedAt: now, UpdatedAt: now}
	err = h.db.RunInTx(c.UserContext(), nil, func(ctx context.Context, tx bun.Tx) error {
		if source.sent && !source.null {
			// The source must be a theme of the caller's site; themes are
			// never deleted, so it stays one until the copy is made. Each
			// copy statement reads one consistent snapshot of the source.
			if _, err := findTheme(ctx, tx, pr.SiteID, source.id); isNotFound(err) {
				return unknownRelated("source", "theme")
			} else if err != nil {
				return err
			}
		}
		if _, err := tx.NewInsert().Model(t).Exec(ctx); err != nil {
			return err
		}
		if source.sent && !source.null {
			return copyTheme(ctx, tx, pr.SiteID, source.id, t.ID)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return h.showTheme(c, q, fiber.StatusCreated, t)
}

// copyTheme copies the layouts and theme assets of theme from into theme
// to, with new ids, in the caller's transaction.
func copyTheme(ctx context.Context, tx bun.Tx, siteID, from, to uuid.UUID) error {
	if _, err := tx.NewRaw(`INSERT INTO layouts (id, site_id, theme_id, title, file_name, description, is_unique, content, version, created_at, updated_at)
		SELECT gen_random_uuid(), site_id, ?, title, file_name, description, is_unique, content, 1, now(), now()
		FROM layouts WHERE site_id = ? AND theme_id = ?`, to, siteID, from).Exec(ctx); err != nil {
		return err
	}
	var assetIDs []uuid.UUID
	if err := tx.NewRaw(`SELECT DISTINCT asset_id FROM theme_assets WHERE site_id = ? AND theme_id = ?`, siteID, from).Scan(ctx, &assetIDs); err != nil {
		return err
	}
	if len(assetIDs) == 0 {
		return nil
	}
	if err := lockAssets(ctx, tx, siteID, assetIDs); err != nil {
		return err
	}
	if _, err := tx.NewRaw(`INSERT INTO theme_assets (id, site_id, theme_id, asset_id, path, version, created_at, updated_at)
		SELECT gen_random_uuid(), site_id, ?, asset_id, path, 1, now(), now()
		FROM theme_assets WHERE site_id = ? AND theme_id = ?`, to, siteID, from).Exec(ctx); err != nil {
		return err
	}
	return syncThemePaths(ctx, tx, siteID, assetIDs)
}

// patch serves PATCH /themes/:id: changes the attributes sent, and only
// those; description is nulled only when sent as null.
func (h themesHandler) patch(c *fiber.Ctx) error {
	q, err := parseQuery(c, themeSpec(false))
	if err != nil {
		return err
	}
	req, err := decodePatch[themeRequest](c, "theme", "themes")
	if err != nil {
		return err
	}
	sent := req.data.Sent
	f, err := req.data.Attributes.validate(sent, false)
	if err != nil {
		return err
	}
	if err := checkRelationshipNames(req.data.Relationships, nil, []string{"user", "layouts", "theme-assets"}); err != nil {
		return err
	}
	return patchRow(c, h.db, rowPatch[models.Theme]{
		id: req.id, bodyVersion: req.bodyVersion, cols: sentColumns(sent, themeColumns),
		find:    findTheme,
		version: func(t *models.Theme) int { return t.Version },
		apply: func(t *models.Theme) {
			if sent["title"] {
				t.Title = f.title
			}
			if sent["description"] {
				t.Description = f.description
			}
			t.UpdatedAt = time.Now().UTC()
		},
		show: func(t *models.Theme) error { return h.showTheme(c, q, fiber.StatusOK, t) },
	})
}

// related serves GET /themes/:id/{user,layouts,theme-assets}: the related
// user, or the theme's layouts or theme assets as a paginated collection.
func (h themesHandler) related(name string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		t, err := h.load(c)
		if err != nil {
			return err
		}
		switch name {
		case "user":
			if _, err := queryParams(c); err != nil {
				return err
			}
			if t.UserID == nil {
				return nullDocument(c, h.links.base+c.Path())
			}
			u := new(models.User)
			err := h.db.NewSelect().Model(u).Where("id = ? AND site_id = ?", *t.UserID, t.SiteID).Scan(c.UserContext())
			if models.IsNoRows(err) {
				return nullDocument(c, h.links.base+c.Path())
			} else if err != nil {
				return err
			}
			return respond(c, fiber.StatusOK, jsonapi.Document{Data: h.users.resource(u)})
		case "layouts":
			return layoutsHandler{h.themeResources}.listOf(c, t)
		default: // theme-assets
			return themeAssetsHandler{h.themeResources}.listOf(c, t)
		}
	}
}

// relationship serves GET /themes/:id/relationships/{user,layouts,theme-assets}.
func (h themesHandler) relationship(name string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if _, err := queryParams(c); err != nil {
			return err
		}
		t, err := h.load(c)
		if err != nil {
			return err
		}
		rs, err := h.renderThemes(c.UserContext(), h.db, t.SiteID, []models.Theme{*t})
		if err != nil {
			return err
		}
		return linkageDocument(c, rs[0].Relationships[name])
	}
}

// showRelatedTheme answers a related-resource link that names one theme
// (or none): /layouts/:id/theme, /theme-assets/:id/theme, /site/theme.
func (k *themeResources) showRelatedTheme(c *fiber.Ctx, q *Query, themeID *uuid.UUID) error {
	if themeID == nil {
		return nullDocument(c, k.links.base+c.Path())
	}
	t, err := findTheme(c.UserContext(), k.db, siteOf(c), *themeID)
	if err != nil {
		return err
	}
	return themesHandler{k}.showTheme(c, q, fiber.StatusOK, t)
}

// live serves GET /site/theme: the site's live theme, or data null before
// any theme is published.
func (h themesHandler) live(c *fiber.Ctx) error {
	q, err := parseQuery(c, themeSpec(false))
	if err != nil {
		return err
	}
	s := new(models.ThemedSite)
	if err := h.db.NewSelect().Model(s).Where("id = ?", siteOf(c)).Scan(c.UserContext()); err != nil {
		return err
	}
	return h.showRelatedTheme(c, q, s.ThemeID)
}

// isNotFound tells whether err is a 404 error object.
func isNotFound(err error) bool {
	var e *jsonapi.Error
	return errors.As(err, &e) && e.StatusCode() == fiber.StatusNotFound
}
