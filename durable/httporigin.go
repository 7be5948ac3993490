package durable

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// HTTPOrigin is a FlowOptions.Key for HTTP tasks: the origin of the
// callback URL as Origin spells it, so that every spelling of one
// destination shares its Limit, its breaker and its RetryAfter pauses. It
// returns "" (no flow control) for a task that is not an HTTP task
// HTTPHandler would send, which HTTPHandler dead-letters anyway.
func HTTPOrigin(t Task) string {
	if t.Type != HTTPTaskType {
		return ""
	}
	h, err := DecodeHTTPTask(t.Payload)
	if err != nil {
		return ""
	}
	o, err := Origin(h.URL)
	if err != nil {
		return ""
	}
	return o
}

// Origin returns the origin of an absolute http or https URL in one
// spelling per destination the dialer reaches: scheme://host:port with
//
//   - the scheme and host in lower case (an IDN in its xn-- form, as HTTP
//     tasks must give it: a host that is not ASCII is an error);
//   - a trailing dot dropped (example.com. is example.com);
//   - an IP address in its shortest form, an IPv4-mapped IPv6 address as
//     its IPv4 address ([::ffff:7f00:1] and [::ffff:127.0.0.1] are
//     127.0.0.1, which the dialer connects to);
//   - the port as a number without leading zeros (08080 is 8080), the
//     scheme's default written out (https://api.example.com:443).
//
// For another URL (a port past 65535, an empty label), an error wrapping
// ErrInvalidURL. Flow control trusts this spelling: issue 31 found four
// spellings of one stuck origin taking every handler.
func Origin(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", &url.Error{Op: "parse", URL: rawURL, Err: ErrInvalidURL}
	}
	bad := func(why string) (string, error) {
		return "", &url.Error{Op: "origin", URL: rawURL, Err: fmt.Errorf("%w: %s", ErrInvalidURL, why)}
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return bad("scheme must be http or https")
	}
	host, err := canonicalHost(u.Hostname())
	if err != nil {
		return bad(err.Error())
	}
	port := u.Port()
	switch {
	case port == "" && scheme == "https":
		port = "443"
	case port == "":
		port = "80"
	default:
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return bad("port " + port + " is not in 0..65535")
		}
		port = strconv.FormatUint(n, 10)
	}
	return scheme + "://" + net.JoinHostPort(host, port), nil
}

// canonicalHost is Origin's host.
func canonicalHost(h string) (string, error) {
	if h == "" {
		return "", fmt.Errorf("no host")
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap().String(), nil // lower case, zeros compressed
	}
	for i := 0; i < len(h); i++ {
		if h[i] >= 0x80 {
			return "", fmt.Errorf("host %q is not ASCII (use its xn-- form)", h)
		}
	}
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if h == "" || strings.HasPrefix(h, ".") || strings.HasSuffix(h, ".") || strings.Contains(h, "..") {
		return "", fmt.Errorf("host %q has an empty label", h)
	}
	return h, nil
}
