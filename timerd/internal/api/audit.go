package api

import (
	"context"
	"net/http"

	"github.com/go-timingwheel/timingwheel/timerd/internal/auth"
)

// audited wraps next, the handler of op, so that every request to a route
// that changes something (its grant is not auth.GrantRead) writes one audit
// line (auth.Audit) once it is answered: the credential, op, the status,
// the client's address, what the path names (key, name or origin) and the
// key or name a body named (subject), so refusals (400, 403, 404, 409) are there beside the
// changes. Reads write none. The command line calls these routes, so its
// changes are audited here too.
func (h *handler) audited(op string, next http.Handler) http.Handler {
	if grants[op] == auth.GrantRead {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		s := &subject{}
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), subjectKey{}, s)))
		args := []any{"status", sw.status, "remote", r.RemoteAddr}
		for _, name := range []string{"key", "name", "origin"} {
			if v := r.PathValue(name); v != "" {
				args = append(args, name, v)
			}
		}
		if s.name != "" {
			args = append(args, s.name, s.value)
		}
		auth.Audit(r.Context(), h.log, op, args...)
	})
}

// subject is what a body named, for the audit line of a route whose path
// names nothing (POST /v1/tasks: the key; POST /v1/schedules: the name).
type subject struct{ name, value string }

type subjectKey struct{}

// auditSubject records that r's body names value as name ("key", "name").
func auditSubject(r *http.Request, name, value string) {
	if s, ok := r.Context().Value(subjectKey{}).(*subject); ok {
		s.name, s.value = name, value
	}
}

// statusWriter remembers the status written through it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
