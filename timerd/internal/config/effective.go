package config

import (
	"log/slog"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// Attrs are the effective settings for the start-up log, one per flag under
// the flag's name (-token-file's is "token"; TestAttrs holds it to
// settings), so an
// operator reads what took effect, whichever of flag, variable or default
// gave it. The token is never shown, only whether there is one; the Redis
// and stream Redis URLs are shown without their passwords.
func (c Config) Attrs() []slog.Attr {
	allow := strings.Join(c.AllowCallback, ",")
	if allow == "" {
		allow = "none (public addresses only)"
	}
	return []slog.Attr{
		slog.String("listen", c.Listen),
		slog.Bool("token", c.Token != ""), // -token-file's or TIMERD_TOKEN's
		slog.String("store", c.storeAttr()),
		slog.String("store-file", c.StoreFile),
		slog.String("data-dir", c.DataDir),
		slog.String("redis-url", redactURL(c.RedisURL)),
		slog.Bool("redis-cluster", c.RedisCluster),
		slog.String("namespace", c.Namespace),
		slog.Int("shards", c.Shards),
		slog.Int("concurrency", c.Concurrency),
		slog.Bool("workers", c.Workers),
		slog.String("allow-callback", allow),
		slog.Int64("max-body", c.MaxBody),
		slog.Float64("rate", c.Rate),
		slog.String("retention", c.Retention.String()),
		slog.Int("history", c.History),
		slog.String("shutdown-grace", c.ShutdownGrace.String()),
		slog.String("lease", c.Lease.String()),
		slog.Int("max-attempts", c.MaxAttempts),
		slog.String("backoff-base", c.BackoffBase.String()),
		slog.String("backoff-limit", c.BackoffLimit.String()),
		slog.String("callback-timeout", c.CallbackTimeout.String()),
		slog.String("log-level", c.LogLevel.String()),
		slog.Int("origin-concurrency", c.Flow.Default.Concurrency),
		slog.Float64("origin-rate", c.Flow.Default.Rate),
		slog.Int("origin-burst", c.Flow.Default.Burst),
		slog.String("origin-limits", c.originLimitsAttr()),
		slog.Int("breaker-failures", c.Flow.Breaker.Failures),
		slog.String("breaker-cooldown", c.Flow.Breaker.CoolDown.String()),
		slog.String("stream-redis-url", c.streamRedisAttr()),
		slog.Bool("stream-redis-cluster", c.Streams.RedisCluster),
		slog.Int64("stream-max-len", c.Streams.MaxLen),
		slog.String("stream-allow", c.streamAllowAttr()),
		slog.String("tokens-file", c.tokensAttr()),
		slog.String("completion-key-file", c.completionKeyAttr()),
	}
}

// streamRedisAttr says where stream tasks' messages go, without a password.
func (c Config) streamRedisAttr() string {
	switch {
	case c.Streams.RedisURL != "":
		return redactURL(c.Streams.RedisURL)
	case c.Store == StoreRedis:
		return "the store's"
	}
	return "none (stream tasks refused)"
}

// originLimitsAttr is -origin-limits as it took effect, by origin.
func (c Config) originLimitsAttr() string {
	parts := make([]string, 0, len(c.Flow.Origins))
	for _, o := range slices.Sorted(maps.Keys(c.Flow.Origins)) {
		parts = append(parts, o+"="+c.Flow.Origins[o].String())
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ";")
}

// storeAttr names the store and where it is: "sqlite:PATH", a PostgreSQL or
// Redis URL without its password.
func (c Config) storeAttr() string {
	switch c.Store {
	case StoreSQLite:
		return "sqlite:" + c.StorePath
	case StorePostgres:
		return redactURL(c.StoreURL)
	}
	return redactURL(c.RedisURL)
}

// redactURL is u with its password replaced, as url.URL.Redacted does; a URL
// that does not parse (Parse checked it already) is not shown at all.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable)"
	}
	return p.Redacted()
}

// streamAllowAttr is -stream-allow, or what its absence means.
func (c Config) streamAllowAttr() string {
	if len(c.Streams.Allow) == 0 {
		return "none (stream tasks refused)"
	}
	return strings.Join(c.Streams.Allow, ",")
}
