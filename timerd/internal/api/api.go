// Package api is timerd's /v1/ JSON API: the contract is README.md ("API")
// and openapi.json, which TestOpenAPI holds this package to. It serves the
// full paths /v1/...; authentication and rate limits are the server's, which
// wraps it.
//
// Every handler checks all of its input before it changes anything, so a
// request refused with a 4xx stores nothing. Errors are apierror's body; a
// store failure is 503 unavailable and anything unexpected 500 internal, both
// logged.
package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/go-timingwheel/timingwheel/durable"

	"github.com/go-timingwheel/timingwheel/timerd/internal/apierror"
	"github.com/go-timingwheel/timingwheel/timerd/internal/schedules"
)

// Config is what the API needs.
type Config struct {
	// Queue holds the tasks. Required.
	Queue *durable.Queue
	// Schedules holds the periodic schedules. Required.
	Schedules *schedules.Store
	// CheckCallback decides whether a callback URL may be called, before a
	// task or schedule is stored (the server gives ssrf.Guard.CheckURL). An
	// error wrapping ssrf.ErrForbidden is 400 destination_forbidden; one
	// wrapping ssrf.ErrUnresolved is no refusal (the task is stored, the
	// check left to the dial: isUnresolved); any other is 400
	// invalid_argument. Both errors name the field callback.url.
	// Required: to allow every destination, give a func returning nil.
	CheckCallback func(ctx context.Context, u *url.URL) error
	// Payload reads the payload stored with a task (the store's
	// Payload), for what GET /v1/tasks/{key} shows of the callback
	// (its traceparent). Optional: without it nothing of the callback is shown.
	Payload func(ctx context.Context, key string) ([]byte, error)
	// Streams says whether stream tasks may be created: the workers have a
	// Redis to append their messages to (-stream-redis-url, or a Redis
	// store). Without it a stream task is refused, 400 naming stream.
	Streams bool
	// CheckStream says why a stream task may not name the stream name
	// (the server gives config.Streams.CheckName: -stream-allow, never the
	// store's own keys), or nil; its refusal is 400 naming stream.name.
	// nil: every name is allowed.
	CheckStream func(name string) error
	// VerifyCompletion checks the token of /complete and /fail, a
	// completion credential (completion.Keys.Verify), and returns the
	// delivery's durable token; its error is 400 naming token. nil: the
	// token is durable's own.
	VerifyCompletion func(taskKey, credential string) (string, error)
	// MaxBody caps a request body: a larger one is 413 too_large (default
	// 1 MiB).
	MaxBody int64
	// Flow is the workers' flow control per callback origin, which
	// /v1/limits reads and changes; nil: a Flow without limits.
	Flow *durable.Flow
	// Log receives store failures (warning) and unexpected errors (error);
	// default slog.Default().
	Log *slog.Logger
}

// DefaultMaxBody is the body limit when Config.MaxBody is 0.
const DefaultMaxBody = 1 << 20

// ErrConfig is wrapped by New's error for a Config missing a required field.
var ErrConfig = errors.New("api: bad config")

// New returns the handler of every /v1/ path. Unknown paths under /v1/ are
// 404 not_found, known paths with another method 405 method_not_allowed with
// an Allow header, both as JSON.
func New(cfg Config) (http.Handler, error) {
	switch {
	case cfg.Queue == nil:
		return nil, fmt.Errorf("%w: no Queue", ErrConfig)
	case cfg.Schedules == nil:
		return nil, fmt.Errorf("%w: no Schedules", ErrConfig)
	case cfg.CheckCallback == nil:
		return nil, fmt.Errorf("%w: no CheckCallback", ErrConfig)
	case cfg.MaxBody < 0:
		return nil, fmt.Errorf("%w: MaxBody %d", ErrConfig, cfg.MaxBody)
	}
	if cfg.MaxBody == 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Flow == nil {
		f, err := durable.NewFlow(durable.FlowOptions{Key: durable.HTTPOrigin})
		if err != nil {
			return nil, err
		}
		cfg.Flow = f
	}
	h := &handler{cfg: cfg, log: cfg.Log}
	mux := http.NewServeMux()
	allow := map[string][]string{} // pattern → its methods
	var patterns []string
	for _, rt := range h.routes() {
		mux.Handle(rt.method+" "+rt.pattern, h.audited(rt.op, h.wrap(permit(rt.op, rt.serve))))
		if allow[rt.pattern] == nil {
			patterns = append(patterns, rt.pattern)
		}
		allow[rt.pattern] = append(allow[rt.pattern], rt.method)
	}
	for _, p := range patterns {
		// A pattern without a method is less specific than one with: it gets
		// only the methods no route takes.
		methods := strings.Join(allow[p], ", ")
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", methods)
			apierror.Write(w, apierror.MethodNotAllowed, "", r.Method+" is not allowed here; allowed: "+methods)
		})
	}
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		apierror.Write(w, apierror.NotFound, "", "no such path: "+r.URL.Path)
	})
	return mux, nil
}

// route is one operation: its method, its ServeMux path pattern, and its
// operationId in openapi.json.
type route struct {
	method, pattern, op string
	serve               func(w http.ResponseWriter, r *http.Request) error
}

// routes lists every operation; openapi.json documents exactly these.
func (h *handler) routes() []route {
	rs := []route{
		{"POST", "/v1/tasks", "createTask", h.createTask},
		{"GET", "/v1/tasks", "listTasks", h.listTasks},
		{"GET", "/v1/tasks/{key}", "getTask", h.getTask},
		{"DELETE", "/v1/tasks/{key}", "cancelTask", h.cancelTask},
		{"POST", "/v1/tasks/{key}/reschedule", "rescheduleTask", h.rescheduleTask},
		{"POST", "/v1/tasks/{key}/complete", "completeTask", h.completeTask},
		{"POST", "/v1/tasks/{key}/fail", "failTask", h.failTask},
		{"GET", "/v1/dead", "listDead", h.listDead},
		{"POST", "/v1/dead/{key}/requeue", "requeueDead", h.requeueDead},
		{"POST", "/v1/schedules", "putSchedule", h.putSchedule},
		{"GET", "/v1/schedules", "listSchedules", h.listSchedules},
		{"GET", "/v1/schedules/{name}", "getSchedule", h.getSchedule},
		{"DELETE", "/v1/schedules/{name}", "deleteSchedule", h.deleteSchedule},
		{"GET", "/v1/stats", "stats", h.stats},
		{"POST", "/v1/pause", "pause", h.pause},
		{"POST", "/v1/resume", "resume", h.resume},
		{"GET", "/v1/limits", "listLimits", h.listLimits},
		{"PUT", "/v1/limits/{origin}", "putLimit", h.putLimit},
		{"DELETE", "/v1/limits/{origin}", "deleteLimit", h.deleteLimit},
	}
	slices.SortStableFunc(rs, func(a, b route) int { return strings.Compare(a.pattern, b.pattern) })
	return rs
}

type handler struct {
	cfg Config
	log *slog.Logger
}
