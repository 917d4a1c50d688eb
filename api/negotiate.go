package api

import (
	"mime"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/pressroom/pressroom/api/jsonapi"
)

// plainPaths answer in plain JSON (or HTML, or OAuth's own format), so
// JSON:API content negotiation does not apply to them.
var plainPrefixes = []string{"/oauth/", "/.well-known/", "/asset-types", "/healthz", "/readyz", "/openapi.json", "/docs/", "/password-setup"}

func isPlainPath(path string) bool {
	for _, p := range plainPrefixes {
		if path == strings.TrimSuffix(p, "/") || strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// negotiate enforces JSON:API 1.1 content negotiation (DESIGN.md §2):
// a body must be sent as exactly application/vnd.api+json (a "profile"
// parameter is allowed; "ext" names extensions, and Pressroom supports none),
// else 415; an Accept header that admits no plain JSON:API response is 406.
func negotiate(c *fiber.Ctx) error {
	if isPlainPath(c.Path()) || linkAnswersItself(c) {
		return c.Next()
	}
	if hasBody(c) {
		if e := checkContentType(c.Get(fiber.HeaderContentType)); e != nil {
			return e
		}
	}
	if !acceptsJSONAPI(c.Get(fiber.HeaderAccept)) {
		return jsonapi.NewError(fiber.StatusNotAcceptable, "not_acceptable",
			"The Accept header admits no "+jsonapi.MediaType+" response without extensions; send Accept: "+jsonapi.MediaType+".").AtHeader("Accept")
	}
	return c.Next()
}

// hasBody judges from the headers alone: the body itself is read later,
// after the token check (intake.Read). A chunked body has length -1.
func hasBody(c *fiber.Ctx) bool {
	cl := c.Request().Header.ContentLength()
	return cl > 0 || cl == -1 || len(c.Request().Header.ContentType()) > 0 && c.Method() != fiber.MethodGet
}

func checkContentType(header string) *jsonapi.Error {
	unsupported := func(detail string) *jsonapi.Error {
		return jsonapi.NewError(fiber.StatusUnsupportedMediaType, "unsupported_media_type", detail).AtHeader("Content-Type")
	}
	if header == "" {
		return unsupported("A request body needs Content-Type: " + jsonapi.MediaType + ".")
	}
	mt, params, err := mime.ParseMediaType(header)
	if err != nil || mt != jsonapi.MediaType {
		return unsupported("Request bodies must be sent as " + jsonapi.MediaType + ".")
	}
	for name := range params {
		switch name {
		case "profile":
		case "ext":
			return unsupported("This server supports no JSON:API extensions; remove the ext parameter.")
		default:
			return unsupported("The media type parameter " + strconv.Quote(name) + " is not allowed on " + jsonapi.MediaType + " (JSON:API 1.1 allows only ext and profile).")
		}
	}
	return nil
}

// acceptsJSONAPI tells whether an Accept header admits a response of the
// JSON:API media type with no extension. A missing header admits anything.
func acceptsJSONAPI(header string) bool {
	if strings.TrimSpace(header) == "" {
		return true
	}
	for _, part := range strings.Split(header, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		if q, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(q, 64); err != nil || f <= 0 {
				continue
			}
		}
		switch mt {
		case "*/*", "application/*":
			return true
		case jsonapi.MediaType:
			if onlyProfileAndQ(params) {
				return true
			}
		}
	}
	return false
}

func onlyProfileAndQ(params map[string]string) bool {
	for name := range params {
		if name != "profile" && name != "q" {
			return false
		}
	}
	return true
}

// linkAnswersItself tells whether a request through a preview link gets
// an answer negotiation must not preempt: an HTML page (the render route),
// or 405 for any method but GET and HEAD, whatever its body.
func linkAnswersItself(c *fiber.Ctx) bool {
	if !strings.HasPrefix(c.Path(), previewPrefix) {
		return false
	}
	m := c.Method()
	return isRenderPath(c.Path()) || m != fiber.MethodGet && m != fiber.MethodHead
}
