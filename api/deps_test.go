package api_test

import (
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
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}} {{len .CgoFiles}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 10 {
		t.Fatalf("go list listed too few packages:\n%s", out)
	}
	for _, line := range lines {
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
}
