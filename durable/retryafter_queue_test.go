package durable_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHTTPRetryAfterQueue runs a callback answered "429, Retry-After: 1" twice through a
// Queue with MaxAttempts 1: the postponements use up no attempt, so the third
// delivery succeeds, and none comes before the receiver asked.
func TestHTTPRetryAfterQueue(t *testing.T) {
	q := newQueue(t, 2, durable.Options{Lease: 5 * time.Second, MaxAttempts: 1})
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
	stop := run(t, q, durable.HTTPHandler(srv.Client()))

	added, err := q.AddHTTP(context.Background(), "hook", durable.HTTPTask{URL: srv.URL, Method: "POST"}, time.Now())
	require.NoError(t, err)
	require.True(t, added)
	eventually(t, "the callback done", func() bool {
		mu.Lock()
		n := len(arrivals)
		mu.Unlock()
		return n == 3 && totals(t, q) == durable.ShardStats{}
	})
	stop()

	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < len(arrivals); i++ {
		// Retry-After is whole seconds and due times whole milliseconds of the store's clock: allow
		// for the rounding and the clocks, never for a delivery that ignored the header.
		assert.GreaterOrEqual(t, arrivals[i].Sub(arrivals[i-1]), 900*time.Millisecond, "delivery %d came early", i+1)
	}
	dead, err := q.Dead(context.Background(), 10)
	require.NoError(t, err)
	assert.Empty(t, dead, "a durable.RetryAfter is not a failed attempt")
}
