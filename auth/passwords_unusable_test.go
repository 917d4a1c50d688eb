package auth

import (
	"errors"
	"testing"
)

// TestUnusablePasswordHashMatchesNothing: a new member's hash before the
// setup link is used is well formed (checking it costs what any check
// costs) and matches no password, the empty one included.
func TestUnusablePasswordHashMatchesNothing(t *testing.T) {
	h := UnusablePasswordHash()
	if h == UnusablePasswordHash() {
		t.Fatal("two unusable hashes are equal")
	}
	for _, pw := range []string{"", "pressroom-dev", h} {
		if err := CheckPassword(h, pw); !errors.Is(err, ErrMismatch) {
			t.Errorf("CheckPassword(unusable, %q) = %v, want ErrMismatch", pw, err)
		}
	}
}
