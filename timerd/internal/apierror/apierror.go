// Package apierror is timerd's JSON error body. Every part of timerd that
// answers a request with an error (the API, authentication, limits) writes
// it here, so a client sees one shape with one set of stable codes:
//
//	{"error": {"code": "invalid_argument", "message": "due_at: not RFC 3339", "field": "due_at"}}
//
// The codes are part of the API (README.md, openapi.json): add new ones,
// never rename one.
package apierror

import (
	"encoding/json"
	"net/http"
)

// Code is a stable, machine-readable error code.
type Code string

// The codes, with the HTTP status each is written with.
const (
	InvalidArgument      Code = "invalid_argument"       // 400
	DestinationForbidden Code = "destination_forbidden"  // 400
	Unauthenticated      Code = "unauthenticated"        // 401
	PermissionDenied     Code = "permission_denied"      // 403: the token's role may not do this
	NotFound             Code = "not_found"              // 404
	MethodNotAllowed     Code = "method_not_allowed"     // 405
	Conflict             Code = "conflict"               // 409
	TooLarge             Code = "too_large"              // 413
	UnsupportedMedia     Code = "unsupported_media_type" // 415
	RateLimited          Code = "rate_limited"           // 429
	Internal             Code = "internal"               // 500
	Unavailable          Code = "unavailable"            // 503
)

var status = map[Code]int{
	InvalidArgument:      http.StatusBadRequest,
	DestinationForbidden: http.StatusBadRequest,
	Unauthenticated:      http.StatusUnauthorized,
	PermissionDenied:     http.StatusForbidden,
	NotFound:             http.StatusNotFound,
	MethodNotAllowed:     http.StatusMethodNotAllowed,
	Conflict:             http.StatusConflict,
	TooLarge:             http.StatusRequestEntityTooLarge,
	UnsupportedMedia:     http.StatusUnsupportedMediaType,
	RateLimited:          http.StatusTooManyRequests,
	Internal:             http.StatusInternalServerError,
	Unavailable:          http.StatusServiceUnavailable,
}

// Status returns the HTTP status that goes with code (500 for a code this
// package does not know).
func Status(code Code) int {
	if s, ok := status[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Body is the JSON error body.
type Body struct {
	Error Detail `json:"error"`
}

// Detail is what went wrong. Field names the offending input, in the
// request's own JSON names ("callback.url"), when there is one.
type Detail struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// Write answers with code's status and the body {code, message, field}.
func Write(w http.ResponseWriter, code Code, field, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(Status(code))
	_ = json.NewEncoder(w).Encode(Body{Detail{Code: code, Message: message, Field: field}})
}
