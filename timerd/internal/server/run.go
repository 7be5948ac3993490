package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// HTTP server limits. Bodies are bounded by -max-body in the API; these
// bound slow clients: a header must arrive within 10s, a whole request
// within 30s, and a response is cut after 60s.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 60 * time.Second
	idleTimeout       = 2 * time.Minute
	maxHeaderBytes    = 64 << 10
	// minHTTPShutdown is the least time open requests get to finish on
	// shutdown, when ShutdownGrace is shorter.
	minHTTPShutdown = 5 * time.Second
)

// Run serves on ln, and runs the workers (if cfg.Workers) and the periodic
// schedules, until ctx ends or one of them fails. Then it shuts down:
//
//  1. the listener closes and open requests get ShutdownGrace (at least 5s)
//     to finish, after which their connections are closed;
//  2. meanwhile the workers claim nothing more and give in-flight callbacks
//     ShutdownGrace, then cancel them and release their tasks to the store,
//     due at once with the attempt not counted (durable's Run): nothing is
//     lost, another process delivers them;
//  3. the schedules stop and the store closes.
//
// Run returns nil when ctx ended and every step was clean; otherwise the
// errors: the listener's, the workers' (durable.ErrUnrecoverable: the store
// refuses our credentials, say), an HTTP shutdown that ran out of time. Run
// may be called once.
func (s *Server) Run(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	// stop ends with ctx, or when any part fails: every part then stops.
	stop, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	serveErr := make(chan error, 1)
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		} else {
			err = fmt.Errorf("server: serve: %w", err)
			cancel(err)
		}
		serveErr <- err
	}()
	workersErr := make(chan error, 1)
	if s.cfg.Workers {
		h := mintCompletion(fenceStreams(workerHandler(s.guard, s.cfg.CallbackTimeout, s.backend.streams, s.cfg.Streams.MaxLen), s.checkStream), s.completionKeys())
		go func() {
			err := s.queue.Run(stop, h)
			if err != nil {
				err = fmt.Errorf("server: workers: %w", err)
				cancel(err)
			}
			workersErr <- err
		}()
	} else {
		workersErr <- nil
	}
	schedulesErr := make(chan error, 1)
	go func() { schedulesErr <- s.schedules.Run(stop) }()
	// Every effective setting, so an operator need not work out which of
	// flag, variable and default took effect.
	s.log.LogAttrs(ctx, slog.LevelInfo, "listening", append([]slog.Attr{slog.String("addr", ln.Addr().String())},
		s.cfg.Attrs()...)...)
	// The flow control in effect, -origin-limits and the defaults resolved.
	s.log.Info("flow control", flowLog(s.flow)...)

	<-stop.Done()
	s.log.Info("shutting down", "cause", context.Cause(stop).Error(), "grace", s.cfg.ShutdownGrace.String())
	var errs []error
	httpCtx, httpCancel := context.WithTimeout(context.Background(), max(s.cfg.ShutdownGrace, minHTTPShutdown))
	if err := srv.Shutdown(httpCtx); err != nil {
		errs = append(errs, fmt.Errorf("server: HTTP shutdown: %w", err))
		srv.Close()
	}
	httpCancel()
	errs = append(errs, <-serveErr, <-workersErr)
	if err := <-schedulesErr; err != nil {
		errs = append(errs, fmt.Errorf("server: schedules: %w", err))
	}
	if err := s.backend.close(); err != nil {
		errs = append(errs, fmt.Errorf("server: close the %s store: %w", s.backend.kind, err))
	}
	err := errors.Join(errs...)
	if err != nil {
		s.log.Error("stopped", "err", err)
	} else {
		s.log.Info("stopped")
	}
	return err
}
