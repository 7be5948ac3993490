package durable_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-timingwheel/timingwheel/durable"
)

// settleCounts is an Observer counting settle codes.
type settleCounts struct {
	durable.NoopObserver
	postponed, rejected atomic.Int64
}

func (s *settleCounts) Settled(e durable.SettleEvent) {
	s.postponed.Add(int64(e.Postponed))
	s.rejected.Add(int64(e.Rejected))
}

// TestFlowStuckOriginLeavesOthersOnTime is issue 19's measurement as a test:
// one origin that accepts callbacks and never answers, one healthy origin,
// as many tasks for each, on a Queue with the default 64 handlers, a 10s
// callback timeout and flow control per origin (16 at once). The healthy
// origin's lateness p99 must stay within 2s of its p99 alone (measured first,
// in the same test): without flow control the stuck origin takes all 64
// handlers for 10s at a time and the healthy callbacks come 30s+ late.
//
// On the way it counts what flow control promises: never more than 16
// callbacks at once to the stuck origin, every callback's attempt header
// equal to the requests its key has had (waiting and hand-backs use up no
// attempt), hand-backs past MaxWaiting, and no lease lost by a waiting task
// (Lease is 1s; they wait for 10s and more).
func TestFlowStuckOriginLeavesOthersOnTime(t *testing.T) {
	const (
		tasks        = 200
		stuckTimeout = 10 * time.Second
		perOrigin    = 16
		margin       = 2 * time.Second
	)
	release := make(chan struct{})
	var stuckNow, stuckMax atomic.Int64
	var mu sync.Mutex
	seen := map[string]int{} // key -> requests so far, both origins
	badAttempt := []string{} // "key: header n, request m"
	arrived := map[string]time.Time{}
	count := func(r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		k := r.Header.Get(durable.HeaderIdempotencyKey)
		seen[k]++
		if got := r.Header.Get(durable.HeaderAttempt); got != strconv.Itoa(seen[k]) {
			badAttempt = append(badAttempt, fmt.Sprintf("%s: attempt header %s, request %d", k, got, seen[k]))
		}
	}
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		count(r)
		n := stuckNow.Add(1)
		defer stuckNow.Add(-1)
		for m := stuckMax.Load(); n > m && !stuckMax.CompareAndSwap(m, n); m = stuckMax.Load() {
		}
		select { // hangs for the whole callback timeout
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer stuck.Close()
	defer close(release) // before Close, which waits for the handlers
	healthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		count(r)
		mu.Lock()
		arrived[r.Header.Get(durable.HeaderIdempotencyKey)] = at
		mu.Unlock()
	}))
	defer healthy.Close()

	flow, err := durable.NewFlow(durable.FlowOptions{
		Key:        durable.HTTPOrigin,
		Default:    durable.Limit{Concurrency: perOrigin},
		Breaker:    durable.Breaker{Failures: 5},
		MaxWaiting: 100, // fewer than the stuck tasks: some are handed back
	})
	require.NoError(t, err)
	obs := &settleCounts{}
	q := newQueue(t, 4, durable.Options{Lease: time.Second, Flow: flow, Observer: obs})
	stop := run(t, q, durable.HTTPHandler(nil, durable.HTTPDefaultTimeout(stuckTimeout)))
	ctx := context.Background()

	// addHealthy adds the healthy origin's tasks due evenly over 2-6s from
	// now, and returns their due times.
	addHealthy := func(prefix string) map[string]time.Time {
		due := map[string]time.Time{}
		start := time.Now().Add(2 * time.Second)
		for i := range tasks {
			k := fmt.Sprintf("%s-%03d", prefix, i)
			due[k] = start.Add(time.Duration(i) * 4 * time.Second / tasks)
			_, err := q.AddHTTP(ctx, k, durable.HTTPTask{URL: healthy.URL + "/ok", Method: "POST"}, due[k])
			require.NoError(t, err)
		}
		return due
	}
	// p99 waits for every healthy callback of due and returns their
	// lateness p99, or fails the test once the last is patience overdue.
	p99 := func(due map[string]time.Time) time.Duration {
		var last time.Time
		for _, d := range due {
			if d.After(last) {
				last = d
			}
		}
		for {
			mu.Lock()
			n := 0
			for k := range due {
				if _, ok := arrived[k]; ok {
					n++
				}
			}
			mu.Unlock()
			if n == len(due) {
				break
			}
			if time.Since(last) > patience {
				t.Fatalf("%d of %d healthy callbacks arrived within %v of the last one's due time", n, len(due), patience)
			}
			time.Sleep(10 * time.Millisecond)
		}
		mu.Lock()
		defer mu.Unlock()
		var late []time.Duration
		for k, d := range due {
			late = append(late, arrived[k].Sub(d))
		}
		slices.Sort(late)
		return late[len(late)*99/100]
	}

	baseline := p99(addHealthy("alone"))

	for i := range tasks {
		_, err := q.AddHTTP(ctx, fmt.Sprintf("stuck-%03d", i), durable.HTTPTask{URL: stuck.URL + "/hang", Method: "POST"},
			time.Now().Add(time.Duration(i)*time.Second/tasks))
		require.NoError(t, err)
	}
	contended := p99(addHealthy("beside"))
	t.Logf("healthy origin's lateness p99: alone %v, beside a stuck origin %v (%d tasks each, 64 handlers, %d per origin, callback timeout %v)",
		baseline, contended, tasks, perOrigin, stuckTimeout)
	assert.LessOrEqual(t, contended, baseline+margin, "p99 beside the stuck origin within %v of p99 alone", margin)

	stop()
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, badAttempt, "waiting and hand-backs use up no attempt")
	assert.LessOrEqual(t, stuckMax.Load(), int64(perOrigin), "callbacks at once to the stuck origin")
	assert.Equal(t, int64(perOrigin), stuckMax.Load(), "the stuck origin had all its limit")
	assert.Positive(t, obs.postponed.Load(), "past MaxWaiting, tasks are handed back")
	assert.Zero(t, obs.rejected.Load(), "no waiting task lost its lease")
}
