package api_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The API server starts workflows but never runs activities: it must not
// link package activities, nor any cgo code of ours (libvips), so it
// builds and runs without a C toolchain's libraries. Workflows name their
// activities; activities import the workflows' inputs, not the other way
// round (see workflows/activities.go).
func TestAPIDoesNotDependOnActivitiesOrCgo(t *testing.T) {
	for _, line := range listDeps(t, "{{.ImportPath}} {{.Standard}} {{len .CgoFiles}}") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("unexpected go list line %q", line)
		}
		path, standard, cgoFiles := f[0], f[1] == "true", f[2]
		if strings.HasPrefix(path, "github.com/pressroom/pressroom/activities") {
			t.Errorf("api depends on %s", path)
		}
		if !standard && cgoFiles != "0" {
			t.Errorf("api depends on %s, which uses cgo", path)
		}
	}
	// With cgo enabled the standard library's net and os/user pick their
	// C resolvers, so runtime/cgo is listed above. Without cgo nothing may
	// link it, and the package must still compile: a dependency whose cgo
	// files drop out would leave its other files' calls undefined.
	for _, path := range listDeps(t, "{{.ImportPath}}", "CGO_ENABLED=0") {
		if path == "runtime/cgo" {
			t.Error("api links runtime/cgo even with CGO_ENABLED=0")
		}
	}
	build := exec.Command("go", "build", ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Errorf("api does not build without cgo: %v\n%s", err, out)
	}
}

// listDeps is `go list -deps -f format .` in env (added to the test's
// own), one line per package.
func listDeps(t *testing.T, format string, env ...string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", format, ".")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 10 {
		t.Fatalf("go list listed too few packages:\n%s", out)
	}
	return lines
}
