package dev_test

import (
	"context"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/pressroom/pressroom/dev"
	"github.com/pressroom/pressroom/storage"
	"github.com/pressroom/pressroom/testsupport"
)

// TestStack brings up the stack as `make test` does (free ports, a
// temporary state directory, the cached tool binaries), checks each service
// is set up as Pressroom needs, and takes it down again.
func TestStack(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	root := testsupport.RepoRoot(t)
	// 0755, not t.TempDir(): a private cluster under it runs as the postgres
	// user when we are root.
	state, err := os.MkdirTemp("", "pressroom-stacktest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(state) })
	if err := os.Chmod(state, 0o755); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	s, err := dev.Up(ctx, dev.StackOptions{
		RepoRoot:    root,
		StateDir:    state,
		DatabaseURL: os.Getenv(dev.EnvTestPostgres), // "" under plain go test: the local server
		Database:    "pressroom",
		Log:         testWriter{t},
	})
	if err != nil {
		t.Fatalf("Up: %v (service logs in %s)", err, filepath.Join(state, "logs"))
	}
	down := false
	t.Cleanup(func() {
		if !down {
			_ = s.Down()
		}
	})
	t.Logf("stack up in %s: postgres from %s, temporal %s, minio %s",
		time.Since(start).Round(time.Millisecond), s.Postgres.Source, s.TemporalAddress, s.S3Endpoint)

	t.Run("temporal", func(t *testing.T) {
		c, err := client.Dial(client.Options{HostPort: s.TemporalAddress, Namespace: "default"})
		if err != nil {
			t.Fatalf("dial Temporal at %s: %v", s.TemporalAddress, err)
		}
		defer c.Close()
		if _, err := c.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
			t.Fatalf("Temporal health check: %v", err)
		}
		resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: "default"})
		if err != nil {
			t.Fatalf("list search attributes: %v", err)
		}
		custom := resp.GetCustomAttributes()
		for _, name := range []string{"PressroomSiteId", "PressroomUploadId", "PressroomRevisionId", "PressroomReleaseId", "PressroomOutcome"} {
			got, ok := custom[name]
			if !ok {
				t.Errorf("search attribute %s is not registered (custom attributes: %v)", name, custom)
			} else if got != enums.INDEXED_VALUE_TYPE_KEYWORD {
				t.Errorf("search attribute %s is %s, want Keyword", name, got)
			}
		}
		if got := custom["PressroomPublishAt"]; got != enums.INDEXED_VALUE_TYPE_DATETIME {
			t.Errorf("search attribute PressroomPublishAt is %s, want Datetime", got)
		}
	})

	t.Run("minio", func(t *testing.T) {
		mc, err := storage.NewClient(s.Storage)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range []string{s.Storage.UploadsBucket, s.Storage.AssetsBucket} {
			ok, err := mc.BucketExists(ctx, b)
			if err != nil || !ok {
				t.Errorf("bucket %s exists = %v, %v; want true", b, ok, err)
			}
		}
		lc, err := mc.GetBucketLifecycle(ctx, s.Storage.UploadsBucket)
		if err != nil {
			t.Fatalf("lifecycle of %s: %v", s.Storage.UploadsBucket, err)
		}
		expires := false
		for _, r := range lc.Rules {
			if r.Status == "Enabled" && int(r.Expiration.Days) == 1 && r.RuleFilter.Prefix == "" {
				expires = true
			}
		}
		if !expires {
			t.Errorf("bucket %s has no enabled rule expiring every object after 1 day: %+v", s.Storage.UploadsBucket, lc.Rules)
		}
	})

	procs := s.Processes()
	if len(procs) != 2 {
		t.Errorf("the stack started %d processes, want 2 (temporal and minio)", len(procs))
	}
	ports := []string{hostPort(t, s.TemporalAddress), hostPort(t, s.S3Endpoint), hostPort(t, s.MinIOConsole)}
	down = true
	if err := s.Down(); err != nil {
		t.Errorf("Down: %v", err)
	}
	for _, p := range procs {
		select {
		case <-p.Exited():
		default:
			t.Errorf("%s (pid %d) still runs after Down", p.Name, p.Pid())
		}
	}
	for _, port := range ports {
		if !portFreed(port, 5*time.Second) {
			t.Errorf("port %s still in use after Down", port)
		}
	}
}

// hostPort returns the port of "host:port" or of a URL.
func hostPort(t *testing.T, addr string) string {
	t.Helper()
	if u, err := url.Parse(addr); err == nil && u.Host != "" {
		addr = u.Host
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("no port in %q: %v", addr, err)
	}
	return port
}

// portFreed waits up to timeout for port on 127.0.0.1 to be free.
func portFreed(port string, timeout time.Duration) bool {
	n, err := strconv.Atoi(port)
	if err != nil {
		return false
	}
	for deadline := time.Now().Add(timeout); ; {
		if dev.PortFree(n) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// testWriter sends the stack's progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}
