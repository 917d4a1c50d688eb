package dev

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// PrivateCluster is a PostgreSQL cluster of one test's own, which the test
// may stop and start again (on the same port and data) to see what the
// service does while its database is away. The shared test server is never
// stopped: other tests use it.
type PrivateCluster struct {
	// ServerURL connects to the maintenance database.
	ServerURL string
	binDir    string
	dataDir   string
	opts      string
	cred      *syscall.Credential
	log       io.Writer
}

// StartPrivateCluster initialises a cluster in dataDir (which must not
// hold one yet) with the installed initdb and pg_ctl, and starts it.
func StartPrivateCluster(ctx context.Context, dataDir string, log io.Writer) (*PrivateCluster, error) {
	bin, err := findPostgresBinaries()
	if err != nil {
		return nil, fmt.Errorf("no initdb/pg_ctl installed: %w", err)
	}
	serverURL, _, err := startPrivateCluster(ctx, bin, dataDir, log)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(serverURL)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, err
	}
	cred, err := serverCredential(filepath.Dir(abs))
	if err != nil {
		return nil, err
	}
	return &PrivateCluster{ServerURL: serverURL, binDir: bin, dataDir: abs, cred: cred, log: log,
		opts: fmt.Sprintf("-p %s -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c fsync=off", u.Port())}, nil
}

func (c *PrivateCluster) pgCtl(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(c.binDir, "pg_ctl"), append([]string{"-D", c.dataDir}, args...)...)
	cmd.Stdout, cmd.Stderr = c.log, c.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("pg_ctl %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

// Stop stops the server; mode is "fast" (disconnect clients, clean
// shutdown) or "immediate" (like a crash: recovery runs at the next start).
func (c *PrivateCluster) Stop(ctx context.Context, mode string) error {
	return c.pgCtl(ctx, "-m", mode, "-w", "stop")
}

// Start starts the stopped server on the same port.
func (c *PrivateCluster) Start(ctx context.Context) error {
	return c.pgCtl(ctx, "-l", filepath.Join(c.dataDir, "server.log"), "-w", "-t", "60", "-o", c.opts, "start")
}
