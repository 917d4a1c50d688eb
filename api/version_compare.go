package api

import (
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
)

// Comparing two points of a record's history (docs/history.md): GET
// /versions/:a/compare/:b (b a version of the same record, or "draft", its
// pending draft). The answer is a version-comparisons resource whose id,
// "a..b", reads again at GET /version-comparisons/:id.

type comparisonAttributes struct {
	From string `json:"from" oas:"uuid"` // the version compared from
	To   string `json:"to"`              // the version compared to, or "draft"
	// Changes maps each differing attribute or relationship (name-id) to
	// [value at from, value at to].
	Changes map[string]any `json:"changes"`
	// Diff holds a unified line diff of each changed long text (body...).
	Diff map[string]string `json:"diff"`
}

type comparisonsHandler struct {
	db    *bun.DB
	links links
}

// compareVersions serves GET /versions/:id/compare/:other.
func (h comparisonsHandler) compareVersions(c *fiber.Ctx) error {
	return h.answer(c, c.Params("id"), c.Params("other"))
}

// get serves GET /version-comparisons/:id (id "a..b").
func (h comparisonsHandler) get(c *fiber.Ctx) error {
	a, b, _ := strings.Cut(c.Params("id"), "..")
	return h.answer(c, a, b)
}

func (h comparisonsHandler) answer(c *fiber.Ctx, a, b string) error {
	q, err := parseQuery(c, QuerySpec{Fields: fieldsOf("version-comparisons")})
	if err != nil {
		return err
	}
	from, err := uuid.Parse(a)
	if err != nil {
		return models.NotFound("version")
	}
	var to *uuid.UUID
	if b != "draft" {
		id, err := uuid.Parse(b)
		if err != nil {
			return models.NotFound("version")
		}
		to = &id
	}
	// With locale-tag, that locale's values and the shared attributes
	// (docs/locales.md); without, every locale's.
	var only *string
	if c.Request().URI().QueryArgs().Has(localeParam) {
		l := drafts.LocaleOf(c.UserContext())
		tag := l.Tag
		if l.IsBase() {
			tag = ""
		}
		only = &tag
	}
	cmp, err := drafts.CompareVersions(c.UserContext(), h.db, siteOf(c), from, to, only)
	if err != nil {
		return err
	}
	id := from.String() + ".." + b
	changes, diffs := cmp.Changes, cmp.Diffs
	r := &jsonapi.Resource{Type: "version-comparisons", ID: id, Links: h.links.self("/version-comparisons/" + id),
		Attributes: comparisonAttributes{From: from.String(), To: b, Changes: changes, Diff: diffs}}
	return respond(c, fiber.StatusOK, jsonapi.Document{Data: q.Sparse(r)})
}

// registerComparisonRoutes registers the comparisons of versions.
func registerComparisonRoutes(r routes) {
	h := comparisonsHandler{db: r.deps.DB, links: r.links}
	r.get("/versions/:id/compare/:other", models.PermRead, h.compareVersions)
	r.get("/version-comparisons/:id", models.PermRead, h.get)
	r.cat.add(&resourceType{typ: "version-comparisons", what: "version comparison"})
}
