package dev

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

func writeModule(t *testing.T, dir, goMod, goSum string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"go.mod": goMod, "go.sum": goSum} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const (
	testGoMod = "module pressroom.dev/tools/x\n\ngo 1.26\n\nrequire example.com/x v1.0.0\n"
	testGoSum = "example.com/x v1.0.0 h1:AAAA=\nexample.com/x v1.0.0/go.mod h1:BBBB=\n"
)

func TestModuleKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeModule(t, dir, testGoMod, testGoSum)
	key := func() string {
		t.Helper()
		k, err := moduleKey(dir)
		if err != nil {
			t.Fatalf("moduleKey: %v", err)
		}
		return k
	}
	base := key()
	if !regexp.MustCompile(`^[0-9a-f]{12}$`).MatchString(base) {
		t.Errorf("key %q: want 12 hex digits (it is part of a file name)", base)
	}
	if again := key(); again != base {
		t.Errorf("the key of unchanged files changed: %q then %q", base, again)
	}

	tests := []struct {
		name, goMod, goSum string
		same               bool
	}{
		{"go.sum bumped", testGoMod, "example.com/x v1.0.1 h1:CCCC=\nexample.com/x v1.0.1/go.mod h1:DDDD=\n", false},
		{"go.sum gains a line", testGoMod, testGoSum + "example.com/y v0.1.0/go.mod h1:EEEE=\n", false},
		{"go.mod bumped", "module pressroom.dev/tools/x\n\ngo 1.26\n\nrequire example.com/x v1.0.1\n", testGoSum, false},
		{"same content rewritten", testGoMod, testGoSum, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := t.TempDir()
			writeModule(t, d, tt.goMod, tt.goSum)
			k, err := moduleKey(d)
			if err != nil {
				t.Fatalf("moduleKey: %v", err)
			}
			if (k == base) != tt.same {
				t.Errorf("key %q vs base %q: want same = %v", k, base, tt.same)
			}
		})
	}

	t.Run("go.sum missing", func(t *testing.T) {
		t.Parallel()
		d := t.TempDir()
		writeModule(t, d, testGoMod, "")
		if err := os.Remove(filepath.Join(d, "go.sum")); err != nil {
			t.Fatal(err)
		}
		if k, err := moduleKey(d); err == nil {
			t.Errorf("moduleKey without go.sum = %q; want an error", k)
		}
	})
}

// TestEnsureUsesCachedBinary checks that a binary already in the cache under
// the module's key is returned without building. Not parallel: t.Setenv.
func TestEnsureUsesCachedBinary(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("PRESSROOM_TOOLS_CACHE", cache)
	// A package that cannot be built: reaching `go build` fails the test.
	tool := Tool{Name: "faketool", Package: "pressroom.invalid/none", EnvOverride: "PRESSROOM_FAKETOOL_BIN_UNSET"}
	root := t.TempDir()
	modDir := filepath.Join(root, "dev", "tools", tool.Name)
	writeModule(t, modDir, testGoMod, testGoSum)
	key, err := moduleKey(modDir)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(cache, tool.Name+"-"+key)
	if err := os.WriteFile(want, []byte("#!/bin/true\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := tool.Ensure(context.Background(), root, io.Discard)
	if err != nil || got != want {
		t.Errorf("Ensure = %q, %v; want the cached %q", got, err, want)
	}

	// After a pin bump the cached binary no longer matches, so Ensure builds
	// (and fails here, the package being fake).
	writeModule(t, modDir, testGoMod, testGoSum+"example.com/z v1.0.0/go.mod h1:FFFF=\n")
	var log bytes.Buffer
	if got, err := tool.Ensure(context.Background(), root, &log); err == nil {
		t.Errorf("after go.sum changed, Ensure = %q without building; want a rebuild", got)
	}
	// The build was reported, and its failure with go build's own output.
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^building faketool \(from dev/tools/faketool, once; cached in .+\)$`),
		regexp.MustCompile(`(?m)^building faketool failed after \d+ s$`),
		regexp.MustCompile(`example\.com/x`), // go build's complaint about the module
	} {
		if !want.MatchString(log.String()) {
			t.Errorf("build log lacks %s:\n%s", want, log.String())
		}
	}
}
