package api

import (
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/pressroom/pressroom/config"
)

// TestEveryWriteRouteIsAudited walks every route New registers: each
// write (POST, PATCH, DELETE) behind a token is registered through
// routes.add (TestEveryRouteDeclaresAPermission), which wraps it with the
// audit (audited), so it records an event unless unaudited names it; its
// action is <type>.<verb> and docs/audit.md lists it. Fails for a new
// write route whose action is undocumented.
func TestEveryWriteRouteIsAudited(t *testing.T) {
	c, err := config.FromEnv(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	app, err := New(Deps{Config: c, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	docs, err := os.ReadFile("../docs/audit.md")
	if err != nil {
		t.Fatal(err)
	}
	verbs := map[string]bool{"create": true, "update": true, "delete": true, "retry": true, "restore": true}
	n := 0
	for _, r := range servedRoutes(app.GetRoutes(true)) {
		method, path := r[0], r[1]
		if method == fiber.MethodGet || specialRoutes[method+" "+path].public {
			continue
		}
		if _, ok := unaudited[method+" "+path]; ok {
			continue
		}
		n++
		action, itemType := auditAction(method, path)
		typ, verb, _ := strings.Cut(action, ".")
		if typ != itemType || !verbs[verb] {
			t.Errorf("%s %s: action %q (item type %q), want <type>.<create|update|delete|retry|restore>", method, path, action, itemType)
		}
		if !strings.Contains(string(docs), "`"+action+"`") {
			t.Errorf("%s %s records %s, which docs/audit.md does not list", method, path, action)
		}
	}
	if n < 15 {
		t.Errorf("only %d audited write routes", n)
	}
	for k := range unaudited {
		m, p, _ := strings.Cut(k, " ")
		found := false
		for _, r := range app.GetRoutes(true) {
			found = found || r.Method == m && r.Path == p
		}
		if !found {
			t.Errorf("unaudited names %s, which is not a route", k)
		}
	}
}
