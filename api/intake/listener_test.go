package intake

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// accepting runs l's accept loop, sending every connection it hands out on
// the returned channel; the test closes them.
func accepting(t *testing.T, l *Listener) <-chan net.Conn {
	t.Helper()
	out := make(chan net.Conn, 64)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(out)
				return
			}
			out <- c
		}
	}()
	t.Cleanup(func() { _ = l.Close() })
	return out
}

func limited(t *testing.T, limits Limits) (*Listener, <-chan net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewListener(ln, limits, quiet())
	if err != nil {
		t.Fatal(err)
	}
	return l, accepting(t, l)
}

// dialFrom opens a connection to l from the loopback address from (Linux
// routes all of 127/8 to lo, so each is another client address).
func dialFrom(t *testing.T, l net.Listener, from string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatalf("dial from %s: %v", from, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// answer is the status line the listener wrote to c before closing it, or
// "" when it wrote nothing within a moment (the connection was handed out).
func answer(t *testing.T, c net.Conn) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	line, err := bufio.NewReader(c).ReadString('\n')
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() && line == "" {
		return ""
	}
	return strings.TrimSpace(line)
}

func handedOut(t *testing.T, conns <-chan net.Conn) net.Conn {
	t.Helper()
	select {
	case c := <-conns:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("no connection handed out")
		return nil
	}
}

func TestListenerLimitsConnectionsPerAddress(t *testing.T) {
	t.Parallel()
	l, conns := limited(t, Limits{Max: 10, PerAddress: 2})
	var served []net.Conn
	for range 2 {
		if a := answer(t, dialFrom(t, l, "127.0.0.2")); a != "" {
			t.Fatalf("connection within the per-address limit answered %q", a)
		}
		served = append(served, handedOut(t, conns))
	}
	if a := answer(t, dialFrom(t, l, "127.0.0.2")); a != "HTTP/1.1 429 Too Many Requests" {
		t.Errorf("third connection from one address answered %q, want a 429", a)
	}
	if a := answer(t, dialFrom(t, l, "127.0.0.3")); a != "" {
		t.Errorf("another address's first connection answered %q", a)
	}
	handedOut(t, conns)
	// A closed connection gives its slot back, once however often closed.
	_ = served[0].Close()
	_ = served[0].Close()
	if a := answer(t, dialFrom(t, l, "127.0.0.2")); a != "" {
		t.Errorf("a connection after one closed answered %q", a)
	}
	handedOut(t, conns)
	if a := answer(t, dialFrom(t, l, "127.0.0.2")); a != "HTTP/1.1 429 Too Many Requests" {
		t.Errorf("over the limit again answered %q, want a 429", a)
	}
	if n := l.Open(); n != 3 {
		t.Errorf("Open() = %d, want 3", n)
	}
}

func TestListenerLimitsConnectionsInTotal(t *testing.T) {
	t.Parallel()
	l, conns := limited(t, Limits{Max: 3, PerAddress: 3})
	var served []net.Conn
	for _, from := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"} {
		if a := answer(t, dialFrom(t, l, from)); a != "" {
			t.Fatalf("connection within the limit answered %q", a)
		}
		served = append(served, handedOut(t, conns))
	}
	if a := answer(t, dialFrom(t, l, "127.0.0.5")); a != "HTTP/1.1 503 Service Unavailable" {
		t.Errorf("connection over the total answered %q, want a 503", a)
	}
	_ = served[1].Close()
	if a := answer(t, dialFrom(t, l, "127.0.0.5")); a != "" {
		t.Errorf("connection after one closed answered %q", a)
	}
	handedOut(t, conns)
}

// A trusted proxy carries many clients' connections: the per-address limit
// skips it, the total does not.
func TestListenerExemptsTrustedProxies(t *testing.T) {
	t.Parallel()
	l, conns := limited(t, Limits{Max: 4, PerAddress: 1, Exempt: []string{"127.0.0.2", "127.0.1.0/24"}})
	for _, from := range []string{"127.0.0.2", "127.0.0.2", "127.0.1.7", "127.0.1.7"} {
		if a := answer(t, dialFrom(t, l, from)); a != "" {
			t.Fatalf("connection from the proxy %s answered %q", from, a)
		}
		handedOut(t, conns)
	}
	if a := answer(t, dialFrom(t, l, "127.0.0.2")); a != "HTTP/1.1 503 Service Unavailable" {
		t.Errorf("the proxy's connection over the total answered %q, want a 503", a)
	}
}

