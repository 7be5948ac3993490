// Command timerd serves the delayed-task API and delivers its callbacks; see
// the module's README.md. It parses the configuration (flags, then the
// environment), logs JSON to stderr, listens, and runs the server until
// SIGINT or SIGTERM, which shut it down gracefully.
//
// Exit codes: 0 after a clean shutdown, 1 when the server fails, 2 for a bad
// configuration (the message says which flag).
//
// With a command as its first argument (timerd tasks get KEY, timerd dead
// requeue -all, ...) it is instead the operators' command line, which calls
// a running timerd's API (package cli). `timerd migrate [flags]` brings the
// store the flags name to this timerd's schema and exits (0 done, 1 failed,
// 2 bad configuration): a PostgreSQL store must be migrated before timerd
// serves on it; the default SQLite file is migrated when it is new.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-timingwheel/timingwheel/timerd/internal/cli"
	"github.com/go-timingwheel/timingwheel/timerd/internal/config"
	"github.com/go-timingwheel/timingwheel/timerd/internal/server"
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stderr))
}

func run(args []string, getenv func(string) string, stderr io.Writer) int {
	if len(args) > 0 && cli.IsCommand(args[0]) {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		return cli.Run(ctx, args, getenv, os.Stdout, stderr)
	}
	if len(args) > 0 && args[0] == "migrate" {
		return migrate(args[1:], getenv, stderr)
	}
	cfg, err := config.Parse(args, getenv)
	if errors.Is(err, flag.ErrHelp) {
		config.Usage(stderr)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "timerd: %v\n", err)
		return 2
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	slog.SetDefault(log)

	srv, err := server.New(cfg, log)
	if err != nil {
		fmt.Fprintf(stderr, "timerd: %v\n", err)
		return 2
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		srv.Close()
		log.Error("listen", "addr", cfg.Listen, "err", err)
		return 1
	}
	if cfg.Token == "" {
		log.Warn("no token: the API and dashboard are open to anyone who can reach the loopback address")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := srv.Run(ctx, ln); err != nil {
		return 1
	}
	return 0
}

// migrate runs server.Migrate on the store the flags name.
func migrate(args []string, getenv func(string) string, stderr io.Writer) int {
	cfg, err := config.Parse(args, getenv)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(stderr, "usage: timerd migrate [flags]: the same -store (or -data-dir, -redis-url) and -namespace as the server\n\n")
		config.Usage(stderr)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "timerd migrate: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	what, err := server.Migrate(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "timerd migrate: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "timerd migrate: %s\n", what)
	return 0
}
