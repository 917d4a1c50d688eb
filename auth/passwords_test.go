package auth_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pressroom/pressroom/auth"
)

func TestPasswordHashing(t *testing.T) {
	t.Parallel()
	h, err := auth.HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=65536,t=1,p=2$") || strings.Contains(h, "correct horse") {
		t.Fatalf("unexpected hash %q", h)
	}
	h2, _ := auth.HashPassword("correct horse")
	if h == h2 {
		t.Error("two hashes of one password are equal: the salt is not random")
	}
	if err := auth.CheckPassword(h, "correct horse"); err != nil {
		t.Errorf("right password refused: %v", err)
	}
	for _, wrong := range []string{"correct hors", "Correct horse", "", strings.Repeat("x", auth.MaxPasswordBytes+1)} {
		if err := auth.CheckPassword(h, wrong); !errors.Is(err, auth.ErrMismatch) {
			t.Errorf("CheckPassword(%q…) = %v, want ErrMismatch", wrong[:min(len(wrong), 12)], err)
		}
	}
	if err := auth.CheckPassword("$2a$12$notargon", "x"); err == nil || errors.Is(err, auth.ErrMismatch) {
		t.Errorf("unknown hash format: %v", err)
	}
	if _, err := auth.HashPassword(""); err == nil {
		t.Error("empty password hashed")
	}
	if _, err := auth.HashPassword(strings.Repeat("x", auth.MaxPasswordBytes+1)); err == nil {
		t.Error("oversized password hashed")
	}
}

func TestRandomSecret(t *testing.T) {
	t.Parallel()
	a, _ := auth.RandomSecret(32)
	b, _ := auth.RandomSecret(32)
	if a == b || len(a) != 43 {
		t.Errorf("secrets %q %q", a, b)
	}
}
