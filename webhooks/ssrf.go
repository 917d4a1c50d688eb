package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// ErrNotPublic is the refusal of an address that is not public: loopback,
// private, link-local (cloud metadata at 169.254.169.254 among them),
// shared, multicast or unspecified.
var ErrNotPublic = errors.New("the address is not public")

// blocked are ranges the netip predicates do not cover.
var blocked = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),         // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),     // shared (carrier-grade NAT)
	netip.MustParsePrefix("192.0.0.0/24"),      // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),     // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),       // reserved, broadcast
	netip.MustParsePrefix("64:ff9b::/96"),      // NAT64: would reach any IPv4 address
	netip.MustParsePrefix("64:ff9b:1::/48"),    // local-use NAT64
	netip.MustParsePrefix("2001:db8::/32"),     // documentation
	netip.MustParsePrefix("fd00:ec2::254/128"), // AWS metadata over IPv6 (ULA: covered, named for the reader)
}

// Public tells whether a is an address webhooks may reach by default.
func Public(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	for _, p := range blocked {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// ParseURL reads a webhook URL and checks its form, without I/O: http or
// https, a host, no credentials, no fragment.
func ParseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.Opaque != "" {
		return nil, errors.New("must be an absolute http or https URL")
	}
	if u.User != nil {
		return nil, errors.New("must not hold credentials (user:password@); authenticate the request with its signature")
	}
	if u.Fragment != "" {
		return nil, errors.New("must not have a fragment")
	}
	return u, nil
}

// CheckURL checks a webhook URL as it is saved: its form (ParseURL), and
// (unless allowPrivate) a host that resolves to public addresses only. The
// worker checks again on every connection (Dialer), so a name that later
// resolves elsewhere (DNS rebinding) is refused there.
func CheckURL(ctx context.Context, raw string, allowPrivate bool) error {
	u, err := ParseURL(raw)
	if err != nil {
		return err
	}
	if allowPrivate {
		return nil
	}
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		if !Public(a) {
			return fmt.Errorf("%s: %w", host, ErrNotPublic)
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return fmt.Errorf("the host %s does not resolve", host)
	}
	for _, a := range addrs {
		if !Public(a) {
			return fmt.Errorf("%s resolves to %s: %w", host, a.Unmap(), ErrNotPublic)
		}
	}
	return nil
}

// control refuses, at connect time, a connection to an address that is not
// public: it runs after name resolution, for every address tried, so it
// sees what the name resolves to now, not when the webhook was saved.
func control(network, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("refused connection to %q: %w", address, ErrNotPublic)
	}
	a, err := netip.ParseAddr(host)
	if err != nil || !Public(a) {
		return fmt.Errorf("refused connection to %s: %w", host, ErrNotPublic)
	}
	return nil
}

// Timeout bounds one delivery attempt, connection and response included.
const Timeout = 10 * time.Second

// MaxResponse is how much of a response body is read at most; StoredResponse
// how much of it is kept with the delivery.
const (
	MaxResponse    = 64 << 10
	StoredResponse = 1 << 10
)

// Client is the HTTP client of deliveries: a 10 s time limit, no proxy
// from the environment (it would connect on the guard's behalf), redirects
// not followed (a 3xx is an answer like any other non-2xx), and unless
// allowPrivate a dialer that refuses addresses that are not public.
func Client(allowPrivate bool) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		d.Control = control
	}
	return &http.Client{
		Timeout: Timeout,
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           d.DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          100,
			MaxIdleConnsPerHost:   8,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   5 * time.Second,
			ResponseHeaderTimeout: Timeout,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
