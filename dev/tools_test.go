package dev_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pressroom/pressroom/dev"
)

func TestRepoRoot(t *testing.T) {
	t.Parallel()
	cwd, err := os.Getwd() // the dev package directory of the checkout
	if err != nil {
		t.Fatal(err)
	}
	checkout := filepath.Dir(cwd)

	fake := t.TempDir() // a checkout of its own, outside this one
	writeFile(t, filepath.Join(fake, "go.mod"), "module github.com/pressroom/pressroom\n\ngo 1.26.0\n")
	deep := filepath.Join(fake, "a", "b", "c")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir() // another module
	writeFile(t, filepath.Join(other, "go.mod"), "module github.com/pressroom/pressroom-tools\n")
	otherSub := filepath.Join(other, "sub")
	if err := os.MkdirAll(otherSub, 0o755); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, dir, want string
	}{
		{"the checkout itself", checkout, checkout},
		{"the dev package", cwd, checkout},
		{"a command under dev", filepath.Join(checkout, "dev", "cmd", "devstack"), checkout},
		{"inside a nested tool module", filepath.Join(checkout, "dev", "tools", "minio"), checkout},
		{"deep in another checkout", deep, fake},
		{"outside any module", t.TempDir(), ""},
		{"inside a module that is not Pressroom", otherSub, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := dev.RepoRoot(tt.dir)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("RepoRoot(%s) = %q; want an error", tt.dir, got)
				}
				if !strings.Contains(err.Error(), "not inside the Pressroom checkout") || !strings.Contains(err.Error(), tt.dir) {
					t.Errorf("RepoRoot(%s) error %q should say it is not inside the checkout and name the directory", tt.dir, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("RepoRoot(%s) = %q, %v; want %q", tt.dir, got, err, tt.want)
			}
		})
	}
}

// Not parallel: t.Setenv.
func TestToolEnsureUsesEnvOverride(t *testing.T) {
	for _, tool := range []dev.Tool{dev.TemporalTool, dev.MinIOTool, dev.HelmTool, dev.KubeconformTool} {
		t.Run(tool.Name, func(t *testing.T) {
			want := filepath.Join(t.TempDir(), "prebuilt-"+tool.Name)
			t.Setenv(tool.EnvOverride, want)
			// A repository root with no tool modules: any build attempt fails.
			got, err := tool.Ensure(context.Background(), t.TempDir(), io.Discard)
			if err != nil || got != want {
				t.Errorf("with %s=%s, Ensure = %q, %v; want the override", tool.EnvOverride, want, got, err)
			}
		})
	}
}

// Not parallel: t.Setenv.
func TestCacheDirOverride(t *testing.T) {
	want := t.TempDir()
	t.Setenv("PRESSROOM_TOOLS_CACHE", want)
	if got, err := dev.CacheDir(); err != nil || got != want {
		t.Errorf("with PRESSROOM_TOOLS_CACHE=%s, CacheDir = %q, %v", want, got, err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
