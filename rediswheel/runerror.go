package rediswheel

import (
	"strings"

	"github.com/redis/go-redis/v9"
)

// unrecoverable reports whether err, from a claim (which then wraps
// durable.ErrUnrecoverable around it, and Run stops), is a failure that no
// retry will heal without a person changing something: credentials refused
// (NOAUTH, WRONGPASS) or a command denied (NOPERM); a server without EVALSHA
// or EVAL (scripting disabled, or the commands renamed away), which answers
// "ERR unknown command"; or a server that does not speak RESP at all, whose
// answer go-redis cannot parse. Anything else (unreachable, timeouts, LOADING,
// failover, cluster moves) may heal and is retried.
func unrecoverable(err error) bool {
	if redis.IsAuthError(err) || redis.IsPermissionError(err) || redis.HasErrorPrefix(err, "unknown command") {
		return true
	}
	// go-redis has no error type for an unparsable reply, only these texts
	// (internal/proto/reader.go).
	msg := err.Error()
	return strings.Contains(msg, "redis: can't parse") || strings.Contains(msg, "redis: invalid reply")
}
