package rediswheel

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Pause sets the flag claim honours on every shard, Stats shows it, and Adds
// and Cancels go on; Resume clears it. (That claims lease nothing while the
// flag is set is claim.lua's part, tested with it.)
func TestPauseAndResume(t *testing.T) {
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			q := newQueue(t, srv.client(t), Options{Shards: 4})
			ctx := context.Background()
			flags := func() (n int) {
				for _, keys := range q.keys {
					if q.client.HExists(ctx, keys[4], "#paused").Val() {
						n++
					}
				}
				return n
			}
			st, err := q.Stats(ctx)
			require.NoError(t, err)
			assert.False(t, st.Paused)

			for range 2 { // twice: idempotent
				require.NoError(t, q.Pause(ctx))
				assert.Equal(t, 4, flags())
				st, err = q.Stats(ctx)
				require.NoError(t, err)
				assert.True(t, st.Paused)
				assert.True(t, st.Total.Paused)
				for _, s := range st.Shards {
					assert.True(t, s.Paused, "shard %d", s.Shard)
				}
			}
			added, err := q.Add(ctx, "k", nil, time.Now().Add(time.Hour))
			require.NoError(t, err)
			assert.True(t, added, "Add goes on while paused")
			ok, err := q.Cancel(ctx, "k")
			require.NoError(t, err)
			assert.True(t, ok, "Cancel goes on while paused")

			// A pause that reached only some shards shows, and Resume mends it.
			require.NoError(t, q.client.HDel(ctx, q.keys[2][4], "#paused").Err())
			st, err = q.Stats(ctx)
			require.NoError(t, err)
			assert.True(t, st.Paused, "any shard paused")
			assert.False(t, st.Shards[2].Paused)

			for range 2 {
				require.NoError(t, q.Resume(ctx))
				assert.Zero(t, flags())
				st, err = q.Stats(ctx)
				require.NoError(t, err)
				assert.False(t, st.Paused)
			}
			assert.Zero(t, leftovers(t, q), "Resume leaves no field behind")
		})
	}
}

// The pause script refuses an operation it does not know.
func TestPauseScriptRejectsUnknownOp(t *testing.T) {
	q := newQueue(t, standalone(t), Options{Shards: 1})
	for _, args := range [][]any{{"stop"}, {}, {"pause", "x"}} {
		err := pauseScript.Run(context.Background(), q.client, q.keys[0], args...).Err()
		assert.ErrorContains(t, err, "unknown pause operation", "%v", args)
	}
	assert.False(t, q.client.HExists(context.Background(), q.keys[0][4], "#paused").Val())
}

// Stats gives the namespace's totals as well as every shard's figures, with
// retained tasks counted.
func TestStatsTotals(t *testing.T) {
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			q := newQueue(t, srv.client(t), Options{Shards: 8})
			ctx := context.Background()
			const n = 40
			for i := range n {
				at := time.Now().Add(time.Hour)
				if i%4 == 0 {
					at = time.Now().Add(-time.Duration(i+1) * time.Minute)
				}
				_, err := q.Add(ctx, "k"+string(rune('A'+i)), nil, at)
				require.NoError(t, err)
			}
			for i := range 3 {
				keepTask(t, q, "kept"+string(rune('a'+i)), StateDone, time.Now(), time.Now().Add(time.Hour))
			}
			st, err := q.Stats(ctx)
			require.NoError(t, err)
			require.Len(t, st.Shards, 8)
			var sum ShardStats
			sum.Shard = -1
			for i, s := range st.Shards {
				assert.Equal(t, i, s.Shard)
				sum.Due += s.Due
				sum.Scheduled += s.Scheduled
				sum.InFlight += s.InFlight
				sum.Dead += s.Dead
				sum.Retained += s.Retained
				sum.OldestDue = max(sum.OldestDue, s.OldestDue)
				sum.States.Scheduled += s.States.Scheduled
				sum.States.Done += s.States.Done
			}
			assert.Equal(t, sum, st.Total)
			assert.Equal(t, ShardStats{Shard: -1, Due: n / 4, Scheduled: n - n/4, Retained: 3, OldestDue: st.Total.OldestDue,
				States: StateCounts{Scheduled: n, Done: 3}}, st.Total)
			// Less the store's millisecond rounding: the due time is stored
			// rounded up (never early) and Stats reads the clock rounded
			// down, so a Stats right after the Add reads up to 2 ms less
			// than the time since the asked-for due time (36m59.999s for
			// 37m failed CI once).
			assert.GreaterOrEqual(t, st.Total.OldestDue, (n-3)*time.Minute-msRounding, "the oldest due task over all shards")
			assert.Less(t, st.Total.OldestDue, (n+5)*time.Minute)
		})
	}
}

// msRounding is how much less than the Go clock's difference a wait read
// by Stats can be: due times are stored rounded up to the millisecond and
// Stats reads the store's clock rounded down.
const msRounding = 2 * time.Millisecond
