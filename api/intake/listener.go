// Package intake bounds what a client can make the API hold before its
// request is known to be worth serving: connections (Listener: in total and
// per address, and accepting on through descriptor exhaustion) and request
// bodies (Read, ReadBody: read only once the route and its caller are known,
// at most a limit, within a deadline). docs/security.md, "Floods".
package intake

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"
)

// Limits bound the connections a Listener hands out.
type Limits struct {
	// Max is the most connections open at once; one more is answered 503
	// and closed at once.
	Max int
	// PerAddress is the most connections open at once from one client
	// address (an IPv6 client: its /64, which one host usually holds whole);
	// one more is answered 429 and closed at once.
	PerAddress int
	// Exempt are addresses and CIDRs (trusted reverse proxies) that the
	// per-address limit skips: their connections carry many clients. Max
	// still counts them.
	Exempt []string
}

// Listener hands out the connections of the listener it wraps within
// Limits, and keeps accepting when accepting fails for want of descriptors
// or memory: fasthttp's Serve returns on any accept error but a timeout,
// which used to end `pressroom serve` under a connection flood.
type Listener struct {
	net.Listener
	limits Limits
	exempt []netip.Prefix
	log    *slog.Logger
	// sleep waits between failed accepts; tests replace it.
	sleep func(time.Duration)

	mu     sync.Mutex
	open   int
	byAddr map[netip.Addr]int
	warned map[string]*warning
}

// warning is when a kind of warning was last logged, and how many of its
// events have happened since: a flood writes a line a minute, not one per
// refused connection.
type warning struct {
	last   time.Time
	missed int
}

// warnEvery is how often one kind of warning is logged at most.
const warnEvery = time.Minute

// NewListener wraps ln. An Exempt entry that is neither an address nor a
// CIDR is an error (config.FromEnv refuses them first).
func NewListener(ln net.Listener, limits Limits, log *slog.Logger) (*Listener, error) {
	if limits.Max < 1 || limits.PerAddress < 1 {
		return nil, fmt.Errorf("intake: connection limits must be positive (max %d, per address %d)", limits.Max, limits.PerAddress)
	}
	l := &Listener{Listener: ln, limits: limits, log: log, sleep: time.Sleep,
		byAddr: map[netip.Addr]int{}, warned: map[string]*warning{}}
	for _, e := range limits.Exempt {
		p, err := netip.ParsePrefix(e)
		if err != nil {
			a, aerr := netip.ParseAddr(e)
			if aerr != nil {
				return nil, fmt.Errorf("intake: exempt address %q is neither an address nor a CIDR", e)
			}
			p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		l.exempt = append(l.exempt, p.Masked())
	}
	return l, nil
}

// Accept returns the next connection within the limits. Connections over a
// limit are answered and closed here, never handed out. A failure to
// accept for want of descriptors, buffers or memory is waited out (5 ms,
// doubling to 1 s, as net/http does) while the connections already open
// finish and free theirs; the pending connections wait in the kernel's
// backlog meanwhile.
func (l *Listener) Accept() (net.Conn, error) {
	var delay time.Duration
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if !retryable(err) {
				return nil, err
			}
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			l.warn("accept", "accepting connections failed; retrying", "error", err.Error(), "retry_in", delay.String())
			l.sleep(delay)
			continue
		}
		delay = 0
		if admitted := l.admit(c); admitted != nil {
			return admitted, nil
		}
	}
}

// retryable tells whether an accept error is the machine's passing state
// (descriptors, buffers, memory) rather than the listener's end.
func retryable(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
		syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EINTR, syscall.EAGAIN} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// refusal is what a connection over a limit is answered before it is
// closed. The socket is new, so the short write never waits.
type refusal struct {
	answer []byte
	kind   string // of the warning logged
	msg    string
}

func newRefusal(status, text, kind, msg string) refusal {
	body := text + "\n"
	return refusal{kind: kind, msg: msg, answer: fmt.Appendf(nil,
		"HTTP/1.1 %s\r\nConnection: close\r\nRetry-After: 1\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s",
		status, len(body), body)}
}

var (
	tooMany        = newRefusal("503 Service Unavailable", "Too many open connections", "total", "refused connections over PRESSROOM_MAX_CONNS")
	tooManyFromYou = newRefusal("429 Too Many Requests", "Too many open connections from your address", "address", "refused connections over PRESSROOM_MAX_CONNS_PER_IP")
)

// admit counts c in, or answers, closes and logs it (nil) when a limit is
// reached.
func (l *Listener) admit(c net.Conn) net.Conn {
	key, perAddress := l.addressOf(c.RemoteAddr())
	l.mu.Lock()
	var r *refusal
	switch {
	case l.open >= l.limits.Max:
		r = &tooMany
	case perAddress && l.byAddr[key] >= l.limits.PerAddress:
		r = &tooManyFromYou
	default:
		l.open++
		if perAddress {
			l.byAddr[key]++
		}
	}
	l.mu.Unlock()
	if r == nil {
		return &conn{Conn: c, release: func() { l.release(key, perAddress) }}
	}
	_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	_, _ = c.Write(r.answer)
	_ = c.Close()
	if r == &tooManyFromYou {
		l.warn(r.kind, r.msg, "address", key.String(), "limit", l.limits.PerAddress)
	} else {
		l.warn(r.kind, r.msg, "limit", l.limits.Max)
	}
	return nil
}

func (l *Listener) release(key netip.Addr, perAddress bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if perAddress {
		if l.byAddr[key]--; l.byAddr[key] <= 0 {
			delete(l.byAddr, key)
		}
	}
}

// addressOf is the key the per-address limit counts a client under, and
// whether the limit applies to it at all (not to exempt proxies, nor to
// anything but TCP).
func (l *Listener) addressOf(a net.Addr) (netip.Addr, bool) {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return netip.Addr{}, false
	}
	ip := ta.AddrPort().Addr().Unmap()
	for _, p := range l.exempt {
		if p.Contains(ip) {
			return netip.Addr{}, false
		}
	}
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		ip = p.Addr()
	}
	return ip, true
}

// Open is the number of connections handed out and not yet closed.
func (l *Listener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// warn logs msg at most once a minute per kind, with how many times it
// happened since the last line.
func (l *Listener) warn(kind, msg string, args ...any) {
	l.mu.Lock()
	w := l.warned[kind]
	if w == nil {
		w = &warning{}
		l.warned[kind] = w
	}
	w.missed++
	if time.Since(w.last) < warnEvery {
		l.mu.Unlock()
		return
	}
	n := w.missed
	w.last, w.missed = time.Now(), 0
	l.mu.Unlock()
	l.log.Warn(msg, append(args, "times", n)...)
}

// conn gives its slot back when closed (once, however often Close is called).
type conn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
