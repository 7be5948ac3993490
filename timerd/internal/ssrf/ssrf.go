// Package ssrf decides which callback destinations timerd may call. timerd
// makes requests on others' behalf, so by default it refuses any address a
// caller could not reach from outside: loopback, link-local (cloud metadata
// at 169.254.169.254 among them), private (RFC 1918, fc00::/7), unspecified,
// multicast, broadcast, CGNAT (100.64.0.0/10), the other special-purpose
// ranges of ranges.go, and the IPv6 forms that carry any of these IPv4
// addresses (IPv4-mapped, IPv4-compatible, NAT64, 6to4). An allowlist of
// CIDRs or host:port pairs lets an operator name exceptions.
//
// The check runs twice: at create time on the URL (an IP literal, or every
// address its host name resolves to), for a clear 400 that names the field;
// and at every dial of the delivery client (net.Dialer.Control), on the
// address actually connected, so a name that resolves elsewhere later (DNS
// rebinding) is refused too.
package ssrf

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// ErrForbidden is wrapped, with the address and the range it fell in, by
// the errors of a destination the Guard refuses.
var ErrForbidden = errors.New("ssrf: destination not allowed")

// ErrUnresolved is wrapped by CheckURL's error for a host name that does not
// resolve now (no such host, no address, the resolver failing or timing
// out): no address was checked, so nothing was refused. The dial-time check
// still applies to whatever the name resolves to when it is called.
var ErrUnresolved = errors.New("ssrf: host name does not resolve")

// ErrAllow is wrapped by New's error for an allowlist entry that is neither
// a CIDR nor host:port.
var ErrAllow = errors.New("ssrf: bad allowlist entry")

// resolver is the part of net.Resolver CheckURL uses; tests give their own.
type resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Guard decides whether a destination may be called. It is safe for
// concurrent use and never changes after New.
type Guard struct {
	prefixes  []netip.Prefix      // allowed despite being in a denied range
	hostPorts map[string]struct{} // "host:port", host lower-case without a trailing dot
	resolver  resolver
}

// New returns a Guard that allows, besides every public address, the
// addresses in the CIDRs of allow ("10.1.0.0/16", "127.0.0.1/32",
// "fd00::/8") and the host:port pairs of allow ("hooks.internal:8443",
// "10.0.0.5:80"). A host:port entry names what the URL says: it allows that
// host name and port whatever the name resolves to, and does not allow the
// addresses behind it for other names. An entry that is neither is an error
// wrapping ErrAllow.
func New(allow []string) (*Guard, error) {
	g := &Guard{hostPorts: map[string]struct{}{}, resolver: net.DefaultResolver}
	for _, a := range allow {
		if strings.Contains(a, "/") {
			p, err := netip.ParsePrefix(a)
			if err != nil {
				return nil, fmt.Errorf("%w: %q: %v", ErrAllow, a, err)
			}
			g.prefixes = append(g.prefixes, p.Masked())
			continue
		}
		host, port, err := net.SplitHostPort(a)
		if n, perr := strconv.ParseUint(port, 10, 16); err != nil || perr != nil || n == 0 || host == "" {
			return nil, fmt.Errorf("%w: %q (want a CIDR such as 10.0.0.0/8 or host:port)", ErrAllow, a)
		}
		g.hostPorts[hostPort(host, port)] = struct{}{}
	}
	return g, nil
}

// hostPort is the allowlist's form of host and port: a name in lower case
// without its trailing dot, an IP address in its canonical form.
func hostPort(host, port string) string {
	if a, err := netip.ParseAddr(host); err == nil {
		host = a.Unmap().String()
	}
	return net.JoinHostPort(strings.TrimSuffix(strings.ToLower(host), "."), port)
}

// CheckURL reports whether u's destination may be called: nil if its
// host:port is allowlisted, or if its host is an IP address, or a name whose
// every address is, allowed. It returns an error wrapping ErrForbidden for
// a refused address, and one wrapping ErrUnresolved (and the resolver's
// error) for a name that does not resolve. u must be absolute, http or https.
func (g *Guard) CheckURL(ctx context.Context, u *url.URL) error {
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("ssrf: URL %q has no host", u.Redacted())
	}
	port := u.Port()
	if port == "" {
		switch u.Scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		default:
			return fmt.Errorf("ssrf: URL scheme %q is not http or https", u.Scheme)
		}
	}
	if g.allowedHostPort(net.JoinHostPort(host, port)) {
		return nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return g.checkAddr(a)
	}
	addrs, err := g.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("%w: resolve %q: %w", ErrUnresolved, host, err)
	}
	if len(addrs) == 0 {
		return fmt.Errorf("%w: %q resolves to no address", ErrUnresolved, host)
	}
	for _, a := range addrs {
		if err := g.checkAddr(a); err != nil {
			return fmt.Errorf("%w (%s resolves to it)", err, host)
		}
	}
	return nil
}

func (g *Guard) allowedHostPort(addr string) bool {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	_, ok := g.hostPorts[hostPort(host, port)]
	return ok
}

// checkAddr returns nil if a is in an allowlisted CIDR or in no denied
// range, else an error wrapping ErrForbidden.
func (g *Guard) checkAddr(a netip.Addr) error {
	a = a.WithZone("")
	for _, p := range g.prefixes {
		if p.Contains(a) || p.Contains(a.Unmap()) {
			return nil
		}
	}
	if why := denied(a); why != "" {
		return fmt.Errorf("%w: %s is %s", ErrForbidden, a, why)
	}
	return nil
}
