package server

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/go-timingwheel/timingwheel/timerd/internal/apierror"
)

// readyTimeout bounds the Redis calls of one readiness check.
const readyTimeout = 2 * time.Second

// readyCache is how long a readiness check's answer is reused. /readyz is
// open to anyone and not rate limited (probes must get through), and a
// check costs a PING and a script on every shard: reused for a second, any
// number of probes cost at most one check a second, while a probe still
// sees Redis go away within a second of a check.
const readyCache = time.Second

// readiness is the last readiness check and when it ran. Its mutex is held
// through a check, so that probes arriving meanwhile wait for that check's
// answer instead of starting checks of their own.
type readiness struct {
	check func(ctx context.Context) error
	now   func() time.Time // time.Now; tests move it

	mu      sync.Mutex
	checked bool
	at      time.Time // when the last check began
	err     error     // its answer
}

// get returns the answer of a check begun less than readyCache ago, or runs
// one. The check does not end with ctx (one probe that hangs up must not
// make the answer every probe gets for the next second a failure); it is
// bounded by readyTimeout.
func (rd *readiness) get(ctx context.Context) error {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	now := rd.now()
	if rd.checked && now.Sub(rd.at) < readyCache && now.Sub(rd.at) >= 0 {
		return rd.err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readyTimeout)
	defer cancel()
	rd.checked, rd.at, rd.err = true, now, rd.check(ctx)
	return rd.err
}

// checkStore is the readiness check: the store answers its ping (Redis's
// PING, a database round trip) and the Queue's Stats, which reads every
// partition, succeeds. A failure is logged, once per check.
func (s *Server) checkStore(ctx context.Context) error {
	err := s.backend.ping(ctx)
	if err == nil {
		_, err = s.queue.Stats(ctx)
	}
	if err != nil {
		s.log.Warn("not ready", "err", err)
	}
	return err
}

// ready answers /readyz: 200 when the readiness check passes, else 503
// unavailable. The reason goes to the log (once per check), not to the
// unauthenticated caller.
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	if err := s.readiness.get(r.Context()); err != nil {
		apierror.Write(w, apierror.Unavailable, "", "the store is not reachable or not usable")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}
