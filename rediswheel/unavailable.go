package rediswheel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/redis/go-redis/v9"
)

// transientReplies start the error replies of a server or cluster that
// cannot answer now, rather than of a command that was wrong: loading its
// data, a slot moving or the cluster down, a failover under way, a
// replica, a script running past its time limit, too few replicas.
var transientReplies = []string{"LOADING", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "READONLY", "BUSY", "NOREPLICAS"}

// unavailable wraps durable.ErrUnavailable around *errp when retrying may
// heal it (durable's Store contract): a network error (refused, reset,
// timed out), a cut reply, a closed client or its pool timing out, the
// call's deadline, or one of transientReplies. Every durable.Store method
// defers it; an error that wraps durable.ErrUnrecoverable is left alone.
func unavailable(errp *error) {
	err := *errp
	if err == nil || errors.Is(err, durable.ErrUnrecoverable) || errors.Is(err, durable.ErrUnavailable) {
		return
	}
	var ne net.Error
	var re redis.Error
	transient := errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, redis.ErrClosed) || errors.Is(err, redis.ErrPoolTimeout) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
	if !transient && errors.As(err, &re) {
		for _, p := range transientReplies {
			if strings.HasPrefix(re.Error(), p) {
				transient = true
			}
		}
	}
	if transient {
		*errp = fmt.Errorf("%w: %w", durable.ErrUnavailable, err)
	}
}

// Unavailable returns err wrapping durable.ErrUnavailable when retrying may
// heal it, as every Store method's error does: for an application's own
// calls on the same client (timerd's schedule definitions), so that it
// tells "try again" from a bug as it does for the Queue's.
func Unavailable(err error) error {
	unavailable(&err)
	return err
}