func TestListenerCountsAnIPv6ClientByItsSlash64(t *testing.T) {
	t.Parallel()
	l, err := NewListener(nil, Limits{Max: 1, PerAddress: 1, Exempt: []string{"2001:db8:1::/48"}}, quiet())
	if err != nil {
		t.Fatal(err)
	}
	key := func(ip string) string {
		k, limited := l.addressOf(&net.TCPAddr{IP: net.ParseIP(ip)})
		if !limited {
			return "exempt"
		}
		return k.String()
	}
	if a, b := key("2001:db8::1"), key("2001:db8::ffff:1"); a != b || a != "2001:db8::" {
		t.Errorf("two addresses of one /64 count as %s and %s, want both 2001:db8::", a, b)
	}
	if a := key("2001:db8:0:1::1"); a == key("2001:db8::1") {
		t.Errorf("another /64 counts as the first: %s", a)
	}
	if a := key("::ffff:192.0.2.1"); a != "192.0.2.1" {
		t.Errorf("an IPv4-mapped address counts as %s, want 192.0.2.1", a)
	}
	if a := key("2001:db8:1:2::3"); a != "exempt" {
		t.Errorf("an address of an exempt prefix counts as %s", a)
	}
	if _, err := NewListener(nil, Limits{Max: 1, PerAddress: 1, Exempt: []string{"proxy.internal"}}, quiet()); err == nil {
		t.Error("a host name as an exempt address was accepted")
	}
}

// script is a net.Listener whose Accept answers the errors it is given,
// then its connections, then net.ErrClosed.
type script struct {
	mu    sync.Mutex
	errs  []error
	conns []net.Conn
}

func (s *script) Accept() (net.Conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.errs) > 0 {
		err := s.errs[0]
		s.errs = s.errs[1:]
		return nil, err
	}
	if len(s.conns) > 0 {
		c := s.conns[0]
		s.conns = s.conns[1:]
		return c, nil
	}
	return nil, net.ErrClosed
}
func (s *script) Close() error   { return nil }
func (s *script) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// acceptError is what Accept returns when the process is out of
// descriptors: the same shape as the net package's.
func acceptError(errno syscall.Errno) error {
	return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", errno)}
}

// fasthttp's Serve returns on an accept error, so `pressroom serve` used to
// exit when it ran out of descriptors. The listener waits instead, longer
// each time, and accepts again.
func TestListenerKeepsAcceptingThroughDescriptorExhaustion(t *testing.T) {
	t.Parallel()
	server, client := net.Pipe()
	defer client.Close()
	errs := []error{acceptError(syscall.EMFILE), acceptError(syscall.EMFILE), acceptError(syscall.ENFILE),
		acceptError(syscall.EMFILE), acceptError(syscall.ENOBUFS), acceptError(syscall.ENOMEM)}
	s := &script{errs: errs, conns: []net.Conn{server}}
	l, err := NewListener(s, Limits{Max: 1, PerAddress: 1}, quiet())
	if err != nil {
		t.Fatal(err)
	}
	var slept []time.Duration
	l.sleep = func(d time.Duration) { slept = append(slept, d) }
	c, err := l.Accept()
	if err != nil {
		t.Fatalf("Accept after %d failures = %v, want the connection", len(errs), err)
	}
	want := []time.Duration{5, 10, 20, 40, 80, 160}
	if len(slept) != len(want) {
		t.Fatalf("waited %v, want %v ms", slept, want)
	}
	for i, d := range want {
		if slept[i] != d*time.Millisecond {
			t.Errorf("wait %d = %v, want %v", i, slept[i], d*time.Millisecond)
		}
	}
	_ = c.Close()
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept on a closed listener = %v, want net.ErrClosed, which ends Serve", err)
	}
}

func TestListenerWaitsAtMostASecond(t *testing.T) {
	t.Parallel()
	errs := make([]error, 12)
	for i := range errs {
		errs[i] = acceptError(syscall.EMFILE)
	}
	l, err := NewListener(&script{errs: errs}, Limits{Max: 1, PerAddress: 1}, quiet())
	if err != nil {
		t.Fatal(err)
	}
	var longest time.Duration
	l.sleep = func(d time.Duration) { longest = max(longest, d) }
	_, _ = l.Accept()
	if longest != time.Second {
		t.Errorf("longest wait %v, want 1s", longest)
	}
}

// A flood writes a warning a minute, counting what it left out.
func TestListenerWarnsOnceAMinute(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(lockedWriter{&b, &mu}, nil))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewListener(ln, Limits{Max: 10, PerAddress: 1}, log)
	if err != nil {
		t.Fatal(err)
	}
	conns := accepting(t, l)
	dialFrom(t, l, "127.0.0.2")
	handedOut(t, conns)
	for range 5 {
		if a := answer(t, dialFrom(t, l, "127.0.0.2")); a == "" {
			t.Fatal("connection over the limit was handed out")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if n := strings.Count(b.String(), "PRESSROOM_MAX_CONNS_PER_IP"); n != 1 {
		t.Errorf("%d warnings for 5 refusals within a minute, want 1:\n%s", n, b.String())
	}
}

type lockedWriter struct {
	b  *strings.Builder
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
