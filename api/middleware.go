package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pressroom/pressroom/api/jsonapi"
)

const requestIDHeader = "X-Request-Id"

// A client may send its own request id to correlate logs, but only a short,
// plain one: anything else could forge or flood log lines.
var clientRequestID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// withRequestID gives every request an id, echoed in X-Request-Id and
// written in every log line about the request.
func withRequestID(c *fiber.Ctx) error {
	id := c.Get(requestIDHeader)
	if !clientRequestID.MatchString(id) {
		id = uuid.NewString()
	}
	c.Locals(requestIDHeader, id)
	c.Set(requestIDHeader, id)
	return c.Next()
}

// errRequestTimeout marks an error a handler returned after its request's
// deadline passed: whatever it says, the cause is the deadline (a query or
// a wait for a pool connection cut short), and the answer is 503.
var errRequestTimeout = errors.New("request deadline exceeded")

// withDeadline gives every request a deadline: the handler's context is
// cancelled at it, which ends any wait for a database connection or a query
// in flight, so no client waits forever on an exhausted pool. A zero d (a
// Config not built by config.FromEnv) means the default of 30s.
func withDeadline(d time.Duration) fiber.Handler {
	if d <= 0 {
		d = 30 * time.Second
	}
	return func(c *fiber.Ctx) error {
		ctx, cancel := context.WithTimeout(c.UserContext(), d)
		defer cancel()
		c.SetUserContext(ctx)
		err := c.Next()
		if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("%w: %w", errRequestTimeout, err)
		}
		return err
	}
}

// rejectNUL refuses a request with U+0000 in a header value (400 naming
// the header): headers such as Idempotency-Key reach PostgreSQL, whose text
// cannot hold it. Query parameters and documents are checked where they are
// parsed (parseQuery, jsonapi.Decode); path ids are parsed as UUIDs.
func rejectNUL(c *fiber.Ctx) error {
	var bad string
	c.Request().Header.VisitAll(func(k, v []byte) {
		if bad == "" && bytes.IndexByte(v, 0) >= 0 {
			bad = string(k)
		}
	})
	if bad != "" {
		return jsonapi.BadRequest("invalid_character", "Header values must not contain the NUL character (U+0000).").AtHeader(bad)
	}
	return c.Next()
}

func requestID(c *fiber.Ctx) string {
	id, _ := c.Locals(requestIDHeader).(string)
	return id
}

// accessLog writes one structured line per request. It logs the path but
// never the query string or headers, where tokens and codes may travel.
func accessLog(log *slog.Logger, errHandler fiber.ErrorHandler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		start := time.Now()
		err := c.Next()
		if err != nil {
			// Render the error now so the logged status is the one sent.
			if herr := errHandler(c, err); herr != nil {
				return herr
			}
		}
		status := c.Response().StatusCode()
		level := slog.LevelInfo
		if status >= 500 {
			level = slog.LevelError
		}
		// Typed attributes: no boxing of each value, on every request.
		log.LogAttrs(c.UserContext(), level, "request",
			slog.String("request_id", requestID(c)),
			slog.String("method", c.Method()),
			slog.String("path", logPath(c)),
			slog.Int("status", status),
			slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
			slog.Int("bytes", len(c.Response().Body())),
			slog.String("remote", c.IP()),
		)
		return nil
	}
}

// logPath is the request's path as logs write it: a preview link's token
// (its url's secret, /preview/<token>/…) replaced by "[redacted]".
func logPath(c *fiber.Ctx) string {
	p := c.Path()
	rest, ok := strings.CutPrefix(p, previewPrefix)
	if !ok {
		return p
	}
	_, after, found := strings.Cut(rest, "/")
	if !found {
		return previewPrefix + "[redacted]"
	}
	return previewPrefix + "[redacted]/" + after
}
