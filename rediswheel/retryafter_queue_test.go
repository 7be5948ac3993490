package rediswheel

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The error a RetryAfterError carries is the task's last error, as its doc
// promises: Get shows why the task waits (a postponed task reads as retrying,
// as one with any recorded error does), and so does Dead if it later dies.
func TestRetryAfterCauseIsLastError(t *testing.T) {
	q := newQueue(t, standalone(t), Options{Shards: 1})
	ctx := context.Background()
	d := claimOne(t, q, "k")
	// What the worker makes of the handler's RetryAfterError (durable's
	// TestOutcomeOf holds it to that).
	cause := RetryAfterError(time.Hour, errors.New("HTTP 429: slow down"))
	o := outcome{d: d, kind: outcomeLater, delay: time.Hour.Milliseconds(), err: cause.Error()}
	res, err := q.settle(ctx, 0, []outcome{o})
	require.NoError(t, err)
	require.Equal(t, []settleCode{settlePostponed}, res.codes)

	info, err := q.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, "durable: retry after 1h0m0s: HTTP 429: slow down", info.LastError)
	assert.Equal(t, StateRetrying, info.State)
	assert.Zero(t, info.Attempts, "a postponement uses up no attempt")
}
