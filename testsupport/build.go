package testsupport

import (
	"context"
	"testing"

	"github.com/pressroom/pressroom/dev"
)

// RepoRoot is the Pressroom checkout the test runs in.
func RepoRoot(t testing.TB) string {
	t.Helper()
	root, err := dev.CheckoutRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// BuildPressroom starts building the pressroom binary into the test's
// temporary directory (dev.BuildPressroom); the function it returns waits
// for the build and returns the binary's path, failing the test if the
// build failed.
func BuildPressroom(t testing.TB) func() string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	wait := dev.BuildPressroom(ctx, RepoRoot(t), t.TempDir())
	// Cleanups run last in, first out: the build is stopped and waited for
	// before the temporary directory it writes into is removed.
	t.Cleanup(func() { cancel(); _, _ = wait() })
	return func() string {
		t.Helper()
		bin, err := wait()
		if err != nil {
			t.Fatal(err)
		}
		return bin
	}
}
