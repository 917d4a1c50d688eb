package oauth

import (
	"crypto/sha256"
	"strings"
	"testing"
)

// tokenKey is the token's SHA-256 whatever its length, and a token of the
// usual size costs no allocation (it runs on every authenticated request).
func TestTokenKey(t *testing.T) {
	for _, n := range []int{0, 1, 800, 2048, 2049, 8192} {
		raw := strings.Repeat("t", n)
		if tokenKey(raw) != sha256.Sum256([]byte(raw)) {
			t.Errorf("tokenKey of %d bytes is not its SHA-256", n)
		}
	}
	raw := strings.Repeat("t", 800)
	if n := testing.AllocsPerRun(100, func() { _ = tokenKey(raw) }); n != 0 {
		t.Errorf("tokenKey of an 800-byte token allocates %v times, want 0", n)
	}
}
