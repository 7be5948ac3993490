package server

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/go-timingwheel/timingwheel/timerd/internal/api"
	"github.com/go-timingwheel/timingwheel/timerd/internal/apierror"
	"github.com/go-timingwheel/timingwheel/timerd/internal/auth"
	"github.com/go-timingwheel/timingwheel/timerd/internal/dashboard"
	"github.com/go-timingwheel/timingwheel/timerd/internal/limit"
)

// The API and the dashboard, as seams: tests put handlers of their own here
// to see what reaches them.
var (
	newAPI       = api.New
	newDashboard = dashboard.New
)

// readyTimeout bounds the Redis calls of one /readyz.
const readyTimeout = 2 * time.Second

// routes builds the handler:
//
//	/v1/      limit → auth → api
//	/ui/      limit → dashboard (its own login, same token)
//	/healthz  200 while the process serves
//	/readyz   200 when Redis answers and rediswheel's scripts run; else 503
//	/metrics  reg, Prometheus text format
//	/         redirect to /ui/; any other path 404 not_found
//
// all inside the request metrics, which label by the pattern that matched,
// the innermost one (the API's own mux sets r.Pattern again).
func (s *Server) routes(reg *prometheus.Registry) (http.Handler, error) {
	checker := auth.New(s.cfg.Token)
	apiH, err := newAPI(api.Config{Queue: s.queue, Schedules: s.schedules,
		CheckCallback: s.guard.CheckURL, MaxBody: s.cfg.MaxBody, Log: s.log})
	if err != nil {
		return nil, err
	}
	dash, err := newDashboard(dashboard.Config{Queue: s.queue, Auth: checker, Namespace: s.cfg.Namespace, Log: s.log})
	if err != nil {
		return nil, err
	}
	// A burst of one second's worth: README.md, -rate.
	lim := limit.New(s.cfg.Rate, int(s.cfg.Rate+0.5))

	mux := http.NewServeMux()
	mux.Handle("/v1/", lim.Wrap(checker.Wrap(apiH)))
	mux.Handle("/ui/", lim.Wrap(dash))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", s.ready)
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle("GET /{$}", http.RedirectHandler("/ui/", http.StatusFound))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		apierror.Write(w, apierror.NotFound, "", "no such path; the API is under /v1/, the dashboard under /ui/")
	})
	return instrument(reg, s.log, mux), nil
}

// ready answers 200 when Redis answers PING and rediswheel's Stats, which
// runs a script on every shard, succeeds within readyTimeout; else 503
// unavailable. The reason goes to the log, not to the unauthenticated
// caller.
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	err := s.client.Ping(ctx).Err()
	if err == nil {
		_, err = s.queue.Stats(ctx)
	}
	if err != nil {
		s.log.Warn("not ready", "err", err)
		apierror.Write(w, apierror.Unavailable, "", "Redis is not reachable or not usable")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
