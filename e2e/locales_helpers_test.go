package e2e

import (
	"net/http"
	"testing"
)

// patchSite sends PATCH /site with attrs (and the document's top-level
// meta when given) as e (docs/locales.md).
func (e *editor) patchSite(attrs map[string]any, meta map[string]any) *doc {
	e.t.Helper()
	body := map[string]any{"data": map[string]any{"type": "sites", "attributes": attrs}}
	if meta != nil {
		body["meta"] = meta
	}
	return e.do(http.MethodPatch, "/site", body)
}

// setLocales gives e's site locales and fallbacks, failing the test
// unless the PATCH is 200; it returns the site resource.
func (e *editor) setLocales(locales []string, fallbacks map[string]string) resource {
	e.t.Helper()
	attrs := map[string]any{"locales": locales}
	if fallbacks != nil {
		attrs["locale-fallbacks"] = fallbacks
	}
	d := e.patchSite(attrs, nil)
	if d.Status != http.StatusOK {
		e.t.Fatalf("PATCH /site locales %v fallbacks %v = %d %s", locales, fallbacks, d.Status, d.Raw)
	}
	return d.resource(e.t)
}

// wantError fails t unless d is status with an error of code at pointer
// (or, for a 400, at parameter).
func wantError(t *testing.T, d *doc, status int, code, at string) {
	t.Helper()
	if d.Status != status {
		t.Fatalf("status %d %s, want %d %s", d.Status, d.Raw, status, code)
	}
	for _, e := range d.Errors {
		if e.Code == code && (e.Source.Pointer == at || e.Source.Parameter == at) {
			return
		}
	}
	t.Fatalf("no error %s at %s in %s", code, at, d.Raw)
}
