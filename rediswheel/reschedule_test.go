package rediswheel

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Reschedule moves a waiting task, scheduled or retrying, and nothing else:
// the task record, its original due time included, stays.
func TestReschedule(t *testing.T) {
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			q := newQueue(t, srv.client(t), Options{})
			ctx := context.Background()
			_, err := q.Add(ctx, "k", []byte("payload"), time.Now().Add(time.Hour))
			require.NoError(t, err)
			setField(t, q, "m", "k", "1700000000001|1700000000002|7|0|0|0|0|a|b")

			at := time.UnixMilli(1_900_000_000_000).Add(time.Microsecond)
			ok, err := q.Reschedule(ctx, "k", at)
			require.NoError(t, err)
			require.True(t, ok)
			info := get(t, q, "k")
			assert.Equal(t, StateScheduled, info.State)
			assert.Equal(t, time.UnixMilli(1_900_000_000_001), info.Due, "rounded up, as Add")
			assert.Equal(t, time.UnixMilli(1700000000002), info.OriginalDue, "the record's original due is Add's: kept")
			assert.Equal(t, time.UnixMilli(1700000000001), info.Added, "the rest of the record is kept")
			assert.Equal(t, "a|b", info.Type)
			payload, err := q.client.HGet(ctx, q.keys[q.shard("k")][3], "k").Result()
			require.NoError(t, err)
			assert.Equal(t, "payload", payload)

			// Without a record (tasks stored before records existed): moved all the same.
			require.NoError(t, q.client.HDel(ctx, q.keys[q.shard("k")][4], "m|k").Err())
			ok, err = q.Reschedule(ctx, "k", time.UnixMilli(1_800_000_000_000))
			require.NoError(t, err)
			assert.True(t, ok)
			assert.Equal(t, time.UnixMilli(1_800_000_000_000), get(t, q, "k").Due)

			// Before 1970: due at once, never wrapped.
			ok, err = q.Reschedule(ctx, "k", time.Unix(-1e12, 0))
			require.NoError(t, err)
			assert.True(t, ok)
			assert.Equal(t, time.UnixMilli(1), get(t, q, "k").Due, "due at ms 1")

			// Retrying: moved, attempts and last error kept.
			_, err = q.Add(ctx, "r", nil, time.Now().Add(-time.Minute))
			require.NoError(t, err)
			cl, err := q.claim(ctx, q.shard("r"), 10, time.Minute)
			require.NoError(t, err)
			require.Len(t, cl.tasks, 1)

			ok, err = q.Reschedule(ctx, "r", time.Now())
			require.ErrorIs(t, err, ErrInFlight, "in flight")
			assert.False(t, ok)
			assert.Equal(t, StateInFlight, get(t, q, "r").State, "untouched")

			_, err = q.settle(ctx, q.shard("r"), []outcome{{d: cl.tasks[0], kind: outcomeRetry, delay: time.Hour.Milliseconds(), err: "boom"}})
			require.NoError(t, err)
			ok, err = q.Reschedule(ctx, "r", time.UnixMilli(1_900_000_000_000))
			require.NoError(t, err)
			assert.True(t, ok)
			info = get(t, q, "r")
			assert.Equal(t, StateRetrying, info.State)
			assert.Equal(t, time.UnixMilli(1_900_000_000_000), info.Due)
			assert.Equal(t, 1, info.Attempts)
			assert.Equal(t, "boom", info.LastError)

			// Absent, dead, retained: false, nothing changed.
			ok, err = q.Reschedule(ctx, "nothing", time.Now())
			require.NoError(t, err)
			assert.False(t, ok)
			_, err = q.Get(ctx, "nothing")
			assert.ErrorIs(t, err, ErrNotFound, "Reschedule adds nothing")
			_, err = q.Add(ctx, "d", nil, time.Now().Add(-time.Minute))
			require.NoError(t, err)
			cl, err = q.claim(ctx, q.shard("d"), 10, time.Minute)
			require.NoError(t, err)
			_, err = q.settle(ctx, q.shard("d"), []outcome{{d: cl.tasks[0], kind: outcomeDead, err: "x"}})
			require.NoError(t, err)
			keepTask(t, q, "kept", StateDone, time.Now(), time.Now().Add(time.Hour))
			for _, k := range []string{"d", "kept"} {
				before := get(t, q, k)
				ok, err = q.Reschedule(ctx, k, time.Now())
				require.NoError(t, err)
				assert.False(t, ok, k)
				assert.Equal(t, before, get(t, q, k), k)
			}
			_, err = q.Reschedule(ctx, "", time.Now())
			assert.ErrorIs(t, err, ErrKey)
		})
	}
}

// The script refuses a time that is not a whole number of ms.
func TestRescheduleScriptRejectsBadTime(t *testing.T) {
	q := newQueue(t, standalone(t), Options{Shards: 1})
	ctx := context.Background()
	_, err := q.Add(ctx, "k", nil, time.Now().Add(time.Hour))
	require.NoError(t, err)
	for _, at := range []any{"1e12", "-5", "1.5", ""} {
		err := rescheduleScript.Run(ctx, q.client, q.keys[0], "k", at).Err()
		assert.ErrorContains(t, err, "reschedule wants", "at %q", at)
	}
}

// Rescheduling a task to now wakes this Queue's sleeping Run, as Add does.
func TestRescheduleWakesTheWorker(t *testing.T) {
	// PollInterval an hour (and leases of an hour, whose end also wakes the poller): a task
	// the poller was not woken for would not come within patience.
	q := newQueue(t, standalone(t), Options{PollInterval: time.Hour, Lease: time.Hour})
	ctx := context.Background()
	_, err := q.Add(ctx, "k", nil, time.Now().Add(time.Hour))
	require.NoError(t, err)
	fired := make(chan Task, 1)
	run(t, q, func(ctx context.Context, tk Task) error {
		fired <- tk
		return nil
	})
	eventually(t, patience, "the poller to sleep", func() bool { return q.Idle() })
	ok, err := q.Reschedule(ctx, "k", time.Now())
	if err == nil && !ok {
		err = errors.New("not rescheduled")
	}
	require.NoError(t, err)
	tk := await(t, fired, "Reschedule to wake the sleeping poller")
	assert.Equal(t, "k", tk.Key)
}
