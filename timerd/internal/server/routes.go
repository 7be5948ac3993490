package server

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/go-timingwheel/timingwheel/timerd/internal/api"
	"github.com/go-timingwheel/timingwheel/timerd/internal/apierror"
	"github.com/go-timingwheel/timingwheel/timerd/internal/dashboard"
	"github.com/go-timingwheel/timingwheel/timerd/internal/limit"
)

// The API and the dashboard, as seams: tests put handlers of their own here
// to see what reaches them.
var (
	newAPI       = api.New
	newDashboard = dashboard.New
)

// routes builds the handler:
//
//	/v1/      limit → auth → api
//	/ui/      limit → dashboard (its own login, same token)
//	/healthz  200 while the process serves
//	/readyz   200 when the store answers and the Queue's Stats runs; else 503
//	          (one check a second at most, however many probes: ready.go)
//	/metrics  reg, Prometheus text format
//	/         redirect to /ui/; any other path 404 not_found
//
// all inside the request metrics, which label by the pattern that matched,
// the innermost one (the API's own mux sets r.Pattern again).
func (s *Server) routes(reg *prometheus.Registry) (http.Handler, error) {
	checker, err := s.checker()
	if err != nil {
		return nil, err
	}
	cfg := api.Config{VerifyCompletion: s.completionKeys().Verify, Queue: s.queue, Schedules: s.schedules, CheckCallback: s.guard.CheckURL, MaxBody: s.cfg.MaxBody, Flow: s.flow, Log: s.log,
		Streams: s.backend.streams != nil, CheckStream: s.checkStream}
	// Every store of timerd's has this read of its own (durable.Store has not).
	if st, ok := s.queue.Store().(interface {
		Payload(ctx context.Context, key string) ([]byte, error)
	}); ok {
		cfg.Payload = st.Payload
	}
	apiH, err := newAPI(cfg)
	if err != nil {
		return nil, err
	}
	dash, err := newDashboard(dashboard.Config{Queue: s.queue, Auth: checker, Namespace: s.cfg.Namespace, Log: s.log, Schedules: s.schedules, Payload: cfg.Payload,
		Flow: s.flow, Throughput: s.throughput, VerifyCompletion: cfg.VerifyCompletion})
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

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
