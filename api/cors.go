package api

import (
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/cors"
)

// corsHeaders are the request headers a front end on another origin may
// send: the token, JSON:API negotiation, optimistic concurrency, retries.
var corsHeaders = []string{
	fiber.HeaderAuthorization, fiber.HeaderAccept, fiber.HeaderContentType,
	fiber.HeaderIfMatch, "Idempotency-Key", requestIDHeader,
}

// corsExposed are the response headers its scripts may read: where a
// created resource or a pending revision is (Location), the version to send
// back in If-Match (ETag), and when to retry (Retry-After).
var corsExposed = []string{fiber.HeaderLocation, fiber.HeaderETag, fiber.HeaderRetryAfter, requestIDHeader}

// withCORS answers cross-origin requests from the configured front-end
// origins (PRESSROOM_CORS_ORIGINS), preflights included, before content
// negotiation sees them: a preflight has no Accept header to negotiate. With
// no origins configured it adds nothing, and browsers keep other origins out.
// Bearer tokens, not cookies, authorise the API, so credentials are never
// allowed: "*" cannot leak a session.
func withCORS(origins []string) fiber.Handler {
	if len(origins) == 0 {
		return func(c *fiber.Ctx) error { return c.Next() }
	}
	return cors.New(cors.Config{
		AllowOrigins:  strings.Join(origins, ","),
		AllowMethods:  strings.Join([]string{fiber.MethodGet, fiber.MethodHead, fiber.MethodPost, fiber.MethodPatch, fiber.MethodDelete}, ","),
		AllowHeaders:  strings.Join(corsHeaders, ","),
		ExposeHeaders: strings.Join(corsExposed, ","),
		MaxAge:        600,
	})
}
