// Package ssrf decides which callback destinations timerd may call. timerd
// makes requests on others' behalf, so by default it refuses any address a
// caller could not reach from outside: loopback, link-local (cloud metadata
// at 169.254.169.254 among them), private (RFC 1918, fc00::/7), unspecified,
// multicast, CGNAT (100.64.0.0/10) and the IPv4-mapped forms of all of these.
// An allowlist of CIDRs or host:port pairs lets an operator name exceptions.
//
// The check runs twice: at create time on the URL (an IP literal, or every
// address its host name resolves to), for a clear 400 that names the field;
// and at every dial of the delivery client (net.Dialer.Control), on the
// address actually connected, so a name that resolves elsewhere later (DNS
// rebinding) is refused too.
//
// Contract (implemented by the server helper):
//
//	var ErrForbidden = errors.New("ssrf: destination not allowed") // wrapped with the address
//	func New(allow []string) (*Guard, error)        // CIDRs ("10.1.0.0/16", "127.0.0.1/32") or "host:port"
//	func (g *Guard) CheckURL(ctx context.Context, u *url.URL) error // ErrForbidden, or a resolution error
//	func (g *Guard) Client() *http.Client           // a client whose every dial is checked
package ssrf
