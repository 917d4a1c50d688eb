package dev

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe to read while a reporter writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls until out has n matches of re (generous: the machine is loaded).
func waitFor(t *testing.T, out *syncBuffer, re *regexp.Regexp, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for len(re.FindAllString(out.String(), -1)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("no %d matches of %s within 30 s:\n%q", n, re, out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestProgressPlainLines(t *testing.T) {
	t.Parallel()
	out := &syncBuffer{}
	r := newReporter(out, 20*time.Millisecond, false)
	done := r.track("Fake tool v1.2.3", "once; cached")
	waitFor(t, out, regexp.MustCompile(`(?m)^building Fake tool v1\.2\.3… \d+ s$`), 3)
	done(nil)
	done(nil) // a second call changes nothing

	got := out.String()
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if lines[0] != "building Fake tool v1.2.3 (once; cached)" {
		t.Errorf("first line %q: want what is built", lines[0])
	}
	if last := lines[len(lines)-1]; !regexp.MustCompile(`^built Fake tool v1\.2\.3 in \d+ s$`).MatchString(last) {
		t.Errorf("last line %q: want the time taken", last)
	}
	if strings.ContainsAny(got, "\r\x1b") {
		t.Errorf("carriage returns or escapes in plain output: %q", got)
	}
	// The ticker stops with the last step.
	time.Sleep(100 * time.Millisecond)
	if again := out.String(); again != got {
		t.Errorf("reports after the end: %q", strings.TrimPrefix(again, got))
	}
}

func TestProgressFailure(t *testing.T) {
	t.Parallel()
	out := &syncBuffer{}
	r := newReporter(out, time.Hour, false)
	r.track("Broken", "x")(context.Canceled)
	if !regexp.MustCompile(`(?m)^building Broken failed after \d+ s$`).MatchString(out.String()) {
		t.Errorf("output %q: want the failure and its time", out.String())
	}
}

// TestProgressTerminalSharesOneLine: on a terminal, parallel builds share
// one status line rewritten in place, and each end gets a line of its own.
func TestProgressTerminalSharesOneLine(t *testing.T) {
	t.Parallel()
	out := &syncBuffer{}
	r := newReporter(out, 20*time.Millisecond, true)
	doneA := r.track("Temporal CLI v1.5.1", "a")
	doneB := r.track("MinIO", "b")
	waitFor(t, out, regexp.MustCompile(`\rbuilding Temporal CLI v1\.5\.1… \d+ s; building MinIO… \d+ s\x1b\[K`), 2)
	doneA(nil)
	waitFor(t, out, regexp.MustCompile(`\r\x1b\[Kbuilt Temporal CLI v1\.5\.1 in \d+ s\n\rbuilding MinIO… \d+ s\x1b\[K`), 1)
	doneB(nil)
	got := out.String()
	if !strings.HasSuffix(got, "\r\x1b[K"+"built MinIO in 0 s\n") && !regexp.MustCompile(`\r\x1b\[Kbuilt MinIO in \d+ s\n$`).MatchString(got) {
		t.Errorf("output ends %q: want the status line cleared and the last build's time", got[max(0, len(got)-60):])
	}
	if strings.Count(got, "\n") != 4 { // two starts, two ends: the status never adds lines
		t.Errorf("%d lines in %q; want 4", strings.Count(got, "\n"), got)
	}
}

func TestElapsed(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		0: "0 s", 40*time.Second + 400*time.Millisecond: "40 s", 59*time.Second + 600*time.Millisecond: "1 min 00 s",
		3*time.Minute + 5*time.Second: "3 min 05 s",
	} {
		if got := elapsed(d); got != want {
			t.Errorf("elapsed(%s) = %q, want %q", d, got, want)
		}
	}
}

func TestToolLabelNamesThePinnedVersion(t *testing.T) {
	t.Parallel()
	root, err := CheckoutRoot()
	if err != nil {
		t.Fatal(err)
	}
	if got := TemporalTool.label(filepath.Join(root, "dev", "tools", "temporal")); !regexp.MustCompile(`^Temporal CLI v\d+\.\d+\.\d+`).MatchString(got) {
		t.Errorf("Temporal label %q", got)
	}
	if got := MinIOTool.label(filepath.Join(root, "dev", "tools", "minio")); !regexp.MustCompile(`^MinIO v0\.0\.0-\d{14}-[0-9a-f]{12}$`).MatchString(got) {
		t.Errorf("MinIO label %q", got)
	}
	if got := HelmTool.label(filepath.Join(root, "dev", "tools", "helm")); !regexp.MustCompile(`^Helm v3\.\d+\.\d+$`).MatchString(got) {
		t.Errorf("Helm label %q", got)
	}
	if got := KubeconformTool.label(filepath.Join(root, "dev", "tools", "kubeconform")); !regexp.MustCompile(`^kubeconform v\d+\.\d+\.\d+$`).MatchString(got) {
		t.Errorf("kubeconform label %q", got)
	}
	if got := pinnedVersion(filepath.Join(root, "dev", "tools", "kubernetes-schemas", "go.mod"), kubernetesModule); !regexp.MustCompile(`^v1\.\d+\.\d+$`).MatchString(got) {
		t.Errorf("the pinned Kubernetes release is %q; the chart check renders for it (--kube-version)", got)
	}
	dir := t.TempDir()
	writeModule(t, dir, "module x\n\nrequire (\n\texample.com/a v1.0.0\n\texample.com/a/b v2.1.0 // indirect\n)\n", "")
	tool := Tool{Name: "b", Package: "example.com/a/b/cmd/b"}
	if got := tool.label(dir); got != "b v2.1.0" {
		t.Errorf("label = %q; want the longest module path's version", got)
	}
}
