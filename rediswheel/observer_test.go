package rediswheel

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var _ Observer = NoopObserver{}

// events is an Observer that keeps the events a failing Redis gives
// (durable's observer_queue_test.go checks every event on memstore).
type events struct {
	NoopObserver // so that a new method does not break this test
	mu           sync.Mutex
	added        []AddEvent
	claims       []ClaimEvent
	errs         []StoreErrorEvent
}

func (e *events) TasksAdded(x AddEvent) { e.mu.Lock(); e.added = append(e.added, x); e.mu.Unlock() }
func (e *events) Claimed(x ClaimEvent)  { e.mu.Lock(); e.claims = append(e.claims, x); e.mu.Unlock() }
func (e *events) StoreError(x StoreErrorEvent) {
	e.mu.Lock()
	e.errs = append(e.errs, x)
	e.mu.Unlock()
}

// Failed Redis calls are reported with their operation, and a stopping Run's
// interrupted claim is not a Redis error.
func TestObserverSeesRedisErrors(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1})
	defer c.Close()
	ev := &events{}
	q, err := newTQ(c, Options{Namespace: "unreachable", Shards: 2, Observer: ev, OnError: func(error) {}})
	require.NoError(t, err)
	_, err = q.Add(context.Background(), "k", nil, time.Now())
	require.Error(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	require.NoError(t, q.Run(ctx, func(context.Context, Task) error { return nil }))

	ev.mu.Lock()
	defer ev.mu.Unlock()
	ops := map[StoreOp]int{}
	for _, e := range ev.errs {
		ops[e.Op]++
		assert.Error(t, e.Err)
	}
	assert.Equal(t, 1, ops[OpAdd])
	assert.GreaterOrEqual(t, ops[OpClaim], 2, "each failed claim")
	assert.Equal(t, len(ev.errs), ops[OpAdd]+ops[OpClaim])
	assert.Empty(t, ev.added, "a failed add is an error, not an add")
	for _, cl := range ev.claims {
		assert.Error(t, cl.Err)
	}
	// One error per failed claim; the last may fail as Run stops, after the
	// Claimed event and before Run's report, which leaves it out.
	assert.InDelta(t, len(ev.claims), ops[OpClaim], 1, "one error per failed claim")
}
