package api

import (
	"testing"

	"github.com/pressroom/pressroom/models"
)

// Domain errors name an attribute or relationship; the error table writes
// the JSON pointer clients have always seen for each place, and a
// relationship endpoint's answer points into its own document.
func TestDomainPlacesBecomePointers(t *testing.T) {
	for _, c := range []struct {
		at   models.Place
		want string
	}{
		{models.Place{}, ""},
		{models.Attr("slug"), "/data/attributes/slug"},
		{models.Rel("parent", models.PartData), "/data/relationships/parent/data"},
		{models.Rel("page", models.PartMember), "/data/relationships/page"},
		{models.Rel("layout", models.PartID), "/data/relationships/layout/data/id"},
		{models.RelItem("drafts", 0, models.PartData), "/data/relationships/drafts/data/0"},
		{models.RelItem("drafts", 2, models.PartID), "/data/relationships/drafts/data/2/id"},
		{models.RelItem("drafts", 1, models.PartVersion), "/data/relationships/drafts/data/1/meta/version"},
	} {
		if got := pointerOf(c.at); got != c.want {
			t.Errorf("pointerOf(%+v) = %q, want %q", c.at, got, c.want)
		}
	}
	e := toAPIError(models.RefNotFound("theme", "theme"))
	if e.StatusCode() != 404 || *e.Source.Pointer != "/data/relationships/theme/data/id" {
		t.Errorf("RefNotFound = %d at %s", e.StatusCode(), *e.Source.Pointer)
	}
	e = toAPIError(inRelationshipDocument(models.RefNotFound("theme", "theme")))
	if e.StatusCode() != 404 || *e.Source.Pointer != "/data/id" {
		t.Errorf("RefNotFound in a relationship document = %d at %s, want 404 at /data/id", e.StatusCode(), *e.Source.Pointer)
	}
}
