package main

import (
	"context"
	"net/http"
	"time"
)

// deadlined is a request as the middleware hands it on: its context, which a
// timer cancels d after armed, and the context it was derived from (the
// server's, cancelled when the connection goes).
type deadlined struct {
	ctx, parent context.Context
	armed       time.Time // just before the timer was armed
	d           time.Duration
}

// withDeadline is the middleware: it gives each request a context cancelled
// d from now, and stops the timer when next returns, as a server does.
// Handing next the context rather than r.WithContext(ctx) spares every
// variant the copy of the request.
func (s *server) withDeadline(d time.Duration, next func(http.ResponseWriter, deadlined)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		req := deadlined{parent: r.Context(), armed: time.Now(), d: d}
		var cancel context.CancelFunc
		switch s.cfg.lib {
		case "runtime":
			req.ctx, cancel = context.WithTimeout(req.parent, d)
		case "wheel":
			req.ctx, cancel = context.WithCancel(req.parent)
			t := s.timers.AfterFunc(d, cancel)
			defer t.Stop()
		default:
			// No timer: the context alone, which the others also make.
			req.ctx, cancel = context.WithCancel(req.parent)
		}
		defer cancel()
		next(w, req)
	})
}
