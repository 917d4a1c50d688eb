package api

import (
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pressroom/pressroom/api/jsonapi"
)

// A document read through a release's preview advertises links that read
// through the same preview (docs/releases.md, "Preview"), so a client that
// follows them stays in it. The document builder (writeDocument) maps
// every URL of the document's links as it encodes them (jsonapi.LinkMap),
// with the map the request carries: a preview link's gate sets one that
// points the links at the link (linkURL), previews.wrap one that adds
// preview-release to a token-authenticated read's links (previewLinks).
// One mechanism for both, and no second encoding of the document.

// docLinksKey holds the request's jsonapi.LinkMap.
type docLinksKey struct{}

// setDocLinks makes the request's documents map their links with m.
func setDocLinks(c *fiber.Ctx, m jsonapi.LinkMap) { c.Locals(docLinksKey{}, m) }

// docLinks is the request's link map (nil: links as they are).
func docLinks(c *fiber.Ctx) jsonapi.LinkMap {
	m, _ := c.Locals(docLinksKey{}).(jsonapi.LinkMap)
	return m
}

// previewLinks maps a URL under base to the same URL with
// preview-release=release in its query (one that has it already is kept,
// as is a URL elsewhere).
func previewLinks(base string, release uuid.UUID) jsonapi.LinkMap {
	param := previewParam + "=" + release.String()
	return func(u string) (string, bool) {
		switch {
		case base == "" || !strings.HasPrefix(u, base+"/") || strings.Contains(u, param):
			return u, true
		case strings.Contains(u, "?"):
			return u + "&" + param, true
		}
		return u + "?" + param, true
	}
}
