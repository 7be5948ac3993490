// Package dashboard is timerd's web page under /ui/: server-rendered
// html/template, minimal JavaScript, no build step.
//
// Contract (implemented by the dashboard helper):
//
//	type Config struct { Queue *rediswheel.Queue; Auth *auth.Checker; Namespace string; Log *slog.Logger }
//	func New(cfg Config) (http.Handler, error) // serves the full paths /ui/...; handles its own login
package dashboard
