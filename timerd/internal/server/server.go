// Package server puts timerd together: the API under /v1/ (behind auth and
// the rate limit), the dashboard under /ui/, /healthz, /readyz and /metrics,
// and the workers that deliver callbacks (rediswheel Run with a Mux whose
// HTTP handler uses the ssrf Guard's client). Tests start it in process;
// cmd/timerd only parses flags and calls it.
//
// Contract (implemented by the server helper):
//
//	func New(cfg config.Config, log *slog.Logger) (*Server, error) // connects to Redis, makes the Queue
//	func (s *Server) Handler() http.Handler                        // everything above, for httptest
//	func (s *Server) Run(ctx context.Context, ln net.Listener) error
//	// Run serves on ln and runs the workers and the schedules until ctx ends, then shuts down
//	// gracefully: stops accepting, finishes requests, gives in-flight callbacks ShutdownGrace, then
//	// releases them (rediswheel), and returns nil.
package server
