// Package api is timerd's /v1/ JSON API (README.md, "API"; openapi.json).
//
// Contract (implemented by the API helper):
//
//	type Config struct {
//	    Queue         *rediswheel.Queue
//	    Schedules     *schedules.Store
//	    CheckCallback func(ctx context.Context, u *url.URL) error // ssrf.Guard.CheckURL; errors wrapping ssrf.ErrForbidden → 400 destination_forbidden
//	    MaxBody       int64
//	    Log           *slog.Logger
//	}
//	func New(cfg Config) (http.Handler, error) // serves the full paths /v1/...; no auth (the server wraps it)
package api

// PLACEHOLDER (server branch): the minimal compiling form of the contract
// above, so internal/server builds before the API helper's package is
// merged. At merge, take the API branch's api package and drop from here to
// the end of this file.

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/go-timingwheel/timingwheel/timerd/internal/schedules"
)

type Config struct {
	Queue         *rediswheel.Queue
	Schedules     *schedules.Store
	CheckCallback func(ctx context.Context, u *url.URL) error
	MaxBody       int64
	Log           *slog.Logger
}

func New(cfg Config) (http.Handler, error) {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "api: not merged yet", http.StatusNotImplemented)
	}), nil
}
