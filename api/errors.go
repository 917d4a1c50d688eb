package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models"
)

// errorHandler turns every error a handler or middleware returns into a
// JSON:API error document. Only *jsonapi.Error carries its detail to the
// client; anything unexpected is logged and answered with a bare 500, so no
// SQL, secret or stack trace ever reaches a response.
func errorHandler(log *slog.Logger) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		e := toAPIError(err)
		if e.StatusCode() >= 500 {
			log.ErrorContext(c.UserContext(), "request failed",
				"request_id", requestID(c), "method", c.Method(), "path", c.Path(), "status", e.StatusCode(), "error", err)
		}
		for name, values := range e.Header {
			for _, v := range values {
				c.Append(name, v)
			}
		}
		c.Set(fiber.HeaderContentType, jsonapi.MediaType)
		return c.Status(e.StatusCode()).JSON(jsonapi.ErrorDocument{Errors: []*jsonapi.Error{e}}, jsonapi.MediaType)
	}
}

func toAPIError(err error) *jsonapi.Error {
	var e *jsonapi.Error
	var fe *fiber.Error
	switch {
	case errors.Is(err, errRequestTimeout):
		return unavailable()
	case errors.As(err, &e):
		return e
	case errors.As(err, &fe):
		return fromFiberError(fe)
	case models.IsNoRows(err):
		return jsonapi.NotFound("No such record.")
	case errors.Is(err, models.ErrConflict):
		return jsonapi.Conflict("conflict", "A record with that unique value already exists.")
	case errors.Is(err, context.DeadlineExceeded):
		return jsonapi.Unavailable("A dependency did not answer in time; try again.").WithHeader("Retry-After", "5")
	default:
		return jsonapi.Internal()
	}
}

// unavailable is the answer to a request that ran out of time, mostly
// waiting for one of the pool's database connections: the server is busy,
// and the client should retry shortly.
func unavailable() *jsonapi.Error {
	return jsonapi.NewError(http.StatusServiceUnavailable, "unavailable",
		"The server is too busy to answer in time; try again shortly.").WithHeader("Retry-After", "1")
}

// fromFiberError maps the errors Fiber raises itself (routing, body limit,
// bad requests it rejects) to error objects with stable codes.
func fromFiberError(fe *fiber.Error) *jsonapi.Error {
	switch fe.Code {
	case fiber.StatusNotFound:
		return jsonapi.NotFound("No route matches this path.")
	case fiber.StatusMethodNotAllowed:
		return jsonapi.NewError(fe.Code, "method_not_allowed", "This path does not support that method.")
	case fiber.StatusRequestEntityTooLarge:
		return jsonapi.NewError(fe.Code, "body_too_large", "The request body is larger than the server accepts.")
	case fiber.StatusBadRequest:
		return jsonapi.BadRequest("bad_request", "The request could not be parsed.")
	}
	if fe.Code >= 400 && fe.Code < 500 {
		return jsonapi.NewError(fe.Code, "request_error", http.StatusText(fe.Code))
	}
	return jsonapi.Internal()
}
