package durable

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// The checks AddHTTP makes, so that a task net/http will refuse to send is
// refused when it is added rather than retried MaxAttempts times. They follow
// net/http of Go 1.26 (its HTTP/1 transport, and its HTTP/2 transport for an
// https URL whose server speaks HTTP/2), from the rules of
// golang.org/x/net/http/httpguts, which net/http vendors:
//
//   - header names are tokens and header values have no control byte but HTAB
//     (ValidHeaderFieldName, ValidHeaderFieldValue; both transports);
//   - Upgrade, and Connection other than one "close" or "keep-alive", are
//     refused by the HTTP/2 transport (checkConnHeaders), so a task carrying
//     them could be sent or not depending on what the server negotiates;
//   - the URL host has only the bytes of ValidHostHeader (HTTP/2 refuses
//     others; HTTP/1 sends an empty Host);
//   - the address dials: no stray bracket in the host, and a port in 1..65535
//     (the dialer refuses larger ones, and a connect to port 0 is always
//     refused).
//
// Stricter than net/http, on purpose: a non-ASCII host is refused (net/http
// converts it to Punycode with an IDNA library this module does not import;
// give the xn-- form), and so is a colon in an unbracketed host ("h:1:2"
// dials host "h:1", which no resolver finds). TestHTTPValidationMatchesNetHTTP
// and FuzzHTTPValidation hold these checks against a real net/http client.

func (t HTTPTask) validate() error {
	if err := validateHTTPURL(t.URL); err != nil {
		return err
	}
	if !isToken(t.Method) {
		return fmt.Errorf("%w: %q", ErrInvalidMethod, t.Method)
	}
	// Checked in the form the handler sends: names canonicalized, so that
	// "connection" and "Connection" count as one header, as they will.
	sent := make(http.Header, len(t.Header))
	for name, values := range t.Header {
		if !isToken(name) {
			return fmt.Errorf("%w: name %q", ErrInvalidHeader, name)
		}
		switch http.CanonicalHeaderKey(name) {
		case "Host", "Content-Length", "Transfer-Encoding":
			// net/http derives these from URL and Body and would silently drop the task's values.
			return fmt.Errorf("%w: %s is set from URL and Body", ErrInvalidHeader, name)
		}
		for _, v := range values {
			if !validHeaderValue(v) {
				// The value itself stays out of the error: it may be a secret.
				return fmt.Errorf("%w: value of %s has a control character", ErrInvalidHeader, name)
			}
			sent.Add(name, v)
		}
	}
	if vv := sent["Upgrade"]; len(vv) > 0 && vv[0] != "" {
		return fmt.Errorf("%w: Upgrade (HTTP/2 refuses it)", ErrInvalidHeader)
	}
	if vv := sent["Connection"]; len(vv) > 1 || len(vv) == 1 && !isConnectionOption(vv[0]) {
		return fmt.Errorf("%w: Connection %q (HTTP/2 accepts one close or keep-alive only)", ErrInvalidHeader, vv)
	}
	if err := t.validateCompletion(); err != nil {
		return err
	}
	if t.Timeout < 0 {
		return fmt.Errorf("%w: %v is negative", ErrInvalidTimeout, t.Timeout)
	}
	return nil
}

func validateHTTPURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("%w: %v", ErrInvalidURL, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%w: %q: scheme must be http or https", ErrInvalidURL, raw)
	case strings.TrimSuffix(u.Host, ":") == "":
		// http.NewRequest drops an empty port, so "http://:" has no host.
		return fmt.Errorf("%w: %q: no host", ErrInvalidURL, raw)
	}
	for i := 0; i < len(u.Host); i++ {
		if c := u.Host[i]; c >= 0x80 {
			return fmt.Errorf("%w: %q: host is not ASCII (use its xn-- form)", ErrInvalidURL, raw)
		} else if !validHostByte(c) {
			return fmt.Errorf("%w: %q: host has %q", ErrInvalidURL, raw, c)
		}
	}
	if u.Host[0] != '[' {
		// url.Parse checks the brackets of an IP literal only when the host starts with one;
		// net.SplitHostPort, on the dialer's side, refuses a stray one.
		if strings.ContainsAny(u.Host, "[]") {
			return fmt.Errorf("%w: %q: bracket in host %q", ErrInvalidURL, raw, u.Host)
		}
		if strings.Contains(u.Hostname(), ":") {
			return fmt.Errorf("%w: %q: colon in host %q", ErrInvalidURL, raw, u.Hostname())
		}
	}
	// url.Parse lets through any run of digits as a port; the dialer does not.
	if p := u.Port(); p != "" {
		if n, err := strconv.ParseUint(p, 10, 16); err != nil || n == 0 {
			return fmt.Errorf("%w: %q: port %s is not in 1..65535", ErrInvalidURL, raw, p)
		}
	}
	return nil
}

// validateHTTPKey checks a task key for an HTTP task: it is sent as the
// Idempotency-Key header, so it must be a valid header value, and arrive as
// it is (HTTP/1 trims spaces and tabs at either end of a value).
func validateHTTPKey(key string) error {
	switch {
	case !validHeaderValue(key):
		return fmt.Errorf("%w: %q: an HTTP task's key is sent as %s and must have no control character", ErrKey, key, HeaderIdempotencyKey)
	case key != strings.Trim(key, " \t"):
		return fmt.Errorf("%w: %q: an HTTP task's key is sent as %s and must not start or end with a space or tab", ErrKey, key, HeaderIdempotencyKey)
	}
	return nil
}

// validHeaderValue is httpguts.ValidHeaderFieldValue: no byte below 0x20 but
// HTAB, and no DEL. Bytes from 0x80 are obs-text and go through.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// validHostByte is httpguts' validHostByte: the bytes of a reg-name, an IP
// literal with its zone, and a port.
func validHostByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!$%&'()*+,-.:;=[]_~", c) >= 0
}

// isConnectionOption reports whether HTTP/2 accepts v as the Connection header.
func isConnectionOption(v string) bool {
	return v == "" || asciiEqualFold(v, "close") || asciiEqualFold(v, "keep-alive")
}

// asciiEqualFold is strings.EqualFold for ASCII only, as net/http compares
// (strings.EqualFold would match the Kelvin sign to k).
func asciiEqualFold(s, t string) bool {
	if len(s) != len(t) {
		return false
	}
	for i := 0; i < len(s); i++ {
		a, b := s[i], t[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}

// isToken reports whether s is an RFC 9110 token (the grammar of methods and header names).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
