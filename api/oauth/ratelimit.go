package oauth

import (
	"fmt"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models"
)

// An integration client's rate limit (docs/auth.md, "Rate limits"): a
// fixed window of one minute, counted in Postgres so that it holds across
// every API replica (models.UseClientToken). Every answer to a client
// token carries the header fields of the IETF draft "RateLimit header
// fields for HTTP" (draft-ietf-httpapi-ratelimit-headers): RateLimit-Policy
// names the quota and its window, RateLimit what is left of it and when it
// resets; past the quota the answer is 429 with Retry-After.

// rateLimitPolicy is the name of the one policy.
const rateLimitPolicy = `"client"`

// rateLimited is a request past its client's quota.
type rateLimited struct {
	u   models.ClientTokenUse
	who string // "" for an OAuth client
}

func (e rateLimited) Error() string { return "rate limit exceeded" }

// setRateLimit sets the draft's header fields for u.
func setRateLimit(c *fiber.Ctx, u *models.ClientTokenUse) {
	c.Set("RateLimit-Policy", fmt.Sprintf("%s;q=%d;w=60", rateLimitPolicy, u.Limit))
	c.Set("RateLimit", fmt.Sprintf("%s;r=%d;t=%d", rateLimitPolicy, max(0, u.Limit-u.Used), u.ResetSeconds))
}

// answer is 429 rate_limited with Retry-After and the header fields.
func (e rateLimited) answer(c *fiber.Ctx) error {
	wait := strconv.Itoa(e.u.ResetSeconds)
	who := e.who
	if who == "" {
		who = "This OAuth client"
	}
	return jsonapi.NewError(fiber.StatusTooManyRequests, "rate_limited",
		fmt.Sprintf("%s may make %d requests a minute; try again in %s seconds.", who, e.u.Limit, wait)).
		WithHeader(fiber.HeaderRetryAfter, wait).
		WithHeader("RateLimit-Policy", fmt.Sprintf("%s;q=%d;w=60", rateLimitPolicy, e.u.Limit)).
		WithHeader("RateLimit", fmt.Sprintf("%s;r=0;t=%s", rateLimitPolicy, wait))
}

// LimitRequest is the rate limit of another holder of a quota counted as a
// client's is (models.ClientTokenUse: a preview link's): it sets the
// header fields on c and answers 429 rate_limited past the quota; who
// names the holder in the detail ("This preview link").
func LimitRequest(c *fiber.Ctx, u *models.ClientTokenUse, who string) error {
	if u.Used > u.Limit {
		return rateLimited{u: *u, who: who}.answer(c)
	}
	setRateLimit(c, u)
	return nil
}
