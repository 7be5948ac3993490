package api

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/timerd/internal/apierror"
	"github.com/go-timingwheel/timingwheel/timerd/internal/ssrf"
)

// isForbidden reports whether err, an error of Config.CheckCallback, refuses
// the destination (it wraps ssrf.ErrForbidden) rather than failing to check
// it.
func isForbidden(err error) bool { return errors.Is(err, ssrf.ErrForbidden) }

// isUnresolved reports whether err, an error of Config.CheckCallback, says
// the callback's host name does not resolve now (it wraps
// ssrf.ErrUnresolved). Such a callback is accepted and the check deferred to
// delivery (README.md, "Callbacks"): a task is for later, when the name may
// resolve; the dial-time check guards every address actually called; and
// creates must not fail with the destination's DNS. A name that never
// resolves fails its deliveries, each attempt's error in the delivery log.
func isUnresolved(err error) bool { return errors.Is(err, ssrf.ErrUnresolved) }

// apiError is an answer other than success: apierror's code, the field, and
// a message for the client.
type apiError struct {
	code           apierror.Code
	field, message string
}

func (e *apiError) Error() string { return string(e.code) + ": " + e.field + ": " + e.message }

// invalid is a 400 invalid_argument naming field.
func invalid(field, format string, args ...any) error {
	return &apiError{apierror.InvalidArgument, field, fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) error {
	return &apiError{apierror.NotFound, "", fmt.Sprintf(format, args...)}
}

func conflict(format string, args ...any) error {
	return &apiError{apierror.Conflict, "", fmt.Sprintf(format, args...)}
}

// wrap makes serve an http.Handler that writes serve's error as apierror's
// body: an *apiError as it says, a store failure as 503 unavailable, anything
// else as 500 internal.
func (h *handler) wrap(serve func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := serve(w, r)
		if err == nil {
			return
		}
		var ae *apiError
		switch {
		case errors.As(err, &ae):
			apierror.Write(w, ae.code, ae.field, ae.message)
		case r.Context().Err() != nil:
			// The client is gone; nobody reads this.
			apierror.Write(w, apierror.Unavailable, "", "request cancelled")
		case errors.Is(err, durable.ErrUnavailable):
			// A failure retrying may heal, as the store said (durable's
			// Store contract): the store down, restarting, busy.
			h.log.Warn("api: store unavailable", "method", r.Method, "path", r.URL.Path, "err", err)
			apierror.Write(w, apierror.Unavailable, "", "the task store is unavailable; try again")
		default:
			h.log.Error("api: internal error", "method", r.Method, "path", r.URL.Path, "err", err)
			apierror.Write(w, apierror.Internal, "", "internal error")
		}
	})
}
