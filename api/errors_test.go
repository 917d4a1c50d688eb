package api

import (
	"database/sql"
	"fmt"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
)

// TestDomainErrorTable walks every domain error kind to its status: bare,
// wrapped, and as a *models.Error with a pointer, code or detail of its own.
func TestDomainErrorTable(t *testing.T) {
	want := map[error]struct {
		status int
		code   string
	}{
		models.ErrNotFound:     {http.StatusNotFound, "not_found"},
		models.ErrConflict:     {http.StatusConflict, "conflict"},
		models.ErrInFlight:     {http.StatusConflict, "draft_in_flight"},
		models.ErrDeleted:      {http.StatusConflict, "drafted_for_deletion"},
		models.ErrStaleVersion: {http.StatusPreconditionFailed, "stale_version"},
		models.ErrTooLarge:     {http.StatusUnprocessableEntity, "too_large"},
		models.ErrRetry:        {http.StatusConflict, "edited_concurrently"},
		models.ErrInvalid:      {http.StatusUnprocessableEntity, "invalid"},
		models.ErrForbidden:    {http.StatusForbidden, "forbidden"},
	}
	if len(want) != len(models.Kinds) || len(domainErrors) != len(models.Kinds) {
		t.Fatalf("%d kinds, %d rows in the table, %d here: every kind needs one row and one case", len(models.Kinds), len(domainErrors), len(want))
	}
	for _, kind := range models.Kinds {
		w, ok := want[kind]
		if !ok {
			t.Fatalf("kind %q has no expectation here", kind)
		}
		for _, err := range []error{kind, fmt.Errorf("context: %w", kind), &models.Error{Kind: kind}} {
			e := toAPIError(err)
			if e.StatusCode() != w.status || e.Code != w.code || e.Source != nil {
				t.Errorf("%v: got %d %s (source %v), want %d %s without a source", err, e.StatusCode(), e.Code, e.Source, w.status, w.code)
			}
		}
		e := toAPIError(fmt.Errorf("wrapped: %w", &models.Error{Kind: kind, Code: "own_code", At: models.Attr("title"), Detail: "Own detail.", Version: 7}))
		if e.StatusCode() != w.status || e.Source == nil || e.Source.Pointer == nil || *e.Source.Pointer != "/data/attributes/title" {
			t.Errorf("%v with a pointer: got %d at %v", kind, e.StatusCode(), e.Source)
		}
		if kind != models.ErrStaleVersion && (e.Code != "own_code" || e.Detail != "Own detail.") {
			t.Errorf("%v: own code and detail lost: %s %q", kind, e.Code, e.Detail)
		}
	}
	// The engine's names are the same errors.
	for _, err := range []error{drafts.ErrNotFound, drafts.ErrInFlight, drafts.ErrDeleted, drafts.ErrStale, drafts.ErrTooLarge, drafts.ErrRetry} {
		if s := toAPIError(err).StatusCode(); s == http.StatusInternalServerError {
			t.Errorf("%v: 500", err)
		}
	}
	if e := toAPIError(models.NotFound("page")); e.Detail != "No page with that id." {
		t.Errorf("NotFound detail: %q", e.Detail)
	}
	if e := toAPIError(models.Stale(3)); e.StatusCode() != http.StatusPreconditionFailed || e.Detail == toAPIError(models.ErrStaleVersion).Detail {
		t.Errorf("Stale(3) should name the version: %q", e.Detail)
	}
	// No rows, and anything else, are not mapped to a domain status by accident.
	if s := toAPIError(fmt.Errorf("find: %w", sql.ErrNoRows)).StatusCode(); s != http.StatusNotFound {
		t.Errorf("no rows: %d", s)
	}
	if s := toAPIError(fmt.Errorf("database is down")).StatusCode(); s != http.StatusInternalServerError {
		t.Errorf("an outage: %d, want 500", s)
	}
}

// Text PostgreSQL refuses (SQLSTATE 22021: bytes that are not UTF-8;
// 22P05: a character text cannot hold) is the client's: 400
// invalid_character, mapped from models.IsInvalidText, the backstop behind
// the API's own checks; any other SQLSTATE stays a 500.
func TestInvalidTextIsBadRequest(t *testing.T) {
	for code, status := range map[string]int{"22021": http.StatusBadRequest, "22P05": http.StatusBadRequest, "42601": http.StatusInternalServerError} {
		err := fmt.Errorf("list pages: %w", &pgconn.PgError{Code: code, Message: "invalid byte sequence for encoding \"UTF8\": 0xff"})
		e := toAPIError(err)
		if e.StatusCode() != status || status == http.StatusBadRequest && e.Code != "invalid_character" {
			t.Errorf("SQLSTATE %s: %d %s, want %d", code, e.StatusCode(), e.Code, status)
		}
	}
}
