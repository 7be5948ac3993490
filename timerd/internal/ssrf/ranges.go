package ssrf

import (
	"net/netip"
)

// A deniedRange is a block of addresses no callback may reach unless the
// allowlist names it.
type deniedRange struct {
	prefix netip.Prefix
	why    string
}

// denied4 are the IPv4 ranges refused: every special-purpose block of the
// IANA registry (RFC 6890) that is not globally reachable, and the
// multicast and reserved blocks. Documentation ranges (192.0.2.0/24 and
// the like) are left out: they route nowhere.
var denied4 = ranges(
	"0.0.0.0/8", "unspecified (this network)",
	"10.0.0.0/8", "private (RFC 1918)",
	"100.64.0.0/10", "shared address space (CGNAT, RFC 6598)",
	"127.0.0.0/8", "loopback",
	"169.254.0.0/16", "link-local (cloud metadata among them)",
	"172.16.0.0/12", "private (RFC 1918)",
	"192.0.0.0/24", "IETF protocol assignments",
	"192.168.0.0/16", "private (RFC 1918)",
	"198.18.0.0/15", "benchmarking (RFC 2544)",
	"224.0.0.0/4", "multicast",
	"240.0.0.0/4", "reserved (255.255.255.255, broadcast, among them)",
)

// denied6 are the IPv6 ranges refused outright. ::/96 covers ::, ::1 and
// the deprecated IPv4-compatible form (::a.b.c.d), which some stacks still
// route to the IPv4 address. The forms that embed an IPv4 address in a way
// a network may honour (IPv4-mapped, NAT64, 6to4) are not here: embedded4
// takes the IPv4 address out and checks it, so a public one stays allowed.
var denied6 = ranges(
	"::/96", "unspecified, loopback or IPv4-compatible",
	"64:ff9b:1::/48", "local-use NAT64 (RFC 8215)",
	"100::/64", "discard-only (RFC 6666)",
	"fc00::/7", "unique local (private)",
	"fe80::/10", "link-local",
	"fec0::/10", "site-local (deprecated, private)",
	"ff00::/8", "multicast",
)

var (
	mapped = netip.MustParsePrefix("::ffff:0:0/96")
	nat64  = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4 = netip.MustParsePrefix("2002::/16")
)

func ranges(pairs ...string) []deniedRange {
	rs := make([]deniedRange, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		rs = append(rs, deniedRange{netip.MustParsePrefix(pairs[i]), pairs[i+1]})
	}
	return rs
}

// denied says why a (without zone) may not be called, or "" if it may.
func denied(a netip.Addr) string {
	if v4, form := embedded4(a); form != "" {
		if why := denied(v4); why != "" {
			return form + " of " + v4.String() + ", " + why
		}
		return ""
	}
	list := denied4
	if a.Is6() {
		list = denied6
	}
	for _, r := range list {
		if r.prefix.Contains(a) {
			return r.why
		}
	}
	return ""
}

// embedded4 returns the IPv4 address an IPv6 address carries, and the name
// of the form, when a network would deliver it to that IPv4 address:
// IPv4-mapped (::ffff:a.b.c.d), NAT64 with the well-known prefix
// (64:ff9b::a.b.c.d, RFC 6052) and 6to4 (2002:AABB:CCDD::/48, RFC 3056).
func embedded4(a netip.Addr) (netip.Addr, string) {
	if !a.Is6() {
		return netip.Addr{}, ""
	}
	b := a.As16()
	switch {
	case mapped.Contains(a):
		return a.Unmap(), "IPv4-mapped form"
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), "NAT64 form"
	case sixTo4.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), "6to4 form"
	}
	return netip.Addr{}, ""
}
