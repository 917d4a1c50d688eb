package api

import (
	"encoding/base64"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models"
)

// A /search cursor carries the hit's rank exactly (the float32 ts_rank
// computed, so the keyset's rank = ?::real matches the same hit), its
// type and id; anything else, a list's record cursor included, is 400
// invalid_page at the parameter.
func TestSearchCursor(t *testing.T) {
	id := uuid.New()
	for _, rank := range []float64{float64(float32(0.0607927)), float64(float32(1e-20)), 0, float64(float32(0.1))} {
		c := searchCursorOf(models.SearchHit{Rank: rank, Type: "content-blocks", ID: id})
		got, err := parseSearchCursor("page[after]", c)
		if err != nil || got == nil || got.Rank != float32(rank) || got.Type != "content-blocks" || got.ID != id {
			t.Errorf("rank %v: %q read back as %+v, %v", rank, c, got, err)
		}
	}
	if got, err := parseSearchCursor("page[before]", ""); got != nil || err != nil {
		t.Errorf("the empty cursor = %+v, %v, want nil (the end)", got, err)
	}
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, bad := range []string{"x", cursorOf(id.String()), enc("s:0.5:users:" + id.String()), enc("s:NaN:pages:" + id.String()),
		enc("s:1e99:pages:" + id.String()), enc("s:0.5:pages:nope"), enc("s:0.5:pages")} {
		_, err := parseSearchCursor("page[after]", bad)
		var je *jsonapi.Error
		if !errors.As(err, &je) || je.Code != "invalid_page" || je.Source == nil || je.Source.Parameter != "page[after]" {
			t.Errorf("cursor %q: %v, want 400 invalid_page at page[after]", bad, err)
		}
	}
}
