package models

import (
	"errors"
	"fmt"
	"strconv"
)

// Domain errors. Stores and the drafts engine return these (or an *Error of
// one of these kinds); api/errors.go maps each kind to one HTTP status and
// code, in one table. Handlers never map them themselves.
var (
	// ErrNotFound: no record of the caller's site has that id.
	ErrNotFound = errors.New("no such record")
	// ErrConflict: a unique value (slug, e-mail, client id) is taken.
	ErrConflict = errors.New("already exists")
	// ErrInFlight: the draft is held by a revision being published.
	ErrInFlight = errors.New("the draft is being published by a revision in progress")
	// ErrDeleted: the record is drafted for deletion.
	ErrDeleted = errors.New("the record is drafted for deletion; revert that draft first")
	// ErrStaleVersion: the record changed since the caller read it.
	ErrStaleVersion = errors.New("the record changed since it was read")
	// ErrTooLarge: the change touches more records than one request may.
	ErrTooLarge = errors.New("the change touches too many records at once")
	// ErrRetry: another writer drafted the item while this transaction
	// waited for its row: the transaction must run again (api/tx.go does,
	// a bounded number of times).
	ErrRetry = errors.New("the record was drafted concurrently; run the transaction again")
	// ErrInvalid: a value the domain's rules refuse.
	ErrInvalid = errors.New("invalid")
	// ErrForbidden: the caller's role (or section) lacks the permission
	// the request needs. Another site's record is ErrNotFound, never this.
	ErrForbidden = errors.New("forbidden")
)

// Kinds lists every domain error kind (api/errors_test.go walks it).
var Kinds = []error{ErrNotFound, ErrConflict, ErrInFlight, ErrDeleted, ErrStaleVersion, ErrTooLarge, ErrRetry, ErrInvalid, ErrForbidden}

// Error is a domain error of one Kind with what the client needs to act on
// it: where in its request the culprit is (At, by attribute or
// relationship name; the zero Place when the URL names it), a refining
// code (Invalid: "invalid_title"), a sentence, and for ErrStaleVersion the
// version the record is at (0 when unknown). Empty fields take the
// defaults of the kind's row in the error table.
type Error struct {
	Kind    error
	Code    string
	At      Place
	Detail  string
	Version int
	// Meta names what the error is about beyond the pointer (a revert's
	// conflicting record: {"type": …, "id": …}).
	Meta map[string]any
}

func (e *Error) Error() string {
	msg := e.Kind.Error()
	if e.Detail != "" {
		msg = e.Detail
	}
	if at := e.At.String(); at != "" {
		return fmt.Sprintf("%s (at %s)", msg, at)
	}
	return msg
}

// Unwrap makes errors.Is(e, e.Kind) hold.
func (e *Error) Unwrap() error { return e.Kind }

// NotFound is ErrNotFound for the record the URL names; what is its
// singular type ("page", "theme").
func NotFound(what string) *Error {
	return &Error{Kind: ErrNotFound, Detail: "No " + what + " with that id."}
}

// RefNotFound is ErrNotFound for a record the request's relationship rel
// names (at the identifier's id): a record of another site, or an id that
// is no UUID, looks the same. It is the one answer to a reference to a
// record the caller's site does not have, in every resource.
func RefNotFound(rel, what string) *Error {
	return &Error{Kind: ErrNotFound, At: Rel(rel, PartID), Detail: "No " + what + " with that id."}
}

// Invalid is ErrInvalid: the value of the attribute breaks the rule code.
func Invalid(attribute, code, detail string) *Error {
	return &Error{Kind: ErrInvalid, Code: code, At: Attr(attribute), Detail: detail}
}

// Place names where in a request document a domain error lies, in the
// domain's words: an attribute, or a relationship (one part of it, of one
// item of a to-many one). The domain knows names, not documents:
// api/errors.go (pointerOf) writes a Place as a JSON pointer. The zero
// Place is none: the URL names the record.
type Place struct {
	Attribute    string
	Relationship string
	Part         Part
	// Item is, in a to-many relationship, the identifier's position in the
	// request's data counted from 1 (RelItem); 0 for a to-one relationship
	// or the data as a whole.
	Item int
}

// Part is which part of a relationship a Place is.
type Part int

const (
	PartData    Part = iota // its data (the linkage, or the item)
	PartMember              // the relationship member itself
	PartID                  // the identifier's id
	PartVersion             // the identifier's meta.version
)

// Attr is the place of the attribute name.
func Attr(name string) Place { return Place{Attribute: name} }

// Rel is the place of part of the to-one relationship name.
func Rel(name string, part Part) Place { return Place{Relationship: name, Part: part} }

// RelItem is the place of part of the identifier at index i (from 0) of
// the to-many relationship name.
func RelItem(name string, i int, part Part) Place {
	return Place{Relationship: name, Part: part, Item: i + 1}
}

// String names the place for logs: "attribute title", "relationship
// parent", "" for none.
func (p Place) String() string {
	switch {
	case p.Attribute != "":
		return "attribute " + p.Attribute
	case p.Relationship != "":
		return "relationship " + p.Relationship
	}
	return ""
}

// Stale is ErrStaleVersion for a record now at version (0 when unknown).
func Stale(version int) *Error { return &Error{Kind: ErrStaleVersion, Version: version} }

// Errors are domain errors answered together, one error object each (every
// record a revert conflicts on); the first one's kind gives the status.
type Errors []*Error

func (es Errors) Error() string {
	if len(es) == 0 {
		return "no errors"
	}
	return fmt.Sprintf("%s (and %d more)", es[0].Error(), len(es)-1)
}

// Unwrap makes errors.Is and errors.As see each error.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// Forbidden is ErrForbidden for a caller without permission p; Meta names
// it (meta.permission), and the detail says so.
func Forbidden(p Permission) *Error {
	return &Error{Kind: ErrForbidden, Detail: "Your role on this site lacks the permission " + strconv.Quote(string(p)) + ".",
		Meta: map[string]any{"permission": string(p)}}
}

// ForbiddenDraft is ErrForbidden for a draft the caller may not publish
// (or revert): outside their section, or another's. Meta names the
// permission and the draft.
func ForbiddenDraft(p Permission, draftID, itemType, itemID, why string) *Error {
	return &Error{Kind: ErrForbidden,
		Detail: "You lack the permission " + strconv.Quote(string(p)) + " for draft " + draftID + " (" + itemType + " " + itemID + "): " + why + ".",
		Meta:   map[string]any{"permission": string(p), "draft": map[string]any{"type": "drafts", "id": draftID}}}
}
