package rediswheel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outcomeOf maps a handler's result, the delivery's attempt and the task's
// own policy to what settle does.
func TestOutcomeOf(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	defer c.Close()
	q, err := New(c, Options{Namespace: "n", MaxAttempts: 3, Backoff: func(a int) time.Duration { return time.Duration(a) * time.Second }})
	require.NoError(t, err)
	r := &runner{q: q, work: context.Background()}
	boom := errors.New("boom")
	cases := []struct {
		name    string
		attempt int
		policy  taskPolicy
		err     error
		kind    outcomeKind
		delay   int64
	}{
		{"success", 1, taskPolicy{}, nil, outcomeDone, 0},
		{"success on the last attempt", 3, taskPolicy{}, nil, outcomeDone, 0},
		{"failure", 2, taskPolicy{}, boom, outcomeRetry, 2000},
		{"failure on the last attempt", 3, taskPolicy{}, boom, outcomeDead, 0},
		{"permanent", 1, taskPolicy{}, Permanent(boom), outcomeDead, 0},
		{"retry after", 1, taskPolicy{}, RetryAfter(1500 * time.Millisecond), outcomeLater, 1500},
		{"retry after, wrapped", 2, taskPolicy{}, fmt.Errorf("busy: %w", RetryAfter(time.Millisecond+1)), outcomeLater, 2},
		{"retry after on the last attempt", 3, taskPolicy{}, RetryAfter(time.Second), outcomeLater, 1000},
		{"retry after, clamped", 1, taskPolicy{}, RetryAfter(-time.Hour), outcomeLater, 0},
		{"permanent retry after", 1, taskPolicy{}, Permanent(RetryAfter(time.Second)), outcomeDead, 0},
		{"timeout", 1, taskPolicy{}, fmt.Errorf("%w after 1s", ErrHandlerTimeout), outcomeRetry, 1000},
		{"task's max attempts, fewer", 2, taskPolicy{maxAttempts: 2}, boom, outcomeDead, 0},
		{"task's max attempts, more", 3, taskPolicy{maxAttempts: 5}, boom, outcomeRetry, 3000},
		{"task's max attempts, last", 5, taskPolicy{maxAttempts: 5}, boom, outcomeDead, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := &delivery{task: Task{Key: "k", Attempt: tc.attempt}, policy: tc.policy}
			o := r.outcomeOf(d, tc.err)
			assert.Equal(t, tc.kind, o.kind)
			assert.Equal(t, tc.delay, o.delay)
			if tc.err != nil {
				assert.Equal(t, tc.err.Error(), o.err, "the error is kept as the last error")
			}
		})
	}

	// The task's backoff replaces the Queue's (which would say hours here).
	for attempt := 1; attempt <= 10; attempt++ {
		d := &delivery{task: Task{Attempt: attempt}, policy: taskPolicy{maxAttempts: 20, backoffBase: 10 * time.Millisecond, backoffLimit: 40 * time.Millisecond}}
		for range 50 {
			o := r.outcomeOf(d, boom)
			require.Equal(t, outcomeRetry, o.kind)
			require.LessOrEqual(t, o.delay, min(int64(10<<(attempt-1)), 40), "attempt %d", attempt)
		}
	}

	// A long error is cut.
	o := r.outcomeOf(&delivery{task: Task{Attempt: 1}}, errors.New(string(make([]byte, 2*maxErrorText))))
	assert.Len(t, o.err, maxErrorText)

	// Once shutdown has cancelled the handlers, a failure is a release; a
	// success or a Permanent still counts.
	work, stop := context.WithCancel(context.Background())
	stop()
	r.work = work
	d := &delivery{task: Task{Attempt: 3}}
	assert.Equal(t, outcomeRelease, r.outcomeOf(d, boom).kind)
	assert.Equal(t, outcomeRelease, r.outcomeOf(d, RetryAfter(time.Second)).kind)
	assert.Equal(t, outcomeDone, r.outcomeOf(d, nil).kind)
	assert.Equal(t, outcomeDead, r.outcomeOf(d, Permanent(boom)).kind)
}

func TestFullJitter(t *testing.T) {
	cases := []struct {
		base, limit time.Duration
		attempt     int
		ceiling     time.Duration
	}{
		{time.Second, time.Hour, 0, time.Second},
		{time.Second, time.Hour, 1, time.Second},
		{time.Second, time.Hour, 3, 4 * time.Second},
		{time.Second, time.Hour, 13, time.Hour},
		{time.Second, time.Hour, math.MaxInt, time.Hour},
		{time.Hour, time.Duration(math.MaxInt64), 100, time.Duration(math.MaxInt64 - 1)},
		{time.Duration(math.MaxInt64), time.Duration(math.MaxInt64), 2, time.Duration(math.MaxInt64 - 1)},
		{3 * time.Millisecond, 5 * time.Millisecond, 3, 5 * time.Millisecond},
	}
	for _, tc := range cases {
		var most time.Duration
		for range 2000 {
			d := fullJitter(tc.base, tc.limit, tc.attempt)
			require.GreaterOrEqual(t, d, time.Duration(0))
			require.LessOrEqual(t, d, tc.ceiling, "%+v", tc)
			most = max(most, d)
		}
		assert.Greater(t, most, tc.ceiling/2, "%+v: the whole range is used", tc)
	}
}

// A RetryAfter delivers the task again no sooner than its delay. (Whether the
// attempt counts is settle.lua's `later`.)
func TestRetryAfterDelays(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{Backoff: func(int) time.Duration { return 0 }})
	ctx := context.Background()
	const delay = 300 * time.Millisecond
	starts := make(chan time.Time, 2)
	run(t, q, func(ctx context.Context, tk Task) error {
		now, _ := c.Time(ctx).Result()
		starts <- now
		if len(starts) == 1 {
			return RetryAfter(delay)
		}
		return nil
	})
	_, err := q.Add(ctx, "k", nil, time.Now())
	require.NoError(t, err)
	eventually(t, patience, "the second delivery", func() bool { return len(starts) == 2 && leftovers(t, q) == 0 })
	first, second := <-starts, <-starts
	assert.GreaterOrEqual(t, second.Sub(first), delay-time.Millisecond)
}

// A task delivered again carries the due time it was added with, as well as
// the current one.
func TestRedeliveryKeepsOriginalDue(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{Backoff: func(int) time.Duration { return 50 * time.Millisecond }})
	ctx := context.Background()
	at := redisTime(t, c).Add(-time.Minute).Truncate(time.Millisecond)
	_, err := q.Add(ctx, "k", nil, at)
	require.NoError(t, err)
	var rec recorder
	rec.reply = func(ctx context.Context, tk Task) error {
		if tk.Attempt == 1 {
			return errors.New("again")
		}
		return nil
	}
	run(t, q, rec.handle)
	eventually(t, patience, "two deliveries", func() bool { return rec.count() == 2 && leftovers(t, q) == 0 })
	tasks := rec.tasks()
	if tasks[0].OriginalDue.IsZero() {
		t.Skip("claim does not fill Task.OriginalDue yet (R1)")
	}
	assert.True(t, tasks[0].Due.Equal(at))
	assert.True(t, tasks[1].Due.After(at), "the retry's due time")
	for _, tk := range tasks {
		assert.True(t, tk.OriginalDue.Equal(at), "attempt %d: OriginalDue %v, want %v", tk.Attempt, tk.OriginalDue, at)
	}
}
