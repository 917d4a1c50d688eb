package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/pressroom/pressroom/third_party/redoc"
)

// The reference renderer is pinned and embedded (package redoc,
// third_party/redoc/README.md): /docs works offline.

const docsPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pressroom API reference</title></head>
<body><redoc spec-url="/openapi.json"></redoc>
<script src="/docs/redoc.standalone.js"></script></body></html>`

// docsPolicy keeps the page to this origin: the renderer, the description
// and nothing from elsewhere (no fonts, no CDN). Redoc's styles are inline
// (styled-components) and its search runs in a blob: worker.
const docsPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; frame-ancestors 'none'"

// registerDocRoutes serves the OpenAPI description (built by New once every
// route is registered, so spec is read at request time) and the reference.
func registerDocRoutes(app *fiber.App, spec *[]byte) {
	app.Get("/openapi.json", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		c.Set(fiber.HeaderCacheControl, "public, max-age=300")
		return c.Send(*spec)
	})
	app.Get("/docs", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
		c.Set(fiber.HeaderContentSecurityPolicy, docsPolicy)
		return c.SendString(docsPage)
	})
	app.Get("/docs/redoc.standalone.js", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, "text/javascript; charset=utf-8")
		c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
		return c.Send(redoc.JS)
	})
}
