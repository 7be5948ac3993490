package api

import (
	"net/http"
	"strings"
)

// traceHeader is W3C Trace Context's header (https://www.w3.org/TR/trace-context/).
// Given on POST /v1/tasks it is stored as a header of the task's callback
// (a stream task's message field streamTraceField), and so sent with every
// delivery: the callback's trace links to the request
// that scheduled it, with no tracing SDK here.
const traceHeader = "Traceparent"

// requestTraceparent reads and checks the create request's traceparent: ""
// if none. It must be version-traceid-parentid-flags in lower-case hex,
// 2-32-16-2 digits, the version not ff and neither id all zeros; a later
// version's extra fields are refused, as this code cannot check them.
func requestTraceparent(r *http.Request, cb *callbackJSON) (string, error) {
	values := r.Header.Values(traceHeader)
	switch {
	case len(values) == 0:
		return "", nil
	case len(values) > 1:
		return "", invalid("traceparent", "give at most one traceparent header")
	}
	tp := values[0]
	parts := strings.Split(tp, "-")
	if len(parts) != 4 || !lowerHex(parts[0], 2) || !lowerHex(parts[1], 32) || !lowerHex(parts[2], 16) ||
		!lowerHex(parts[3], 2) || parts[0] == "ff" || strings.Trim(parts[1], "0") == "" || strings.Trim(parts[2], "0") == "" {
		return "", invalid("traceparent", "traceparent must be W3C's version-traceid-parentid-flags in lower-case hex, such as 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01, with neither id all zeros")
	}
	if cb != nil {
		for name := range cb.Headers {
			if http.CanonicalHeaderKey(name) == traceHeader {
				return "", invalid("callback.headers."+name, "give traceparent either as the request's header or among callback.headers, not both")
			}
		}
	}
	return tp, nil
}

func lowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
