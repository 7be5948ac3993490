// Package dashboard is timerd's web page under /ui/: server-rendered
// html/template, minimal JavaScript, no build step.
//
// Contract (implemented by the dashboard helper):
//
//	type Config struct { Queue *rediswheel.Queue; Auth *auth.Checker; Namespace string; Log *slog.Logger }
//	func New(cfg Config) (http.Handler, error) // serves the full paths /ui/...; handles its own login
package dashboard

// PLACEHOLDER (server branch): the minimal compiling form of the contract
// above, so internal/server builds before the dashboard helper's package is
// merged. At merge, take the dashboard branch's package and drop from here
// to the end of this file.

import (
	"log/slog"
	"net/http"

	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/go-timingwheel/timingwheel/timerd/internal/auth"
)

type Config struct {
	Queue     *rediswheel.Queue
	Auth      *auth.Checker
	Namespace string
	Log       *slog.Logger
}

func New(cfg Config) (http.Handler, error) {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "dashboard: not merged yet", http.StatusNotImplemented)
	}), nil
}
