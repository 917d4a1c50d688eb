package api

import (
	"bytes"
	"testing"

	"github.com/pressroom/pressroom/third_party/redoc"
)

// The embedded renderer must not reach for Redocly's CDN (third_party/redoc/README.md):
// /docs renders offline, and its Content-Security-Policy would block it anyway.
func TestEmbeddedRendererLoadsNothingRemote(t *testing.T) {
	if len(redoc.JS) < 100_000 {
		t.Fatalf("the embedded renderer is %d bytes; third_party/redoc/redoc.standalone.js is missing", len(redoc.JS))
	}
	for _, host := range []string{"cdn.redoc.ly", "fonts.googleapis.com", "unpkg.com", "cdn.jsdelivr.net"} {
		if bytes.Contains(redoc.JS, []byte(host)) {
			t.Errorf("the embedded renderer refers to %s; see third_party/redoc/README.md", host)
		}
	}
}
