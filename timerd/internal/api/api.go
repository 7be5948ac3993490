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
