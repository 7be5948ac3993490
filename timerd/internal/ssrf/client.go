package ssrf

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// Client returns an HTTP client whose every connection is checked: a dial
// to a host:port the allowlist names goes ahead; any other dial is refused,
// after the name is resolved and before the connection is made, unless the
// address it is about to connect to is allowed (net.Dialer.Control sees the
// resolved address, so DNS rebinding gains nothing). A refused dial fails
// with an error wrapping ErrForbidden. The client uses no proxy, whatever
// the environment says: a proxy would make the connection, and the check,
// useless. It sets no timeout of its own; durable's HTTPHandler bounds
// each attempt.
func (g *Guard) Client() *http.Client {
	checked := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second, Control: g.control}
	trusted := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	return &http.Client{Transport: &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			// addr is the URL's host:port, before resolution: the form the
			// allowlist's host:port entries name.
			if g.allowedHostPort(addr) {
				return trusted.DialContext(ctx, network, addr)
			}
			return checked.DialContext(ctx, network, addr)
		},
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}}
}

// dialTimeout bounds one connection attempt, as http.DefaultTransport does.
const dialTimeout = 30 * time.Second

// control runs after the name is resolved, before each connect: address is
// the IP and port about to be connected to.
func (g *Guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot parse dial address %q", ErrForbidden, address)
	}
	return g.checkAddr(ap.Addr())
}
