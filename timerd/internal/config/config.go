// Package config is timerd's configuration: flags with environment
// fallbacks (README.md, "Configuration"), validated before anything starts.
//
// Each setting comes from its flag if the flag is given, else from its
// environment variable if that is non-empty, else from its default. Parse
// checks every value and names the flag (and its variable) of the first bad
// one, so a process with a bad configuration stops before it touches its store.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/go-timingwheel/timingwheel/timerd/internal/auth"
)

// ErrNoToken is returned by Parse for a listen address that is not loopback
// when no token is configured: the API would be open to anyone who can reach
// it.
var ErrNoToken = errors.New("config: a non-loopback -listen address needs a token (-token-file, TIMERD_TOKEN or -tokens-file)")

// Config is timerd's configuration. The zero Config is not valid: get one
// from Parse.
type Config struct {
	Listen string // host:port; loopback unless Token is set
	Token  string // the bearer token; "" only on a loopback Listen
	// Store is where tasks and schedules are kept: StoreSQLite (the
	// default), StorePostgres or StoreRedis.
	Store         string
	StorePath     string // StoreSQLite: the file
	StoreURL      string // StorePostgres: the pgx connection URL
	StoreFile     string // the -store-file the store was read from; "" if none
	DataDir       string // where the default SQLite file lives
	RedisURL      string // StoreRedis: go-redis URL, credentials and TLS (rediss://) included
	RedisCluster  bool   // RedisURL is a cluster URL (redis.ParseClusterURL)
	Namespace     string // the store's namespace: every process of one service shares it
	Shards        int    // Redis shards: the same in every process of a namespace
	store         string // -store as given, until resolveStore reads it
	Concurrency   int    // callbacks in flight per process
	Workers       bool   // deliver callbacks; false: API only
	AllowCallback []string
	MaxBody       int64   // request body limit, bytes
	Rate          float64 // API requests per second per client address; 0: no limit
	Retention     time.Duration
	History       int
	ShutdownGrace time.Duration
	// Lease is durable's Options.Lease: how long a task claimed by a process that
	// then dies waits before another process delivers it.
	Lease time.Duration
	// MaxAttempts, BackoffBase and BackoffLimit are durable's MaxAttempts
	// and ExponentialBackoff(BackoffBase, BackoffLimit) for tasks without
	// their own; CallbackTimeout bounds a callback whose task gives none.
	MaxAttempts               int
	BackoffBase, BackoffLimit time.Duration
	CallbackTimeout           time.Duration
	LogLevel                  slog.Level
	// Flow is the flow control of callbacks per origin (limits.go).
	Flow Flow
	// Streams is where stream tasks' messages go (streams.go).
	Streams Streams
	// Tokens are -tokens-file's named credentials (tokens.go); Credentials
	// adds Token's.
	Tokens []auth.Credential
	// DefaultStore is set when no -store, -data-dir or -redis-url (nor
	// their variables) was given, so that Store is the SQLite file in the
	// default -data-dir: timerd refuses to start so, rather than make a
	// data directory where it happens to run.
	DefaultStore bool
	// CompletionKeys sign (the first) and verify (all) completion
	// credentials; none: a key derived from the admin token (tokens.go).
	CompletionKeys [][]byte
}

// Parse reads the configuration from args (without the program name) and
// getenv (os.Getenv in main). It returns ErrNoToken for a non-loopback
// Listen without a token, flag.ErrHelp for -h, and for any other bad value
// an error naming its flag. It prints nothing; Usage does.
func Parse(args []string, getenv func(string) string) (Config, error) {
	fs := flag.NewFlagSet("timerd", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	values := make([]*value, len(settings))
	for i, s := range settings {
		values[i] = &value{isBool: s.isBool}
		fs.Var(values[i], s.name, s.usage)
	}
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("config: unexpected argument %q (every setting is a flag)", fs.Arg(0))
	}
	var c Config
	c.DefaultStore = true
	for i, s := range settings {
		v := s.def
		given := true
		if values[i].set {
			v = values[i].s
		} else if e := getenv(s.env); e != "" {
			v = e
		} else {
			given = false
		}
		if given && (s.name == "store" || s.name == "store-file" || s.name == "data-dir" || s.name == "redis-url") {
			c.DefaultStore = false
		}
		if err := s.apply(&c, v); err != nil {
			return Config{}, fmt.Errorf("config: -%s (%s) %q: %w", s.name, s.env, v, err)
		}
	}
	if err := resolveStore(&c); err != nil {
		return Config{}, err
	}
	if err := checkStreams(c); err != nil {
		return Config{}, err
	}
	if c.BackoffLimit < c.BackoffBase {
		return Config{}, fmt.Errorf("config: -backoff-limit (TIMERD_BACKOFF_LIMIT) %v is below -backoff-base (TIMERD_BACKOFF_BASE) %v", c.BackoffLimit, c.BackoffBase)
	}
	if c.Token == "" {
		c.Token = getenv("TIMERD_TOKEN")
	}
	if err := checkCredentials(c); err != nil {
		return Config{}, err
	}
	if err := checkListen(c.Listen, len(c.Credentials()) > 0); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Usage writes the flags, their variables and defaults to w.
func Usage(w io.Writer) {
	fmt.Fprintf(w, "usage: timerd [flags]\n       timerd tasks|dead|schedules|receiver ... (the command line: timerd tasks -h)\n\nEach flag falls back to its environment variable; the admin token is read from -token-file or TIMERD_TOKEN, named tokens from -tokens-file.\nOne of -store, -store-file, -data-dir or -redis-url (or its variable) is required: timerd makes no data directory unasked.\n\n")
	for _, s := range settings {
		fmt.Fprintf(w, "  -%s (%s, default %q)\n    \t%s\n", s.name, s.env, s.def, s.usage)
	}
}

// value is a flag that remembers whether it was given, so an unset flag
// falls back to the environment; isBool lets "-workers" stand for
// "-workers=true".
type value struct {
	s      string
	set    bool
	isBool bool
}

func (v *value) String() string   { return v.s }
func (v *value) IsBoolFlag() bool { return v.isBool }
func (v *value) Set(s string) error {
	v.s, v.set = s, true
	return nil
}
