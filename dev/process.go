package dev

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// Process is a child server started by the stack. It runs in its own
// process group, so stopping it also stops anything it spawned.
type Process struct {
	Name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// StartProcess starts bin with args and extra env, writing its output to out.
func StartProcess(name, bin string, args, env []string, out io.Writer, cred *syscall.Credential) (*Process, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{Name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Exited is closed when the process ends.
func (p *Process) Exited() <-chan struct{} { return p.done }

// Err is the process's exit error once Exited is closed.
func (p *Process) Err() error { return p.err }

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Stop sends SIGTERM to the process group and SIGKILL after grace.
func (p *Process) Stop(grace time.Duration) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
		return fmt.Errorf("%s did not stop within %s; killed", p.Name, grace)
	}
}

// Kill sends SIGKILL to the process group at once (fault tests use it).
func (p *Process) Kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// WaitFor polls ready until it succeeds, the process exits, or timeout passes.
func (p *Process) WaitFor(ctx context.Context, timeout time.Duration, ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		if last = ready(ctx); last == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited before it was ready: %v (last check: %v)", p.Name, p.err, last)
		case <-ctx.Done():
			return fmt.Errorf("%s not ready within %s: %w", p.Name, timeout, last)
		case <-time.After(150 * time.Millisecond):
		}
	}
}

// FreePort finds an unused TCP port on 127.0.0.1.
//
// The port is drawn below the kernel's ephemeral range (Linux's default
// starts at 32768), from which the system picks the local ports of
// outgoing connections: a service the tests stop and start again on the
// same port (MinIO, Postgres, Temporal in the fault tests) could otherwise
// find it taken by any process's connection made during the outage.
func FreePort() (int, error) {
	for range 200 {
		port := freePortLow + rand.IntN(freePortHigh-freePortLow)
		if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			l.Close()
			return port, nil
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// FreePort draws from [freePortLow, freePortHigh).
const freePortLow, freePortHigh = 20000, 32000

// PortFree tells whether nothing listens on 127.0.0.1:port.
func PortFree(port int) bool {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// dialable reports whether addr accepts TCP connections.
func dialable(ctx context.Context, addr string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	return c.Close()
}

var errNotFound = errors.New("not found")
