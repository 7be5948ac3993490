// Package server puts timerd together: the API under /v1/ (behind the rate
// limit and auth), the dashboard under /ui/ (behind the rate limit; it
// checks the token itself, to offer its login page), /healthz, /readyz and
// /metrics, and the workers that deliver callbacks (durable's Run with a
// Mux whose HTTP handler uses the ssrf Guard's client). Tests start it in
// process; cmd/timerd only parses flags and calls it.
package server

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/durable/durablemetrics"
	"github.com/go-timingwheel/timingwheel/timerd/internal/config"
	"github.com/go-timingwheel/timingwheel/timerd/internal/dashboard"
	"github.com/go-timingwheel/timingwheel/timerd/internal/schedules"
	"github.com/go-timingwheel/timingwheel/timerd/internal/ssrf"
)

// Server is one timerd process: its store, its Queue, its HTTP handler and
// its workers. Make it with New, then either Run it once or, to use only
// Handler, Close it.
type Server struct {
	cfg     config.Config
	log     *slog.Logger
	backend *backend
	queue   *durable.Queue
	guard   *ssrf.Guard
	flow    *durable.Flow // the workers' flow control per origin (limits.go)
	// throughput counts this process's deliveries per minute for the
	// dashboard's chart: an Observer of the Queue's.
	throughput *dashboard.Throughput
	schedules  *schedules.Store
	readiness  *readiness
	handler    http.Handler
}

// New opens the store (a Redis or PostgreSQL store connects lazily, so New
// succeeds with the server down and /readyz says so), makes the Queue with
// the configuration's options and durablemetrics as its Observer, and builds the
// handler. Its errors are configuration mistakes: a bad store URL or
// allowlist, options the Queue refuses; or a store that cannot be opened.
func New(cfg config.Config, log *slog.Logger) (*Server, error) {
	guard, err := ssrf.New(cfg.AllowCallback)
	if err != nil {
		return nil, err
	}
	b, err := openBackend(cfg)
	if err != nil {
		return nil, err
	}
	flow, err := newFlow(cfg.Flow)
	if err != nil {
		b.close()
		return nil, err
	}
	metrics := durablemetrics.New(cfg.Namespace)
	events := newEventLog(log, string(b.kind), time.Now)
	throughput := dashboard.NewThroughput(time.Now)
	var backoff func(int) time.Duration // zero bounds: durable's DefaultBackoff
	if cfg.BackoffBase > 0 {
		backoff = durable.ExponentialBackoff(cfg.BackoffBase, cfg.BackoffLimit)
	}
	q, err := durable.New(b.store, durable.Options{
		MaxAttempts:   cfg.MaxAttempts,
		Backoff:       backoff,
		Concurrency:   cfg.Concurrency,
		Lease:         cfg.Lease,
		Retention:     cfg.Retention,
		HistoryLen:    cfg.History,
		ShutdownGrace: cfg.ShutdownGrace,
		Observer:      observers{metrics.Observer(), events, throughput},
		Flow:          flow,
		// Run retries these itself; they are worth a line, not a stop, and
		// not a line each: events logs an outage with backoff.
		OnError:  func(err error) { events.storeFailed("run", err) },
		LogAttrs: []slog.Attr{slog.String("namespace", cfg.Namespace)},
	})
	if err != nil {
		b.close()
		return nil, fmt.Errorf("server: %w", err)
	}
	metrics.WatchStats(q)

	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s := &Server{cfg: cfg, log: log, backend: b, queue: q, guard: guard, flow: flow, throughput: throughput,
		schedules: schedules.New(b.defs, q, log)}
	s.readiness = &readiness{check: s.checkStore, now: time.Now}
	if s.handler, err = s.routes(reg); err != nil {
		b.close()
		return nil, err
	}
	return s, nil
}

// Handler returns everything timerd serves, for httptest.
func (s *Server) Handler() http.Handler { return s.handler }

// Close closes the store of a Server that will not Run (Run closes it
// itself).
func (s *Server) Close() error { return s.backend.close() }
