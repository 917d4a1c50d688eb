package api

import (
	"bytes"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/pressroom/pressroom/models"
)

// TestPreviewTokenNotLogged: the access log writes a preview link's path
// with its token redacted.
func TestPreviewTokenNotLogged(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	errs := errorHandler(log)
	app := fiber.New(fiber.Config{ErrorHandler: errs})
	app.Use(accessLog(log, errs))
	app.Get("/preview/:token/*", func(c *fiber.Ctx) error { return models.NotFound("preview link") })
	const token = "sEcReTtOkEnsEcReTtOkEnsEcReTtOkEnsEcReTtOk0"
	for _, p := range []string{"/preview/" + token + "/pages/x", "/preview/" + token + "/render/about/us"} {
		if _, err := app.Test(httptest.NewRequest("GET", p, nil)); err != nil {
			t.Fatal(err)
		}
	}
	out := buf.String()
	if strings.Contains(out, token) || !strings.Contains(out, "/preview/[redacted]/pages/x") || !strings.Contains(out, "/preview/[redacted]/render/about/us") {
		t.Fatalf("log:\n%s", out)
	}
}

func TestServedByLinks(t *testing.T) {
	for path, want := range map[string]bool{
		"/pages/:id": true, "/pages/:id/relationships/parent": true, "/site": true, "/content-blocks/:id/asset": true,
		"/drafts": false, "/pages/:id/draft": false, "/users/me": false, "/memberships": false, "/preview-links": false,
		"/revisions/:id": false, "/themes/:id/user": false, "/audit-events": false,
	} {
		if got := servedByLinks(path, models.PermRead); got != want {
			t.Errorf("servedByLinks(%s) = %v", path, got)
		}
	}
	if !includesDraft("parent,draft") || !includesDraft("contents.draft") || includesDraft("parent,layout") {
		t.Error("includesDraft")
	}
}
