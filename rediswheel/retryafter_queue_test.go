package rediswheel

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHTTPRetryAfterQueue runs a callback answered "429, Retry-After: 1" twice through a real
// Queue on REDISWHEEL_ADDR with MaxAttempts 1: the postponements use up no attempt, so the third
// delivery succeeds, and none comes before the receiver asked.
func TestHTTPRetryAfterQueue(t *testing.T) {
	q := newQueue(t, standalone(t), Options{Shards: 2, Lease: 5 * time.Second, MaxAttempts: 1})
	var mu sync.Mutex
	var arrivals []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		arrivals = append(arrivals, time.Now())
		if len(arrivals) <= 2 {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "slow down", http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()
	stop := run(t, q, HTTPHandler(srv.Client()))

	added, err := q.AddHTTP(context.Background(), "hook", HTTPTask{URL: srv.URL, Method: "POST"}, time.Now())
	require.NoError(t, err)
	require.True(t, added)
	eventually(t, patience, "the callback done", func() bool {
		mu.Lock()
		n := len(arrivals)
		mu.Unlock()
		return n == 3 && totals(t, q) == ShardStats{}
	})
	stop()

	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < len(arrivals); i++ {
		// Retry-After is whole seconds and due times whole milliseconds of the Redis clock: allow
		// for the rounding and the clocks, never for a delivery that ignored the header.
		assert.GreaterOrEqual(t, arrivals[i].Sub(arrivals[i-1]), 900*time.Millisecond, "delivery %d came early", i+1)
	}
	dead, err := q.Dead(context.Background(), 10)
	require.NoError(t, err)
	assert.Empty(t, dead, "a RetryAfter is not a failed attempt")
}

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
