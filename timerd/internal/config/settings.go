package config

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-timingwheel/timingwheel/timerd/internal/ssrf"
)

// A setting is one row of README.md's configuration table: if a row
// changes there, change it here, and the other way round.
type setting struct {
	name, env, def, usage string
	isBool                bool
	apply                 func(c *Config, v string) error
}

// Limits of the numeric settings. maxShards and maxHistory are rediswheel's
// MaxShards and MaxHistoryLen; minLease its MinLease.
const (
	maxShards  = 1024
	maxHistory = 1000
	minLease   = 100 * time.Millisecond
	// maxNamespace and the characters refused are rediswheel's namespace
	// rule (options.go), checked here so the error names the flag.
	maxNamespace = 128
)

var settings = []setting{
	{name: "listen", env: "TIMERD_LISTEN", def: "127.0.0.1:8080",
		usage: "host:port to serve on; a non-loopback address needs a token",
		apply: func(c *Config, v string) error { c.Listen = v; return nil }},
	{name: "token-file", env: "TIMERD_TOKEN_FILE",
		usage: "file whose first line is the bearer token (else TIMERD_TOKEN)",
		apply: func(c *Config, v string) (err error) {
			if v != "" {
				c.Token, err = firstLine(v)
			}
			return err
		}},
	{name: "store", env: "TIMERD_STORE",
		usage: "where tasks live: sqlite (a file in -data-dir, one process), sqlite:PATH, redis://… or rediss://… (go-redis URL), postgres://… (pgx URL; run timerd migrate first)",
		apply: func(c *Config, v string) error { c.store = v; return nil }},
	{name: "store-file", env: "TIMERD_STORE_FILE",
		usage: "file whose first line is -store's value, so that a URL's password is neither in the command line nor in the environment",
		apply: func(c *Config, v string) error {
			if v == "" {
				return nil
			}
			if c.store != "" {
				return errors.New("give the store once: -store (TIMERD_STORE) or -store-file, not both")
			}
			store, err := firstLine(v)
			if err != nil {
				return err
			}
			c.store, c.StoreFile = store, v
			return nil
		}},
	{name: "data-dir", env: "TIMERD_DATA_DIR", def: "timerd-data",
		usage: "directory of the default SQLite store's file, " + sqliteFile,
		apply: func(c *Config, v string) error {
			if v == "" {
				return errors.New("want a directory")
			}
			c.DataDir = v
			return nil
		}},
	{name: "redis-url", env: "TIMERD_REDIS_URL",
		usage: "the Redis store's go-redis URL, as -store redis://… (kept from before -store)",
		apply: func(c *Config, v string) error { c.RedisURL = v; return nil }},
	{name: "redis-cluster", env: "TIMERD_REDIS_CLUSTER", def: "false", isBool: true,
		usage: "parse the Redis store's URL (-store redis://…, or -redis-url) as a cluster URL (?addr=host:port for more seeds)",
		apply: func(c *Config, v string) (err error) { c.RedisCluster, err = parseBool(v); return err }},
	{name: "namespace", env: "TIMERD_NAMESPACE", def: "timerd",
		usage: "namespace of the store: the processes of one service share it",
		apply: func(c *Config, v string) error {
			if v == "" || len(v) > maxNamespace || strings.ContainsAny(v, "{} \t\r\n") {
				return fmt.Errorf("want 1..%d bytes without braces or spaces", maxNamespace)
			}
			c.Namespace = v
			return nil
		}},
	{name: "shards", env: "TIMERD_SHARDS", def: "16",
		usage: "Redis store shards: the same in every process of a namespace",
		apply: func(c *Config, v string) (err error) { c.Shards, err = parseInt(v, 1, maxShards); return err }},
	{name: "concurrency", env: "TIMERD_CONCURRENCY", def: "64",
		usage: "callbacks in flight per process",
		apply: func(c *Config, v string) (err error) { c.Concurrency, err = parseInt(v, 1, math.MaxInt32); return err }},
	{name: "workers", env: "TIMERD_WORKERS", def: "true", isBool: true,
		usage: "deliver callbacks; false: API only",
		apply: func(c *Config, v string) (err error) { c.Workers, err = parseBool(v); return err }},
	{name: "allow-callback", env: "TIMERD_ALLOW_CALLBACK",
		usage: "comma-separated CIDRs or host:port allowed as callback destinations despite being private",
		apply: func(c *Config, v string) error {
			c.AllowCallback = nil
			for _, a := range strings.Split(v, ",") {
				if a = strings.TrimSpace(a); a != "" {
					c.AllowCallback = append(c.AllowCallback, a)
				}
			}
			_, err := ssrf.New(c.AllowCallback)
			return err
		}},
	{name: "max-body", env: "TIMERD_MAX_BODY", def: "1MiB",
		usage: "request body limit: bytes, or with a KiB, MiB or GiB suffix",
		apply: func(c *Config, v string) (err error) { c.MaxBody, err = parseSize(v); return err }},
	{name: "rate", env: "TIMERD_RATE", def: "1000",
		usage: "API requests per second per client address (burst the same); 0: no limit",
		apply: func(c *Config, v string) error {
			r, err := strconv.ParseFloat(v, 64)
			if err != nil || r < 0 || math.IsInf(r, 0) || math.IsNaN(r) {
				return errors.New("want a number ≥ 0")
			}
			c.Rate = r
			return nil
		}},
	{name: "retention", env: "TIMERD_RETENTION", def: "24h",
		usage: "finished tasks stay readable this long",
		apply: func(c *Config, v string) (err error) { c.Retention, err = parseDuration(v, 0); return err }},
	{name: "history", env: "TIMERD_HISTORY", def: "10",
		usage: "deliveries kept per task",
		apply: func(c *Config, v string) (err error) { c.History, err = parseInt(v, 1, maxHistory); return err }},
	{name: "shutdown-grace", env: "TIMERD_SHUTDOWN_GRACE", def: "30s",
		usage: "in-flight callbacks get this long on SIGTERM before they are released",
		apply: func(c *Config, v string) (err error) { c.ShutdownGrace, err = parseDuration(v, 0); return err }},
	{name: "lease", env: "TIMERD_LEASE", def: "30s",
		usage: "a task claimed by a process that dies is delivered again after this long",
		apply: func(c *Config, v string) (err error) { c.Lease, err = parseDuration(v, minLease); return err }},
	{name: "max-attempts", env: "TIMERD_MAX_ATTEMPTS", def: "25",
		usage: "deliveries of a task before it is dead, unless the task gives max_attempts",
		apply: func(c *Config, v string) (err error) { c.MaxAttempts, err = parseInt(v, 1, math.MaxInt32); return err }},
	{name: "backoff-base", env: "TIMERD_BACKOFF_BASE", def: "1s",
		usage: "after failed attempt n a task waits a random delay in [0, min(backoff-limit, backoff-base*2^(n-1))]",
		apply: func(c *Config, v string) (err error) {
			c.BackoffBase, err = parseDuration(v, time.Millisecond)
			return err
		}},
	{name: "backoff-limit", env: "TIMERD_BACKOFF_LIMIT", def: "1h",
		usage: "the most a retry waits (see backoff-base)",
		apply: func(c *Config, v string) (err error) {
			c.BackoffLimit, err = parseDuration(v, time.Millisecond)
			return err
		}},
	{name: "callback-timeout", env: "TIMERD_CALLBACK_TIMEOUT", def: "30s",
		usage: "bounds one delivery of a callback that gives no timeout",
		apply: func(c *Config, v string) (err error) {
			c.CallbackTimeout, err = parseDuration(v, time.Millisecond)
			return err
		}},
	{name: "log-level", env: "TIMERD_LOG_LEVEL", def: "info",
		usage: "debug, info, warn or error",
		apply: func(c *Config, v string) error {
			if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
				return errors.New("want debug, info, warn or error")
			}
			return nil
		}},
}

