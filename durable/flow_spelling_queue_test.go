package durable_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-timingwheel/timingwheel/durable"
)

// TestFlowSpellingsShareTheirOriginsLimit is issue 31's bypass as a test: a
// stuck origin written four ways (127.0.0.1, the IPv4-mapped IPv6 address
// in its two forms, a zero-padded port), 8 handlers, 2 per origin. The four
// spellings are one destination, so they share one Limit: at most 2 stuck
// callbacks at once, and the 8 healthy callbacks added after the 32 stuck
// ones all arrive while the stuck ones still hang. Keyed by spelling, the
// stuck callbacks took all 8 handlers, and no healthy one arrived before
// the callback timeout.
func TestFlowSpellingsShareTheirOriginsLimit(t *testing.T) {
	const (
		handlers  = 8
		perOrigin = 2
		stuckN    = 32
		healthyN  = 8
	)
	release := make(chan struct{})
	var stuckNow, stuckMax atomic.Int64
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := stuckNow.Add(1)
		defer stuckNow.Add(-1)
		for m := stuckMax.Load(); n > m && !stuckMax.CompareAndSwap(m, n); m = stuckMax.Load() {
		}
		select { // hangs past the test's patience
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer stuck.Close()
	defer close(release) // before Close, which waits for the handlers
	var mu sync.Mutex
	var arrived []time.Time
	healthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrived = append(arrived, time.Now())
		mu.Unlock()
	}))
	defer healthy.Close()

	u, err := url.Parse(stuck.URL)
	require.NoError(t, err)
	port := u.Port()
	spellings := []string{
		"http://127.0.0.1:" + port,
		"http://[::ffff:127.0.0.1]:" + port,
		"http://[::ffff:7f00:1]:" + port,
		"http://127.0.0.1:000" + port,
	}

	flow, err := durable.NewFlow(durable.FlowOptions{Key: durable.HTTPOrigin, Default: durable.Limit{Concurrency: perOrigin}})
	require.NoError(t, err)
	q := newQueue(t, 2, durable.Options{Concurrency: handlers, Lease: time.Second, Flow: flow})
	stop := run(t, q, durable.HTTPHandler(nil, durable.HTTPDefaultTimeout(2*patience)))
	defer stop()
	ctx := context.Background()

	for i := range stuckN {
		_, err := q.AddHTTP(ctx, fmt.Sprintf("stuck-%02d", i), durable.HTTPTask{URL: spellings[i%len(spellings)] + "/hang", Method: "POST"}, time.Now())
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return stuckNow.Load() >= perOrigin }, patience, 5*time.Millisecond, "the stuck origin's callbacks start")

	start := time.Now()
	for i := range healthyN {
		_, err := q.AddHTTP(ctx, fmt.Sprintf("healthy-%02d", i), durable.HTTPTask{URL: healthy.URL + "/ok", Method: "POST"}, start)
		require.NoError(t, err)
	}
	deadline := start.Add(patience)
	for {
		mu.Lock()
		n := len(arrived)
		mu.Unlock()
		if n == healthyN || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	n, last := len(arrived), time.Duration(0)
	if n > 0 {
		last = arrived[n-1].Sub(start)
	}
	mu.Unlock()
	t.Logf("%d of %d healthy callbacks arrived, the last %v after they were added; stuck callbacks at once: at most %d (%d spellings of one origin, %d handlers, %d per origin)",
		n, healthyN, last, stuckMax.Load(), len(spellings), handlers, perOrigin)
	assert.Equal(t, healthyN, n, "healthy callbacks arrived within %v", patience)
	assert.LessOrEqual(t, stuckMax.Load(), int64(perOrigin), "stuck callbacks at once: one Limit for the four spellings")
}

// TestFlowSpellingsShareARetryAfterHold: a 429 with Retry-After to one
// spelling of an origin holds the origin's other spellings too (the pause
// is the flow key's, and the four spellings are one key): none of the
// three tasks added after the 429, each to another spelling, is sent
// before the hold is over. Keyed by spelling, they were sent at once.
func TestFlowSpellingsShareARetryAfterHold(t *testing.T) {
	const hold = 3 // seconds, the Retry-After
	var mu sync.Mutex
	var heldAt time.Time              // when the 429 was answered
	arrived := map[string]time.Time{} // path → first request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if _, ok := arrived[r.URL.Path]; !ok {
			arrived[r.URL.Path] = time.Now()
		}
		if heldAt.IsZero() {
			heldAt = time.Now()
			w.Header().Set("Retry-After", fmt.Sprint(hold))
			http.Error(w, "slow down", http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	port := u.Port()
	spellings := []string{
		"http://127.0.0.1:" + port,
		"http://[::ffff:127.0.0.1]:" + port,
		"http://[::ffff:7f00:1]:" + port,
		"http://127.0.0.1:000" + port,
	}
	flow, err := durable.NewFlow(durable.FlowOptions{Key: durable.HTTPOrigin})
	require.NoError(t, err)
	q := newQueue(t, 2, durable.Options{Lease: 5 * time.Second, Flow: flow})
	stop := run(t, q, durable.HTTPHandler(nil))
	defer stop()
	ctx := context.Background()

	_, err = q.AddHTTP(ctx, "first", durable.HTTPTask{URL: spellings[0] + "/s0", Method: "POST"}, time.Now())
	require.NoError(t, err)
	eventually(t, "the 429", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return !heldAt.IsZero()
	})
	for i := 1; i < len(spellings); i++ {
		_, err := q.AddHTTP(ctx, fmt.Sprint("s", i), durable.HTTPTask{URL: fmt.Sprintf("%s/s%d", spellings[i], i), Method: "POST"}, time.Now())
		require.NoError(t, err)
	}
	eventually(t, "every spelling's callback", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(arrived) == len(spellings)
	})
	mu.Lock()
	defer mu.Unlock()
	var after []string
	for i := 1; i < len(spellings); i++ {
		after = append(after, fmt.Sprintf("s%d %v", i, arrived[fmt.Sprint("/s", i)].Sub(heldAt).Round(time.Millisecond)))
	}
	t.Logf("after a 429 with Retry-After: %ds to %s, the other spellings' first requests came: %v", hold, spellings[0], after)
	for i := 1; i < len(spellings); i++ {
		// Retry-After is whole seconds and due times whole milliseconds: allow
		// for the rounding, never for a request inside the hold.
		assert.GreaterOrEqual(t, arrived[fmt.Sprint("/s", i)].Sub(heldAt), hold*time.Second-100*time.Millisecond, "%s came inside the hold", spellings[i])
	}
}
