package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pressroom/pressroom/testsupport"
)

// TestReadmeTour runs the README's quick tour as written (its first sh
// block after "A quick tour"), with bash, curl and jq, against a test
// system standing in for `make dev`: every id comes from the answer before
// and the scheduled publish is relative to now, so the tour works on any
// day; a step that fails (curl -f) fails the test.
func TestReadmeTour(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			msg := tool + " is not installed (make deps installs curl and jq)"
			if ci := strings.ToLower(os.Getenv("CI")); ci != "" && ci != "0" && ci != "false" {
				t.Fatal(msg + "; CI is set, so the tour must run")
			}
			t.Skip(msg)
		}
	}
	readme, err := os.ReadFile(filepath.Join(testsupport.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	script := tourScript(t, string(readme))
	s := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Env = append(os.Environ(), "API="+s.URL)
	out, err := cmd.CombinedOutput()
	t.Logf("the tour printed:\n%s", out)
	if err != nil {
		t.Fatalf("the README's tour failed: %v", err)
	}
	// What the tour's comments promise, in the order it prints them.
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	want := []string{"editor@demo.test", "", "404", "/tour-", "", "/tour-", "scheduled at ", "published", "404", "<h1>News</h1>", "published", "410", s.URL + "/password-setup?token="}
	if len(lines) != len(want) {
		t.Fatalf("the tour printed %d lines, want %d", len(lines), len(want))
	}
	for i, w := range want {
		if w != "" && !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d of the tour = %q, want it to start with %q", i+1, lines[i], w)
		}
	}
}

// tourScript is the README's first sh block after "A quick tour".
func tourScript(t *testing.T, readme string) string {
	t.Helper()
	_, rest, ok := strings.Cut(readme, "A quick tour")
	if !ok {
		t.Fatal(`README.md has no "A quick tour" section`)
	}
	_, rest, ok = strings.Cut(rest, "```sh\n")
	if !ok {
		t.Fatal("the tour has no sh block")
	}
	script, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("the tour's sh block does not end")
	}
	return script
}
