package server

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// instrument counts every request in reg by route and status code and
// times it by route:
//
//	timerd_http_requests_total{route, code}    counter
//	timerd_http_request_duration_seconds{route} histogram
//
// route is the ServeMux pattern that matched ("POST /v1/tasks",
// "GET /readyz"), read after the request is served so that the innermost
// mux's pattern wins, or "unmatched": a bounded set of labels, never the
// path itself, which holds task keys. Each request is logged at debug level.
func instrument(reg *prometheus.Registry, log *slog.Logger, next http.Handler) http.Handler {
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "timerd", Name: "http_requests_total",
		Help: "HTTP requests served, by route pattern and status code.",
	}, []string{"route", "code"})
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "timerd", Name: "http_request_duration_seconds",
		Help:    "Time to serve an HTTP request, by route pattern.",
		Buckets: prometheus.DefBuckets,
	}, []string{"route"})
	reg.MustRegister(requests, duration)

	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		route := r.Pattern
		if route == "" {
			route = "unmatched"
		}
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		d := time.Since(start)
		requests.WithLabelValues(route, strconv.Itoa(rec.status)).Inc()
		duration.WithLabelValues(route).Observe(d.Seconds())
		log.Debug("request", "method", r.Method, "route", route, "status", rec.status,
			"duration", d, "remote", r.RemoteAddr)
	})
}

// statusRecorder remembers the status written through it. Unwrap lets
// http.ResponseController reach the writer's Flush and deadlines.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
