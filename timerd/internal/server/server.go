// Package server puts timerd together: the API under /v1/ (behind the rate
// limit and auth), the dashboard under /ui/ (behind the rate limit; it
// checks the token itself, to offer its login page), /healthz, /readyz and
// /metrics, and the workers that deliver callbacks (rediswheel Run with a
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
	"github.com/redis/go-redis/v9"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/go-timingwheel/timingwheel/rediswheel/rwmetrics"
	"github.com/go-timingwheel/timingwheel/timerd/internal/config"
	"github.com/go-timingwheel/timingwheel/timerd/internal/schedules"
	"github.com/go-timingwheel/timingwheel/timerd/internal/ssrf"
)

// Server is one timerd process: its Redis client, its Queue, its HTTP
// handler and its workers. Make it with New, then either Run it once or, to
// use only Handler, Close it.
type Server struct {
	cfg       config.Config
	log       *slog.Logger
	client    redis.UniversalClient
	queue     *rediswheel.Queue
	guard     *ssrf.Guard
	flow      *durable.Flow // the workers' flow control per origin (limits.go)
	schedules *schedules.Store
	readiness *readiness
	handler   http.Handler
}

// New connects to Redis (lazily: go-redis dials at the first command, so New
// succeeds with Redis down and /readyz says so), makes the Queue with the
// configuration's options and rwmetrics as its Observer, and builds the
// handler. Its errors are configuration mistakes: a bad Redis URL or
// allowlist, options rediswheel refuses.
func New(cfg config.Config, log *slog.Logger) (*Server, error) {
	guard, err := ssrf.New(cfg.AllowCallback)
	if err != nil {
		return nil, err
	}
	client, err := connect(cfg)
	if err != nil {
		return nil, err
	}
	flow, err := newFlow(cfg.Flow)
	if err != nil {
		client.Close()
		return nil, err
	}
	metrics := rwmetrics.New(cfg.Namespace)
	q, err := rediswheel.New(client, rediswheel.Options{
		Namespace:     cfg.Namespace,
		Shards:        cfg.Shards,
		Concurrency:   cfg.Concurrency,
		Lease:         cfg.Lease,
		Retention:     cfg.Retention,
		HistoryLen:    cfg.History,
		ShutdownGrace: cfg.ShutdownGrace,
		Observer:      metrics.Observer(),
		Flow:          flow,
		// Run retries these itself; they are worth a line, not a stop.
		OnError: func(err error) { log.Warn("rediswheel", "err", err) },
	})
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("server: %w", err)
	}
	metrics.WatchStats(q)

	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s := &Server{cfg: cfg, log: log, client: client, queue: q, guard: guard, flow: flow,
		schedules: schedules.New(client, q, cfg.Namespace, log)}
	s.readiness = &readiness{check: s.checkRedis, now: time.Now}
	if s.handler, err = s.routes(reg); err != nil {
		client.Close()
		return nil, err
	}
	return s, nil
}

// connect makes the Redis client the URL describes; credentials, database
// and TLS (rediss://) all come through it.
func connect(cfg config.Config) (redis.UniversalClient, error) {
	if cfg.RedisCluster {
		opts, err := redis.ParseClusterURL(cfg.RedisURL)
		if err != nil {
			return nil, fmt.Errorf("server: -redis-url: %w", err)
		}
		return redis.NewClusterClient(opts), nil
	}
	opts, err := redis.ParseURL(cfg.RedisURL)
	if err != nil {
		return nil, fmt.Errorf("server: -redis-url: %w", err)
	}
	return redis.NewClient(opts), nil
}

// Handler returns everything timerd serves, for httptest.
func (s *Server) Handler() http.Handler { return s.handler }

// Close closes the Redis client of a Server that will not Run (Run closes it
// itself).
func (s *Server) Close() error { return s.client.Close() }
