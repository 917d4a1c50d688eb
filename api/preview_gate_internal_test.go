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

// TestRelink: a document's links under the API's base point at the link,
// those already under the link stay, a link the preview link does not
// serve (a draft relationship) is left out, attributes are left alone.
func TestRelink(t *testing.T) {
	const base, link = "https://api.test", "https://api.test/preview/tok"
	in := `{"data":{"type":"pages","id":"1","attributes":{"canonical-url":"https://api.test/pages/1","n":12345678901234567890,"x":{"links":{"self":"https://api.test/pages/1"}}},` +
		`"relationships":{"draft":{"data":null,"links":{"self":"https://api.test/pages/1/relationships/draft","related":"https://api.test/pages/1/draft"}},` +
		`"layout":{"data":null,"links":{"self":"https://api.test/preview/tok/pages/1/relationships/layout","related":"https://api.test/pages/1/layout?preview-release=r"}}},` +
		`"links":{"self":"https://api.test/pages/1?preview-release=r"}},"links":{"next":{"href":"https://api.test/pages?a=1&b=<2>"},"about":"https://example.test/x"}}`
	want := `{"data":{"attributes":{"canonical-url":"https://api.test/pages/1","n":12345678901234567890,"x":{"links":{"self":"https://api.test/pages/1"}}},"id":"1",` +
		`"links":{"self":"https://api.test/preview/tok/pages/1?preview-release=r"},` +
		`"relationships":{"draft":{"data":null},` +
		`"layout":{"data":null,"links":{"related":"https://api.test/preview/tok/pages/1/layout?preview-release=r","self":"https://api.test/preview/tok/pages/1/relationships/layout"}}},"type":"pages"},` +
		`"links":{"about":"https://example.test/x","next":{"href":"https://api.test/preview/tok/pages?a=1&b=<2>"}}}`
	if got := string(relink([]byte(in), base, link)); got != want {
		t.Fatalf("relink:\n got %s\nwant %s", got, want)
	}
	if got := string(relink([]byte("<html>"), base, link)); got != "<html>" {
		t.Fatalf("not JSON: %s", got)
	}
}
