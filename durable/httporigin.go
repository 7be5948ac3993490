package durable

import (
	"net"
	"net/url"
	"strings"
)

// HTTPOrigin is a FlowOptions.Key for HTTP tasks: the origin of the
// callback URL, scheme://host:port in lower case with the scheme's default
// port written out (https://api.example.com:443), so that every spelling of
// one destination shares its Limit. It returns "" (no flow control) for a
// task that is not an HTTP task HTTPHandler would send, which HTTPHandler
// dead-letters anyway.
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

// Origin returns the origin of an absolute http or https URL as HTTPOrigin
// spells it; for another URL, an error wrapping ErrInvalidURL.
func Origin(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", &url.Error{Op: "parse", URL: rawURL, Err: ErrInvalidURL}
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	switch {
	case scheme != "http" && scheme != "https" || u.Hostname() == "":
		return "", &url.Error{Op: "origin", URL: rawURL, Err: ErrInvalidURL}
	case port == "" && scheme == "https":
		port = "443"
	case port == "":
		port = "80"
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port), nil
}
