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

// ErrNotPublic is the refusal of an address that is not globally
// reachable: loopback, private, link-local (cloud metadata at
// 169.254.169.254 among them), shared, documentation, benchmarking,
// multicast, unspecified, or an IPv6 address that carries or reaches an
// IPv4 one (IPv4-compatible, NAT64, 6to4, Teredo).
var ErrNotPublic = errors.New("the address is not public")

// notGlobal4 are the IPv4 ranges a webhook may not reach: every entry of
// IANA's "IPv4 Special-Purpose Address Registry"
// (https://www.iana.org/assignments/iana-ipv4-special-registry/, as of
// 2025) whose "Globally Reachable" column is False or N/A, and multicast.
// Blocks marked True inside 192.0.0.0/24 (two anycast /32s) are refused
// with it: no webhook receiver lives there.
var notGlobal4 = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),          // "this network" (RFC 791), 0.0.0.0/32 "this host" among it
	netip.MustParsePrefix("10.0.0.0/8"),         // private use (RFC 1918)
	netip.MustParsePrefix("100.64.0.0/10"),      // shared address space, carrier-grade NAT (RFC 6598)
	netip.MustParsePrefix("127.0.0.0/8"),        // loopback (RFC 1122)
	netip.MustParsePrefix("169.254.0.0/16"),     // link local, cloud metadata (RFC 3927)
	netip.MustParsePrefix("172.16.0.0/12"),      // private use (RFC 1918)
	netip.MustParsePrefix("192.0.0.0/24"),       // IETF protocol assignments: DS-Lite, dummy, NAT64 discovery (RFC 6890)
	netip.MustParsePrefix("192.0.2.0/24"),       // documentation, TEST-NET-1 (RFC 5737)
	netip.MustParsePrefix("192.88.99.0/24"),     // deprecated 6to4 relay anycast (RFC 7526)
	netip.MustParsePrefix("192.168.0.0/16"),     // private use (RFC 1918)
	netip.MustParsePrefix("198.18.0.0/15"),      // benchmarking (RFC 2544)
	netip.MustParsePrefix("198.51.100.0/24"),    // documentation, TEST-NET-2 (RFC 5737)
	netip.MustParsePrefix("203.0.113.0/24"),     // documentation, TEST-NET-3 (RFC 5737)
	netip.MustParsePrefix("224.0.0.0/4"),        // multicast (IANA IPv4 address space registry)
	netip.MustParsePrefix("240.0.0.0/4"),        // reserved (RFC 1112)
	netip.MustParsePrefix("255.255.255.255/32"), // limited broadcast (RFC 919), inside 240.0.0.0/4, named for the reader
}

// global6 is the only IPv6 space a webhook may reach: "Global Unicast" in
// IANA's "Internet Protocol Version 6 Address Space" registry
// (https://www.iana.org/assignments/ipv6-address-space/). Everything else
// is reserved, local or multicast: ::/8 with loopback, unspecified,
// IPv4-mapped, IPv4-compatible (::127.0.0.1) and NAT64 (64:ff9b::/96),
// 100::/64 discard, 5f00::/16 SRv6, fc00::/7 unique local, fe80::/10 link
// local, fec0::/10 the deprecated site local, ff00::/8 multicast.
var global6 = netip.MustParsePrefix("2000::/3")

// notGlobal6 are the IPv6 ranges a webhook may not reach: the entries of
// IANA's "IPv6 Special-Purpose Address Registry"
// (https://www.iana.org/assignments/iana-ipv6-special-registry/, as of
// 2025) whose "Globally Reachable" column is False or N/A, and those that
// carry an IPv4 address, which Pressroom refuses rather than unwraps: a
// relay or translator would carry the connection to an IPv4 address the
// guard never judged. The entries outside global6 are refused by it
// already; they are listed so the table reads as the registry does.
var notGlobal6 = []netip.Prefix{
	netip.MustParsePrefix("::/128"),         // unspecified (RFC 4291)
	netip.MustParsePrefix("::1/128"),        // loopback (RFC 4291)
	netip.MustParsePrefix("::ffff:0:0/96"),  // IPv4-mapped (RFC 4291); Public judges the IPv4 address instead
	netip.MustParsePrefix("::/96"),          // IPv4-compatible, deprecated (RFC 4291): ::127.0.0.1
	netip.MustParsePrefix("64:ff9b::/96"),   // NAT64 well-known prefix (RFC 6052): would reach any IPv4 address
	netip.MustParsePrefix("64:ff9b:1::/48"), // NAT64 local use (RFC 8215)
	netip.MustParsePrefix("100::/64"),       // discard only (RFC 6666)
	netip.MustParsePrefix("100:0:0:1::/64"), // dummy prefix (RFC 9780)
	netip.MustParsePrefix("2001::/23"),      // IETF protocol assignments (RFC 2928): Teredo, benchmarking, ORCHID, anycast services
	netip.MustParsePrefix("2001::/32"),      // Teredo (RFC 4380): carries an IPv4 address; inside 2001::/23, named for the reader
	netip.MustParsePrefix("2001:2::/48"),    // benchmarking (RFC 5180), inside 2001::/23
	netip.MustParsePrefix("2001:db8::/32"),  // documentation (RFC 3849)
	netip.MustParsePrefix("2002::/16"),      // 6to4 (RFC 3056): carries an IPv4 address
	netip.MustParsePrefix("3fff::/20"),      // documentation (RFC 9637)
	netip.MustParsePrefix("5f00::/16"),      // segment routing SIDs (RFC 9602)
	netip.MustParsePrefix("fc00::/7"),       // unique local (RFC 4193); AWS metadata fd00:ec2::254 among it
	netip.MustParsePrefix("fe80::/10"),      // link-local unicast (RFC 4291)
	netip.MustParsePrefix("fec0::/10"),      // site local, deprecated (RFC 3879)
	netip.MustParsePrefix("ff00::/8"),       // multicast (RFC 4291)
}

// Public tells whether a is an address webhooks may reach by default: a
// globally reachable unicast address. An IPv4-mapped address
// (::ffff:a.b.c.d) is judged as the IPv4 address it is, because that is how
// Go's resolver hands back IPv4 answers; every other IPv6 form of an IPv4
// address is refused. So is an address with a zone (fe80::1%eth0), which
// names an interface, not a host on the Internet.
func Public(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.Zone() != "" || !a.IsGlobalUnicast() || a.IsPrivate() || a.IsLoopback() ||
		a.IsLinkLocalUnicast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	table := notGlobal4
	if a.Is6() {
		if !global6.Contains(a) {
			return false
		}
		table = notGlobal6
	}
	for _, p := range table {
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
