// Package jsonapi holds the JSON:API 1.1 document types Pressroom reads and
// writes: resources, relationships, error objects, and strict request decoding.
package jsonapi

import (
	"fmt"
	"net/http"
	"strconv"
)

// MediaType is the JSON:API media type.
const MediaType = "application/vnd.api+json"

// Error is a JSON:API error object. Handlers return *Error to answer with a
// specific status; the app's error handler renders it as an error document.
type Error struct {
	Status string  `json:"status"`
	Code   string  `json:"code"`
	Title  string  `json:"title"`
	Detail string  `json:"detail,omitempty"`
	Source *Source `json:"source,omitempty"`
	// Meta names what the error is about beyond source (a record's type
	// and id).
	Meta map[string]any `json:"meta,omitempty"`
	// Header holds response headers the error calls for (WWW-Authenticate,
	// Retry-After, Allow); it is not part of the document.
	Header http.Header `json:"-"`
}

// Source points at the part of the request an error is about.
type Source struct {
	// Pointer is a JSON Pointer (RFC 6901) into the request document; ""
	// means the whole document, so it is a pointer, not omitted when empty.
	Pointer   *string `json:"pointer,omitempty"`
	Parameter string  `json:"parameter,omitempty"`
	Header    string  `json:"header,omitempty"`
}

// ErrorDocument is the top level of an error response.
type ErrorDocument struct {
	Errors []*Error `json:"errors"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s %s: %s", e.Status, e.Code, e.Detail) }

// StatusCode returns the HTTP status as an integer.
func (e *Error) StatusCode() int {
	n, err := strconv.Atoi(e.Status)
	if err != nil {
		return http.StatusInternalServerError
	}
	return n
}

// NewError builds an error object for status with a machine-readable code.
func NewError(status int, code, detail string) *Error {
	return &Error{Status: strconv.Itoa(status), Code: code, Title: http.StatusText(status), Detail: detail}
}

// AtPointer sets source.pointer.
func (e *Error) AtPointer(pointer string) *Error {
	e.Source = &Source{Pointer: &pointer}
	return e
}

// AtParameter sets source.parameter.
func (e *Error) AtParameter(name string) *Error {
	e.Source = &Source{Parameter: name}
	return e
}

// AtHeader sets source.header.
func (e *Error) AtHeader(name string) *Error {
	e.Source = &Source{Header: name}
	return e
}

// WithHeader adds a response header to send with the error.
func (e *Error) WithHeader(name, value string) *Error {
	if e.Header == nil {
		e.Header = http.Header{}
	}
	e.Header.Add(name, value)
	return e
}

// The constructors below cover the statuses DESIGN.md §2 lists.

func BadRequest(code, detail string) *Error { return NewError(http.StatusBadRequest, code, detail) }
func NotFound(detail string) *Error         { return NewError(http.StatusNotFound, "not_found", detail) }
func Conflict(code, detail string) *Error   { return NewError(http.StatusConflict, code, detail) }
func Unprocessable(code, detail string) *Error {
	return NewError(http.StatusUnprocessableEntity, code, detail)
}
func Internal() *Error {
	return NewError(http.StatusInternalServerError, "internal_error", "The server failed to handle the request; it has been logged.")
}
func Unavailable(detail string) *Error {
	return NewError(http.StatusServiceUnavailable, "dependency_unavailable", detail)
}
