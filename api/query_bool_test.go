package api

import (
	"errors"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/api/oauth"
)

// filter[resolved] of GET /comments is a boolean filter: true and false
// are read, anything else is 400 invalid_filter at the parameter (it was
// compared as text and answered an empty 200).
func TestQueryBoolFilter(t *testing.T) {
	app := fiber.New()
	for raw, ok := range map[string]bool{"filter[resolved]=true": true, "filter[resolved]=false": true,
		"filter[resolved]=yes": false, "filter[resolved]=": false, "filter[resolved]=TRUE": false} {
		c := app.AcquireCtx(&fasthttp.RequestCtx{})
		oauth.WithPrincipal(c, &oauth.Principal{SiteID: uuid.New()})
		c.Request().URI().SetQueryString(raw)
		_, err := parseQuery(c, commentSpec(true))
		app.ReleaseCtx(c)
		var je *jsonapi.Error
		switch {
		case ok && err != nil:
			t.Errorf("%s: %v", raw, err)
		case !ok && (!errors.As(err, &je) || je.Status != "400" || je.Code != "invalid_filter" || je.Source == nil || je.Source.Parameter != "filter[resolved]"):
			t.Errorf("%s: %v, want 400 invalid_filter at filter[resolved]", raw, err)
		}
	}
}
