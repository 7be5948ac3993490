package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// Streams is where the messages of stream tasks go (README.md, "Hand-off to
// a stream"): a Redis of their own (RedisURL), else the store's Redis when
// the store is Redis, else nowhere, and stream tasks are refused at create.
type Streams struct {
	RedisURL     string // go-redis URL; "": the store's Redis, if any
	RedisCluster bool   // RedisURL is a cluster URL (redis.ParseClusterURL)
	// MaxLen bounds each stream at about this many messages
	// (rediswheel.StreamMaxLen, XADD MAXLEN ~); 0: no bound.
	MaxLen int64
	// Allow is the streams that stream tasks may name: exact names, and
	// prefixes written with a trailing "*" (streamallow.go). Empty: none,
	// and stream tasks are refused.
	Allow []string
}

// The stream rows of README.md's configuration table, after the flow
// control's (limits.go): if a row changes there, change it here.
var streamSettings = []setting{
	{name: "stream-redis-url", env: "TIMERD_STREAM_REDIS_URL",
		usage: "go-redis URL of the Redis that stream tasks append to; default: the store's, when the store is Redis (else stream tasks are refused)",
		apply: func(c *Config, v string) error { c.Streams.RedisURL = v; return nil }},
	{name: "stream-redis-cluster", env: "TIMERD_STREAM_REDIS_CLUSTER", def: "false", isBool: true,
		usage: "parse -stream-redis-url as a cluster URL (?addr=host:port for more seeds)",
		apply: func(c *Config, v string) (err error) { c.Streams.RedisCluster, err = parseBool(v); return err }},
	{name: "stream-allow", env: "TIMERD_STREAM_ALLOW",
		usage: "comma-separated streams that stream tasks may append to: names, and prefixes ending in * (orders,billing:*); never the store's own keys; empty: stream tasks refused",
		apply: func(c *Config, v string) error { c.Streams.Allow = splitAllow(v); return nil }},
	{name: "stream-max-len", env: "TIMERD_STREAM_MAX_LEN", def: "0",
		usage: "keep each stream at about this many messages (XADD MAXLEN ~), dropping the oldest whether read or not; 0: no bound",
		apply: func(c *Config, v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return fmt.Errorf("want an integer in 0..%d", int64(math.MaxInt64))
			}
			c.Streams.MaxLen = n
			return nil
		}},
}

func init() { settings = append(settings, streamSettings...) }

// checkStreams runs after every setting is read, since -stream-redis-cluster
// decides the URL's parser. As checkRedisURL, its errors do not repeat the
// URL, which may hold a password.
func checkStreams(c Config) error {
	s := c.Streams
	if err := checkAllow(s.Allow, c.Namespace); err != nil {
		return fmt.Errorf("config: -stream-allow (TIMERD_STREAM_ALLOW): %w", err)
	}
	if s.RedisURL == "" {
		if s.RedisCluster {
			return errors.New("config: -stream-redis-cluster (TIMERD_STREAM_REDIS_CLUSTER) without -stream-redis-url (TIMERD_STREAM_REDIS_URL): the store's Redis is read as -redis-cluster says")
		}
		return nil
	}
	var err error
	if s.RedisCluster {
		_, err = redis.ParseClusterURL(s.RedisURL)
	} else {
		_, err = redis.ParseURL(s.RedisURL)
	}
	if err != nil {
		return fmt.Errorf("config: -stream-redis-url (TIMERD_STREAM_REDIS_URL): %w", err)
	}
	return nil
}
