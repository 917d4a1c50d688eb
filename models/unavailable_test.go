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
