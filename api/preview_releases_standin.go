package api

// A stand-in for the releases resource (issue 29 §1, built on the
// releases branch) so that a preview link's relationship `release` is
// served and described before that branch is merged: the type's
// declaration, its words, its attributes and a read by id (GET /releases/:id,
// include=release, GET /preview-links/:id/release). Each part
// is added only when the releases branch has not declared it, so after
// the merge this file does nothing and should be deleted.

import (
	"context"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models"
)

type standinReleaseAttributes struct {
	Title  string `json:"title"`
	Status string `json:"status"`
}

func init() {
	if _, ok := jsonapi.Relationships["releases"]; !ok {
		jsonapi.Relationships["releases"] = map[string]jsonapi.Linkage{}
	}
	if _, ok := resourceDocs["releases"]; !ok {
		resourceDocs["releases"] = resourceDoc{"a release", "A named set of drafts staged to be previewed and published as one."}
	}
	if _, ok := attributeTypes["releases"]; !ok {
		attributeTypes["releases"] = standinReleaseAttributes{}
	}
}

// addStandinReleases adds the catalog's releases type unless the releases
// resource has.
func addStandinReleases(r routes) {
	if r.cat.types["releases"] != nil {
		return
	}
	t := &resourceType{typ: "releases", what: "release",
		fetch: func(ctx context.Context, siteID uuid.UUID, ids []uuid.UUID, _ bool) ([]*jsonapi.Resource, error) {
			rows, err := models.ReleaseTitles(ctx, r.deps.DB, siteID, ids)
			if err != nil {
				return nil, err
			}
			out := make([]*jsonapi.Resource, len(rows))
			for i, rel := range rows {
				out[i] = &jsonapi.Resource{Type: "releases", ID: rel.ID.String(), Links: r.links.self("/releases/" + rel.ID.String()),
					Attributes: standinReleaseAttributes{Title: rel.Title, Status: rel.Status}}
			}
			return out, nil
		}}
	r.cat.add(t)
	r.get("/releases/:id", models.PermRead, func(c *fiber.Ctx) error {
		q, err := parseQuery(c, t.spec(false))
		if err != nil {
			return err
		}
		rel, _, err := r.cat.one(c, t, false)
		if err != nil {
			return err
		}
		return newCompound(q, rel).respondOne(c, fiber.StatusOK, rel)
	})
}
