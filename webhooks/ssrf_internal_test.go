package webhooks

import (
	"net/netip"
	"testing"
)

// Every range of the tables is refused from its first address to its last.
func TestPublicRefusesEveryListedRange(t *testing.T) {
	for _, table := range [][]netip.Prefix{notGlobal4, notGlobal6} {
		for _, p := range table {
			first := p.Masked().Addr()
			last := lastAddr(p)
			for _, a := range []netip.Addr{first, first.Next(), last} {
				if a.IsValid() && Public(a) {
					t.Errorf("Public(%s) = true, inside %s", a, p)
				}
			}
		}
	}
}

// lastAddr is the highest address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}
