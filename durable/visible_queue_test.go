package durable_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-timingwheel/timingwheel/durable"
)

// TestFinishDurationExcludesFlowWait: a delivery parked behind its flow key
// (here a Limit of one at a time, as behind an open breaker) reports the
// handler's time in FinishEvent.Duration, not the time it waited since its
// claim; and its StartEvent, sent as its handler starts, counts that wait
// in its Lateness. Issue 31: a 2 ms 404 read "took 1m17s".
func TestFinishDurationExcludesFlowWait(t *testing.T) {
	const park = 300 * time.Millisecond
	flow, err := durable.NewFlow(durable.FlowOptions{Default: durable.Limit{Concurrency: 1}})
	require.NoError(t, err)
	ev := &claimTimes{at: map[string]time.Time{}}
	q := newQueue(t, 1, durable.Options{Observer: ev, Flow: flow, Retention: time.Hour, HistoryLen: 5})
	ctx := context.Background()
	firstIn := make(chan struct{})
	var mu sync.Mutex
	var enteredAt time.Time
	h := func(ctx context.Context, task durable.Task) error {
		if task.Key == "slow" {
			close(firstIn)
			time.Sleep(park)
			return nil
		}
		mu.Lock()
		enteredAt = time.Now()
		mu.Unlock()
		return nil
	}
	_, err = q.Add(ctx, "slow", nil, time.Now(), durable.TaskType("one"))
	require.NoError(t, err)
	run(t, q, h)
	<-firstIn
	_, err = q.Add(ctx, "quick", nil, time.Now(), durable.TaskType("one"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(ev.finishedKeys()) == 2 }, patience, 5*time.Millisecond)

	f := ev.finishedOf("quick")
	ev.mu.Lock()
	mu.Lock()
	waited := enteredAt.Sub(ev.at["quick"])
	mu.Unlock()
	ev.mu.Unlock()
	require.Positive(t, waited, "the quick task was claimed, then waited for the slow one")
	assert.Less(t, f.Duration, waited, "the duration is the handler's, not the wait's")
	ev.mu.Lock()
	defer ev.mu.Unlock()
	require.Len(t, ev.started, 2)
	assert.Equal(t, "quick", ev.started[1].Task.Key)
	assert.GreaterOrEqual(t, ev.started[1].Lateness, waited/2, "lateness runs to the handler's start, the wait included")

	// The store's history entry, which the dashboard's "took" reads, too.
	var info durable.TaskInfo
	require.Eventually(t, func() bool {
		info, err = q.Get(ctx, "quick")
		return err == nil && info.State == durable.StateDone
	}, patience, 5*time.Millisecond)
	require.Len(t, info.History, 1)
	entry := info.History[0]
	assert.Less(t, entry.End.Sub(entry.Start), waited, "took: the handler's time, not the wait's")
}

// claimTimes is events, with the local time of the last claim that leased
// the task: a Claimed event comes before the DeliveryStarted of its tasks.
type claimTimes struct {
	events
	at   map[string]time.Time
	last time.Time
}

func (c *claimTimes) Claimed(x durable.ClaimEvent) {
	if x.Tasks == 0 {
		return
	}
	c.mu.Lock()
	c.last = time.Now()
	c.mu.Unlock()
}

func (c *claimTimes) DeliveryStarted(x durable.StartEvent) {
	c.mu.Lock()
	c.at[x.Task.Key] = c.last
	c.started = append(c.started, x)
	c.mu.Unlock()
}

// TestBreakerEvents: the Observer hears a breaker open, with the failures
// and the last error, and close again after a probe succeeds.
func TestBreakerEvents(t *testing.T) {
	flow, err := durable.NewFlow(durable.FlowOptions{Breaker: durable.Breaker{Failures: 2, CoolDown: 50 * time.Millisecond}})
	require.NoError(t, err)
	ev := &events{}
	q := newQueue(t, 1, durable.Options{Observer: ev, Flow: flow, Backoff: func(int) time.Duration { return 0 }, MaxAttempts: 10})
	var mu sync.Mutex
	fails := 2
	h := func(ctx context.Context, task durable.Task) error {
		mu.Lock()
		defer mu.Unlock()
		if fails > 0 {
			fails--
			return errors.New("upstream 500")
		}
		return nil
	}
	_, err = q.Add(context.Background(), "k", nil, time.Now(), durable.TaskType("dest"))
	require.NoError(t, err)
	run(t, q, h)
	require.Eventually(t, func() bool { return len(ev.breakerEvents()) >= 2 }, patience, 5*time.Millisecond)
	b := ev.breakerEvents()
	require.Len(t, b, 2)
	assert.Equal(t, "dest", b[0].Key)
	assert.Equal(t, "open", b[0].State)
	assert.Equal(t, 2, b[0].Failures)
	assert.Equal(t, "upstream 500", b[0].Error)
	assert.False(t, b[0].OpenUntil.IsZero())
	assert.Equal(t, "dest", b[1].Key)
	assert.Equal(t, "closed", b[1].State)
}

// TestFinishEventCarriesResult: a dead delivery's FinishEvent has the
// handler's Result (an HTTP task's status code), for a log line or a
// metric by status class.
func TestFinishEventCarriesResult(t *testing.T) {
	ev := &events{}
	q := newQueue(t, 1, durable.Options{Observer: ev})
	h := func(ctx context.Context, task durable.Task) error {
		durable.SetResult(ctx, durable.Result{Code: 404})
		return durable.Permanent(errors.New("404 Not Found"))
	}
	_, err := q.Add(context.Background(), "gone", nil, time.Now())
	require.NoError(t, err)
	run(t, q, h)
	require.Eventually(t, func() bool { return len(ev.finishedKeys()) == 1 }, patience, 5*time.Millisecond)
	f := ev.finishedOf("gone")
	assert.Equal(t, "dead", f.Outcome)
	assert.Equal(t, 404, f.Result.Code)
}

func (e *events) finishedKeys() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var keys []string
	for _, f := range e.finished {
		keys = append(keys, f.Task.Key)
	}
	return keys
}

func (e *events) finishedOf(key string) durable.FinishEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, f := range e.finished {
		if f.Task.Key == key {
			return f
		}
	}
	return durable.FinishEvent{}
}

func (e *events) BreakerChanged(x durable.BreakerEvent) {
	e.mu.Lock()
	e.breakers = append(e.breakers, x)
	e.mu.Unlock()
}

func (e *events) breakerEvents() []durable.BreakerEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]durable.BreakerEvent(nil), e.breakers...)
}
