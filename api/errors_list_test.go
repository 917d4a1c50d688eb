package api

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/pressroom/pressroom/models"
)

// Several domain errors (a revert's conflicts) answer as one document with
// an error object each, meta included, under the first one's status.
func TestDomainErrorList(t *testing.T) {
	app := fiber.New(fiber.Config{ErrorHandler: errorHandler(slog.New(slog.NewTextHandler(io.Discard, nil)))})
	app.Get("/", func(c *fiber.Ctx) error {
		return fmt.Errorf("revert: %w", models.Errors{
			{Kind: models.ErrConflict, Code: "revert_conflict", At: models.Rel("reverts", models.PartMember), Meta: map[string]any{"type": "pages", "id": "a"}},
			{Kind: models.ErrConflict, Code: "revert_conflict", At: models.Rel("reverts", models.PartMember), Meta: map[string]any{"type": "contents", "id": "b"}},
		})
	})
	resp, err := app.Test(httptest.NewRequest("GET", "/", nil))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Errors []struct {
			Status, Code string
			Source       struct{ Pointer string }
			Meta         map[string]string
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 409 || len(doc.Errors) != 2 {
		t.Fatalf("%d with %d errors, want 409 with 2", resp.StatusCode, len(doc.Errors))
	}
	for i, want := range []string{"pages/a", "contents/b"} {
		e := doc.Errors[i]
		if e.Code != "revert_conflict" || e.Source.Pointer != "/data/relationships/reverts" || e.Meta["type"]+"/"+e.Meta["id"] != want {
			t.Errorf("error %d = %+v, want %s", i, e, want)
		}
	}
}