// firstLine returns the first line of the file at path, without surrounding
// spaces: a token (-token-file) or a store (-store-file). An empty one is an
// error, not an open API or the default store.
func firstLine(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	if line = strings.TrimSpace(line); line == "" {
		return "", errors.New("the first line is empty")
	}
	return line, nil
}

// checkRedisURL parses the URL as go-redis will in server.New, so a bad URL
// stops timerd here. It runs after every setting is read, since
// -redis-cluster decides the parser. The error names from, the setting
// that gave the URL; it is go-redis's and does not repeat the URL, which may
// hold a password.
func checkRedisURL(c Config, from string) error {
	var err error
	if c.RedisCluster {
		_, err = redis.ParseClusterURL(c.RedisURL)
	} else {
		_, err = redis.ParseURL(c.RedisURL)
	}
	if err != nil {
		return fmt.Errorf("config: %s: %w", from, err)
	}
	return nil
}

func parseBool(v string) (bool, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, errors.New("want true or false")
	}
	return b, nil
}

func parseInt(v string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("want an integer in %d..%d", lo, hi)
	}
	return n, nil
}

func parseDuration(v string, least time.Duration) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d < least {
		return 0, fmt.Errorf("want a duration ≥ %v, such as 30s", least)
	}
	return d, nil
}

// parseSize reads a positive byte count: "1048576", "512KiB", "1MiB", "1GiB".
func parseSize(v string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if s, ok := strings.CutSuffix(v, u.suffix); ok {
			v, mult = strings.TrimSpace(s), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64/mult {
		return 0, errors.New("want a positive size in bytes, KiB, MiB or GiB")
	}
	return n * mult, nil
}
