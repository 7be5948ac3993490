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
// `timerd help [COMMAND]` and `timerd version` print to stdout and exit 0;
// `-h` after any command shows that command's flags only.
//
// timerd serves only on a store it was given (-store, -data-dir or
// -redis-url, or their variables): without one it exits 2 saying how to
// name one, rather than make a data directory wherever it was started. A
// bare `timerd` shows the help too.
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
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/go-timingwheel/timingwheel/timerd/internal/cli"
	"github.com/go-timingwheel/timingwheel/timerd/internal/config"
	"github.com/go-timingwheel/timingwheel/timerd/internal/server"
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) > 0 && cli.IsCommand(args[0]) {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		return cli.Run(ctx, args, getenv, stdout, stderr)
	}
	if len(args) > 0 {
		switch args[0] {
		case "migrate":
			return migrate(args[1:], getenv, stderr)
		case "help":
			return help(args[1:], stdout, stderr)
		case "version":
			fmt.Fprintln(stdout, version())
			return 0
		}
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
	if cfg.DefaultStore {
		if len(args) == 0 {
			fmt.Fprint(stderr, topUsage)
			fmt.Fprintln(stderr)
		}
		fmt.Fprint(stderr, noStore)
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
		migrateUsage(stderr)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "timerd migrate: %v\n", err)
		return 2
	}
	if cfg.DefaultStore {
		fmt.Fprint(stderr, noStore)
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

// topUsage is `timerd help`: every command, one line each.
const topUsage = `usage: timerd [flags]                 serve the API, the dashboard and the workers (timerd -h: the flags)
       timerd migrate [flags]         bring the store to this timerd's schema, then exit
       timerd tasks get|cancel|list|reschedule|complete|fail
                                      read, search and change tasks through a running timerd's API
       timerd dead requeue            requeue dead tasks (all, or those a filter matches)
       timerd schedules list|get|put|delete
                                      the periodic schedules
       timerd stats|pause|resume      tasks per state; stop and restart deliveries
       timerd receiver                a callback receiver for trying timerd
       timerd help [COMMAND]          this, or one command's usage and flags
       timerd version                 this timerd's version and build

timerd COMMAND -h shows one command's flags.
`

// noStore is what timerd says when it was given no store.
const noStore = `timerd: no store given: name one with -store (sqlite:PATH, postgres://..., redis://...), -store-file FILE
or -data-dir DIR, or TIMERD_STORE, TIMERD_STORE_FILE or TIMERD_DATA_DIR; for a trial on this machine: timerd -data-dir ./timerd-data
`

// help is timerd help [COMMAND...].
func help(what []string, stdout, stderr io.Writer) int {
	switch {
	case len(what) == 0:
		fmt.Fprint(stdout, topUsage)
	case what[0] == "migrate":
		migrateUsage(stdout)
	case what[0] == "serve":
		config.Usage(stdout)
	case cli.IsCommand(what[0]):
		cli.Help(stdout, what...)
	default:
		fmt.Fprintf(stderr, "timerd help: no command %q\n\n%s", strings.Join(what, " "), topUsage)
		return 2
	}
	return 0
}

// migrateUsage lists the flags migrate reads (config.StoreFlags).
func migrateUsage(w io.Writer) {
	fmt.Fprintf(w, "usage: timerd migrate [flags]\n\n  brings the store to this timerd's schema and exits: give it the server's store flags\n  (the server's other flags are accepted and ignored)\n\n")
	config.UsageOf(w, config.StoreFlags)
}

// version is this binary's module version, Go version and, when it was
// built from a checkout, its commit.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "timerd (unknown build)"
	}
	v := "timerd " + bi.Main.Version + " " + bi.GoVersion
	var rev, at, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = " (modified)"
			}
		}
	}
	if rev != "" {
		v += " commit " + rev + modified + " " + at
	}
	return v
}
