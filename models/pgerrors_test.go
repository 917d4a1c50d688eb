package models_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pressroom/pressroom/dev"
	"github.com/pressroom/pressroom/models"
)

func TestIsUnavailable(t *testing.T) {
	t.Parallel()
	port, err := dev.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, refused := pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/x?sslmode=disable&connect_timeout=5", port))
	if refused == nil {
		t.Fatal("connected to a free port")
	}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nothing", nil, false},
		{"connection refused", fmt.Errorf("look up access token: %w", refused), true},
		{"server shutting down (57P01)", &pgconn.PgError{Code: "57P01"}, true},
		{"server starting up (57P03)", &pgconn.PgError{Code: "57P03"}, true},
		{"connection failure (08006)", &pgconn.PgError{Code: "08006"}, true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"a domain error", models.ErrNotFound, false},
		{"cancelled", context.Canceled, false},
		{"other", errors.New("boom"), false},
	} {
		if got := models.IsUnavailable(tc.err); got != tc.want {
			t.Errorf("%s: IsUnavailable(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}

// The predicates every package asks instead of reading SQLSTATE codes.
func TestDatabaseErrorPredicates(t *testing.T) {
	t.Parallel()
	unique := fmt.Errorf("save draft: %w", &pgconn.PgError{Code: "23505", ConstraintName: "drafts_item_type_item_id_key", Message: "duplicate key value"})
	foreign := &pgconn.PgError{Code: "23503", Message: "violates foreign key constraint"}
	check := &pgconn.PgError{Code: "23514", Message: "violates check constraint"}
	exclusion := &pgconn.PgError{Code: "23P01", ConstraintName: "pages_live_path_excl", Message: "conflicting key value violates exclusion constraint"}
	deadlock := fmt.Errorf("commit: %w", &pgconn.PgError{Code: "40P01"})
	serialization := &pgconn.PgError{Code: "40001"}
	other := errors.New("boom")

	if !models.IsUniqueViolation(unique, "") || !models.IsUniqueViolation(unique, "drafts_item_type_item_id_key") {
		t.Error("a wrapped unique violation was not recognised")
	}
	if models.IsUniqueViolation(unique, "sites_slug_key") || models.IsUniqueViolation(foreign, "") || models.IsUniqueViolation(other, "") || models.IsUniqueViolation(nil, "") {
		t.Error("IsUniqueViolation matched another constraint or error")
	}
	for _, err := range []error{unique, foreign, check, exclusion} {
		if msg, ok := models.BrokenRule(err); !ok || msg == "" {
			t.Errorf("BrokenRule(%v) = %q, %v; want Postgres's message", err, msg, ok)
		}
	}
	for _, err := range []error{deadlock, serialization, other, nil} {
		if _, ok := models.BrokenRule(err); ok {
			t.Errorf("BrokenRule(%v) matched", err)
		}
	}
	for _, err := range []error{deadlock, serialization} {
		if !models.IsRetryableConflict(err) {
			t.Errorf("IsRetryableConflict(%v) = false", err)
		}
	}
	for _, err := range []error{unique, check, other, nil, &pgconn.PgError{Code: "57P01"}} {
		if models.IsRetryableConflict(err) {
			t.Errorf("IsRetryableConflict(%v) = true", err)
		}
	}
}
