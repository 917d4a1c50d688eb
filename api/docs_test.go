package api

import (
	"bytes"
	"testing"
)

// The embedded renderer must not reach for Redocly's CDN (api/reference/README.md):
// /docs renders offline, and its Content-Security-Policy would block it anyway.
func TestEmbeddedRendererLoadsNothingRemote(t *testing.T) {
	if len(redocJS) < 100_000 {
		t.Fatalf("the embedded renderer is %d bytes; api/reference/redoc.standalone.js is missing", len(redocJS))
	}
	for _, host := range []string{"cdn.redoc.ly", "fonts.googleapis.com", "unpkg.com", "cdn.jsdelivr.net"} {
		if bytes.Contains(redocJS, []byte(host)) {
			t.Errorf("the embedded renderer refers to %s; see api/reference/README.md", host)
		}
	}
}
