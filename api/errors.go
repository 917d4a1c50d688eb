package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

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
		// Several domain errors answered together (a revert's conflicts):
		// one error object each.
		var list models.Errors
		if errors.As(err, &list) && len(list) > 0 {
			objs := make([]*jsonapi.Error, len(list))
			for i, de := range list {
				objs[i] = toAPIError(de)
			}
			c.Set(fiber.HeaderContentType, jsonapi.MediaType)
			return c.Status(objs[0].StatusCode()).JSON(jsonapi.ErrorDocument{Errors: objs}, jsonapi.MediaType)
		}
		e := toAPIError(err)
		if e.StatusCode() >= 500 {
			log.ErrorContext(c.UserContext(), "request failed",
				"request_id", requestID(c), "method", c.Method(), "path", logPath(c), "status", e.StatusCode(), "error", err)
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

// domainErrors is the one table from domain errors (models/errors.go) to
// statuses and codes. An *models.Error of a kind brings its own pointer,
// code, detail or version; the row gives the rest.
var domainErrors = []struct {
	kind   error
	status int
	code   string
	detail string
}{
	{models.ErrNotFound, http.StatusNotFound, "not_found", "No such record."},
	{models.ErrConflict, http.StatusConflict, "conflict", "A record with that unique value already exists."},
	{models.ErrInFlight, http.StatusConflict, "draft_in_flight", "The draft is being published by a revision in progress; try again when it has finished."},
	{models.ErrDeleted, http.StatusConflict, "drafted_for_deletion", "The record is drafted for deletion; revert that draft (DELETE /drafts/:id) before changing it."},
	{models.ErrStaleVersion, http.StatusPreconditionFailed, "stale_version", ""},
	{models.ErrTooLarge, http.StatusUnprocessableEntity, "too_large", "The change touches more records than one request may."},
	{models.ErrRetry, http.StatusConflict, "edited_concurrently", "Other writes to this record kept landing first; try again."},
	{models.ErrInvalid, http.StatusUnprocessableEntity, "invalid", "A value breaks a rule."},
	{models.ErrForbidden, http.StatusForbidden, "forbidden", "Your role on this site does not allow this."},
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
	case errors.Is(err, context.DeadlineExceeded):
		return jsonapi.Unavailable("A dependency did not answer in time; try again.").WithHeader("Retry-After", "5")
	case models.IsUnavailable(err):
		return jsonapi.Unavailable("The database is unreachable; try again shortly.").WithHeader("Retry-After", "5")
	case models.IsInvalidText(err):
		return jsonapi.BadRequest("invalid_character", "A value is not valid UTF-8 or holds a character text cannot (U+0000).")
	}
	if de := fromDomainError(err); de != nil {
		return de
	}
	return jsonapi.Internal()
}

// fromDomainError answers a domain error by its row in domainErrors (nil
// for an error that is none).
func fromDomainError(err error) *jsonapi.Error {
	var de *models.Error
	if !errors.As(err, &de) {
		de = &models.Error{}
	}
	for _, row := range domainErrors {
		if !errors.Is(err, row.kind) {
			continue
		}
		var out *jsonapi.Error
		if row.kind == models.ErrStaleVersion {
			out = stale(de.Version)
		} else {
			code, detail := row.code, row.detail
			if de.Code != "" {
				code = de.Code
			}
			if de.Detail != "" {
				detail = de.Detail
			}
			out = jsonapi.NewError(row.status, code, detail)
		}
		if ptr := pointerOf(de.At); ptr != "" {
			out.AtPointer(ptr)
		}
		out.Meta = de.Meta
		return out
	}
	return nil
}

// pointerOf writes a domain error's place (an attribute or relationship
// name, models.Place) as the JSON pointer into the request document: the
// one place the domain's names become pointers. "" for no place.
func pointerOf(p models.Place) string {
	if p.Attribute != "" {
		return "/data/attributes/" + p.Attribute
	}
	if p.Relationship == "" {
		return ""
	}
	ptr := "/data/relationships/" + p.Relationship
	if p.Part == models.PartMember {
		return ptr
	}
	ptr += "/data"
	if p.Item > 0 {
		ptr += "/" + strconv.Itoa(p.Item-1)
	}
	switch p.Part {
	case models.PartID:
		ptr += "/id"
	case models.PartVersion:
		ptr += "/meta/version"
	}
	return ptr
}

// inRelationshipDocument answers err for a relationship endpoint (PATCH
// /site/relationships/theme), whose body is the relationship's own
// document: a domain error at the relationship points into that document
// (/data/id, not /data/relationships/theme/data/id).
func inRelationshipDocument(err error) error {
	var de *models.Error
	if !errors.As(err, &de) || de.At.Relationship == "" || de.At.Part == models.PartMember {
		return err
	}
	e := fromDomainError(err)
	if e == nil {
		return err
	}
	return e.AtPointer(strings.TrimPrefix(pointerOf(de.At), "/data/relationships/"+de.At.Relationship))
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
	case fiber.StatusRequestTimeout: // the body did not arrive in time (api/intake)
		return jsonapi.NewError(fe.Code, "body_timeout", fe.Message)
	case fiber.StatusUnsupportedMediaType: // a compressed body (api/intake)
		return jsonapi.NewError(fe.Code, "unsupported_media_type", fe.Message).AtHeader(fiber.HeaderContentEncoding)
	}
	if fe.Code >= 400 && fe.Code < 500 {
		return jsonapi.NewError(fe.Code, "request_error", http.StatusText(fe.Code))
	}
	return jsonapi.Internal()
}
