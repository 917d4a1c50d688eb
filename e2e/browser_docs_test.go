package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserDocs opens the API reference the way a reader does: Redoc,
// served by the binary, renders /openapi.json, lists every group of
// endpoints and a group's operations, and loads nothing from anywhere but
// the API itself.
func TestBrowserDocs(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	s := start(t)
	run(t, ctx, "open /docs", chromedp.Navigate(s.URL+"/docs"))

	// Every operation of the description is an entry of the reference's
	// menu (Redoc names them tag/<tag>/operation/<operationId>).
	missing := eval[[]string](t, ctx, `(async () => {
		const spec = await (await fetch("/openapi.json")).json();
		const want = [];
		for (const item of Object.values(spec.paths))
			for (const op of Object.values(item)) want.push("tag/" + op.tags[0] + "/operation/" + op.operationId);
		const deadline = Date.now() + 180000;
		for (;;) {
			const menu = new Set([...document.querySelectorAll("[data-item-id]")].map(e => e.getAttribute("data-item-id")));
			const missing = want.filter(id => !menu.has(id));
			if (missing.length === 0 || Date.now() > deadline) return menu.size === 0 ? ["(nothing rendered)"] : missing;
			await new Promise(r => setTimeout(r, 250));
		}
	})()`)
	if len(missing) > 0 {
		t.Errorf("the reference does not list %v", missing)
	}
	// And shows each endpoint's path.
	text := eval[string](t, ctx, `document.body.textContent`)
	for _, want := range []string{"Pressroom API", "/oauth/token", "/contents/{id}/relationships/content-blocks", "/upload-signatures", "/users/me", "/site/relationships/theme"} {
		if !strings.Contains(text, want) {
			t.Errorf("the reference does not show %s", want)
		}
	}

	// Nothing fetched from the internet: every resource the page loaded
	// came from the API's origin (its Content-Security-Policy allows no other).
	foreign := eval[[]string](t, ctx, `performance.getEntriesByType("resource").map(e => e.name).filter(u => !u.startsWith(location.origin + "/") && !u.startsWith("data:") && !u.startsWith("blob:"))`)
	if len(foreign) > 0 {
		t.Errorf("the reference loaded from elsewhere: %v", foreign)
	}
}
