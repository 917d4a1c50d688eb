// Package dev runs Pressroom's local stack on one machine with nothing but
// Go and a PostgreSQL installation: a Postgres database (found or started),
// the Temporal dev server with its Web UI, and MinIO. `make dev` and the
// test harness both use it, so the tests run against exactly what
// developers run.
package dev

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
)

// Tool is a server binary built from a pinned module under dev/tools.
type Tool struct {
	// Name is the folder under dev/tools and the binary's name.
	Name string
	// Title names the tool in progress reports.
	Title string
	// Package is the main package to build.
	Package string
	// EnvOverride names a variable that, when set, gives a ready binary and
	// skips the build.
	EnvOverride string
}

var (
	TemporalTool = Tool{Name: "temporal", Title: "Temporal CLI", Package: "github.com/temporalio/cli/cmd/temporal", EnvOverride: "PRESSROOM_TEMPORAL_BIN"}
	MinIOTool    = Tool{Name: "minio", Title: "MinIO", Package: "github.com/minio/minio", EnvOverride: "PRESSROOM_MINIO_BIN"}
	// Helm and kubeconform check the Kubernetes chart (deploy/helm) in `make vet`.
	HelmTool        = Tool{Name: "helm", Title: "Helm", Package: "helm.sh/helm/v3/cmd/helm", EnvOverride: "PRESSROOM_HELM_BIN"}
	KubeconformTool = Tool{Name: "kubeconform", Title: "kubeconform", Package: "github.com/yannh/kubeconform/cmd/kubeconform", EnvOverride: "PRESSROOM_KUBECONFORM_BIN"}
)

// CacheDir is where built tools are kept between runs and between clones:
// PRESSROOM_TOOLS_CACHE, else the user cache directory.
func CacheDir() (string, error) {
	if d := os.Getenv("PRESSROOM_TOOLS_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find a cache directory (set PRESSROOM_TOOLS_CACHE): %w", err)
	}
	return filepath.Join(d, "pressroom", "tools"), nil
}

// Ensure returns the path of the tool's binary, building it first if the
// cache has none for the pinned versions. The cache key is a hash of the
// tool module's go.mod and go.sum and the Go version, so bumping a pin
// rebuilds and nothing else does. A file lock keeps parallel test processes
// from building the same tool twice.
func (t Tool) Ensure(ctx context.Context, repoRoot string, log io.Writer) (string, error) {
	if p := os.Getenv(t.EnvOverride); p != "" {
		return p, nil
	}
	modDir := filepath.Join(repoRoot, "dev", "tools", t.Name)
	key, err := moduleKey(modDir)
	if err != nil {
		return "", err
	}
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", fmt.Errorf("create tool cache: %w", err)
	}
	bin := filepath.Join(cache, t.Name+"-"+key)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	unlock, err := lockFile(bin + ".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(bin); err == nil { // built by another process while we waited
		return bin, nil
	}
	// go build says nothing while it works, for minutes: report which tool
	// and the time so far, and keep its output for a failure.
	done := track(log, t.label(modDir), fmt.Sprintf("from dev/tools/%s, once; cached in %s; takes a few minutes", t.Name, cache))
	tmp := bin + ".tmp"
	cmd := exec.CommandContext(ctx, "go", "build", "-o", tmp, t.Package)
	cmd.Dir = modDir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly")
	out := &tailBuffer{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	err = cmd.Run()
	done(err)
	if err != nil {
		_, _ = log.Write(out.Bytes())
		return "", fmt.Errorf("build %s: %w", t.Name, err)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", fmt.Errorf("install %s: %w", t.Name, err)
	}
	return bin, nil
}

// label is the tool's title and the version its module pins, e.g.
// "Temporal CLI v1.5.1".
func (t Tool) label(modDir string) string {
	title := t.Title
	if title == "" {
		title = t.Name
	}
	if v := pinnedVersion(filepath.Join(modDir, "go.mod"), t.Package); v != "" {
		return title + " " + v
	}
	return title
}

// pinnedVersion reads from a go.mod the version of the module that
// provides pkg (the longest module path pkg starts with); "" if none.
func pinnedVersion(goMod, pkg string) string {
	b, err := os.ReadFile(goMod)
	if err != nil {
		return ""
	}
	var best, version string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(f) < 2 || !strings.HasPrefix(f[1], "v") {
			continue
		}
		if (pkg == f[0] || strings.HasPrefix(pkg, f[0]+"/")) && len(f[0]) > len(best) {
			best, version = f[0], f[1]
		}
	}
	return version
}

func moduleKey(modDir string) (string, error) {
	h := sha256.New()
	for _, f := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(modDir, f))
		if err != nil {
			return "", fmt.Errorf("read tool module: %w", err)
		}
		h.Write(b)
	}
	h.Write([]byte(runtime.Version()))
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// CheckoutRoot is RepoRoot of the working directory: the checkout that
// devstack, the benchmarks and the tests run in.
func CheckoutRoot() (string, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return RepoRoot(cwd)
}

// RepoRoot finds the Pressroom checkout by walking up from dir to the
// go.mod that declares the service module.
func RepoRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/pressroom/pressroom\n") {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("not inside the Pressroom checkout (no go.mod of github.com/pressroom/pressroom above " + dir + ")")
		}
	}
}

// BuildPressroom starts building ./cmd/pressroom of the checkout at root
// into dir and returns a function that waits for the build and returns the
// binary's path. A build takes a while (cgo, libvips), so callers start it
// early and wait only when they need the binary.
func BuildPressroom(ctx context.Context, root, dir string) (wait func() (string, error)) {
	bin := filepath.Join(dir, "pressroom")
	built := make(chan error, 1)
	go func() {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/pressroom")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			err = fmt.Errorf("go build ./cmd/pressroom: %w\n%s", err, out)
		}
		built <- err
	}()
	var err error
	var once sync.Once
	return func() (string, error) {
		once.Do(func() { err = <-built })
		if err != nil {
			return "", err
		}
		return bin, nil
	}
}
