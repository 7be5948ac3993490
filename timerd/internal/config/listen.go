package config

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"
)

// resolveTimeout bounds the lookup of a listen host name.
const resolveTimeout = 5 * time.Second

// lookupHost resolves listen host names; tests replace it.
var lookupHost = net.DefaultResolver.LookupNetIP

// checkListen checks that listen is host:port and that, without a token, it
// is loopback: an IP literal in 127.0.0.0/8 or ::1, or a name (localhost)
// whose every address is. An empty host and 0.0.0.0 or :: listen on every
// interface, so they are not loopback.
func checkListen(listen string, haveToken bool) error {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("config: -listen (TIMERD_LISTEN) %q: %w", listen, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("config: -listen (TIMERD_LISTEN) %q: port %q is not 0..65535", listen, port)
	}
	if haveToken {
		return nil
	}
	loop, err := loopback(host)
	if err != nil {
		return fmt.Errorf("config: -listen (TIMERD_LISTEN) %q: %w", listen, err)
	}
	if !loop {
		return fmt.Errorf("%w: -listen is %q", ErrNoToken, listen)
	}
	return nil
}

func loopback(host string) (bool, error) {
	if host == "" {
		return false, nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap().IsLoopback(), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), resolveTimeout)
	defer cancel()
	addrs, err := lookupHost(ctx, "ip", host)
	if err != nil {
		return false, err
	}
	for _, a := range addrs {
		if !a.Unmap().IsLoopback() {
			return false, nil
		}
	}
	return len(addrs) > 0, nil
}
