package api

import (
	"io"
	"log/slog"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/pressroom/pressroom/config"
)

// bareApp is the app New builds from the default configuration with no
// database, Temporal or storage: enough to walk its routes and read its
// description, which New builds before anything is served.
func bareApp(t *testing.T) *fiber.App {
	t.Helper()
	c, err := config.FromEnv(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	app, err := New(Deps{Config: c, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return app
}
