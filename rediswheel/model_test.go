package rediswheel

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The scripts against a trivially correct model: random Add, AddAfter,
// Replace, Cancel, Requeue, claims and settles (fresh and stale, every
// outcome) on a few keys, every reply and every Stats compared with the
// model's; once without retention and once with.
func TestScriptsAgainstModel(t *testing.T) {
	for _, retention := range []time.Duration{0, time.Hour} {
		t.Run(fmt.Sprint("retention=", retention), func(t *testing.T) { testScriptsAgainstModel(t, retention) })
	}
}

func testScriptsAgainstModel(t *testing.T, retention time.Duration) {
	c := standalone(t)
	const maxAttempts = 3
	q := newQueue(t, c, Options{Shards: 1, MaxAttempts: maxAttempts, Retention: retention})
	ctx := context.Background()
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("seed %d", seed)

	type state int
	const (
		absent   state = iota
		dueNow         // due, at or before the Redis clock
		dueLater       // due in an hour
		inFlight
		dead
		retained // finished (done or cancelled) and kept for its retention
	)
	type task struct {
		state     state
		attempts  int
		payload   string
		token     string // of the current delivery, in flight
		cancelled bool
		postponed int // RetryAfter postponements used
	}
	// finish is what becomes of a done or cancelled task.
	finish := func(tk *task) {
		*tk = task{}
		if retention > 0 {
			tk.state = retained
		}
	}
	model := map[string]*task{}
	keys := []string{"a", "b", "c", "d", "e", "f"}
	for _, k := range keys {
		model[k] = &task{}
	}
	var deliveries []*delivery // every delivery ever claimed, most of them stale by now

	check := func(step int, op string) {
		var want ShardStats
		for _, tk := range model {
			switch tk.state {
			case dueNow:
				want.Due++
			case dueLater:
				want.Scheduled++
			case inFlight:
				want.InFlight++
			case dead:
				want.Dead++
			case retained:
				want.Retained++
			}
		}
		require.Equal(t, want, totals(t, q), "step %d, after %s (seed %d)", step, op, seed)
		// The counts per state (the scripts' #retrying and #cancelled) are
		// what Get tells of each key.
		byGet := map[State]int64{}
		for k := range model {
			info, err := q.Get(ctx, k)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			require.NoError(t, err)
			byGet[info.State]++
			require.Equal(t, model[k].postponed, info.Postponements, "step %d, after %s (seed %d): %s's postponements", step, op, seed, k)
		}
		st, err := q.Stats(ctx)
		require.NoError(t, err)
		for _, s := range []State{StateScheduled, StateRetrying, StateInFlight, StateDead, StateDone, StateCancelled} {
			require.Equal(t, byGet[s], st.Total.States.Of(s), "step %d, after %s (seed %d): Stats' %s", step, op, seed, s)
		}
		// The body invariant Add relies on (lua/keys.lua): a key has a
		// payload exactly while it is in one of due, lease, dead and kept.
		keys := q.keys[0]
		inSets := []string{}
		for _, k := range append(keys[:3:3], keys[5]) {
			members, err := c.ZRange(ctx, k, 0, -1).Result()
			require.NoError(t, err)
			inSets = append(inSets, members...)
		}
		withBody, err := c.HKeys(ctx, keys[3]).Result()
		require.NoError(t, err)
		slices.Sort(inSets)
		slices.Sort(withBody)
		require.Equal(t, inSets, withBody, "step %d, after %s (seed %d): keys in sets vs keys with a body", step, op, seed)
		var wantKept []string
		for k, tk := range model {
			if tk.state == retained {
				wantKept = append(wantKept, k)
			}
		}
		slices.Sort(wantKept)
		gotKept, err := c.ZRange(ctx, keys[5], 0, -1).Result()
		require.NoError(t, err)
		slices.Sort(gotKept)
		require.Equal(t, len(wantKept), len(gotKept), "step %d, after %s (seed %d): retained", step, op, seed)
		if len(wantKept) > 0 {
			require.Equal(t, wantKept, gotKept, "step %d, after %s (seed %d): retained", step, op, seed)
		}
	}

	for step := range 2000 {
		k := keys[rng.IntN(len(keys))]
		m := model[k]
		payload := fmt.Sprint("p", step)
		var op string
		switch r := rng.IntN(100); {
		case r < 20:
			later := rng.IntN(2) == 0
			at := time.Now().Add(-time.Hour)
			if later {
				at = time.Now().Add(time.Hour)
			}
			op = fmt.Sprintf("Add(%s, later=%v)", k, later)
			added, err := q.Add(ctx, k, []byte(payload), at)
			require.NoError(t, err)
			require.Equal(t, m.state == absent, added, op)
			if added {
				*m = task{state: dueNow, payload: payload}
				if later {
					m.state = dueLater
				}
			}
		case r < 23:
			// Two items, perhaps of the same key: the first one wins.
			k2 := keys[rng.IntN(len(keys))]
			op = fmt.Sprintf("AddBatch(%s, %s)", k, k2)
			added, err := q.AddBatch(ctx, []Item{
				{Key: k, Payload: []byte(payload), At: time.Now().Add(-time.Hour)},
				{Key: k2, Payload: []byte(payload + "b"), At: time.Now().Add(time.Hour)},
			})
			require.NoError(t, err)
			want0 := m.state == absent
			if want0 {
				*m = task{state: dueNow, payload: payload}
			}
			m2 := model[k2]
			want1 := m2.state == absent
			if want1 {
				*m2 = task{state: dueLater, payload: payload + "b"}
			}
			require.Equal(t, []bool{want0, want1}, added, op)
		case r < 25:
			op = fmt.Sprintf("AddAfter(%s, 0)", k)
			added, err := q.AddAfter(ctx, k, []byte(payload), 0)
			require.NoError(t, err)
			require.Equal(t, m.state == absent, added, op)
			if added {
				*m = task{state: dueNow, payload: payload}
			}
		case r < 32:
			op = fmt.Sprintf("Replace(%s)", k)
			err := q.Replace(ctx, k, []byte(payload), time.Now().Add(-time.Minute))
			if m.state == inFlight {
				require.ErrorIs(t, err, ErrInFlight, op)
			} else {
				require.NoError(t, err, op) // a retained task starts over too
				*m = task{state: dueNow, payload: payload}
			}
		case r < 42:
			op = fmt.Sprintf("Cancel(%s)", k)
			ok, err := q.Cancel(ctx, k)
			require.NoError(t, err)
			require.Equal(t, m.state != absent, ok, op)
			switch m.state {
			case inFlight:
				m.cancelled = true
			case retained:
				*m = task{} // a retained task is forgotten
			case absent:
			default:
				finish(m)
			}
		case r < 47:
			op = fmt.Sprintf("Requeue(%s)", k)
			ok, err := q.Requeue(ctx, k)
			require.NoError(t, err)
			require.Equal(t, m.state == dead, ok, op)
			if ok {
				m.state, m.attempts, m.postponed = dueNow, 0, 0
			}
		case r < 67:
			limit := 1 + rng.IntN(3)
			op = fmt.Sprintf("claim(%d)", limit)
			got, err := q.claim(ctx, 0, limit, time.Hour)
			require.NoError(t, err)
			ready := 0
			for _, tk := range model {
				if tk.state == dueNow {
					ready++
				}
			}
			require.Len(t, got.tasks, min(limit, ready), op)
			for _, d := range got.tasks {
				tk := model[d.task.Key]
				require.Equal(t, dueNow, tk.state, "%s claimed %s", op, d.task.Key)
				require.Equal(t, tk.payload, string(d.task.Payload))
				require.Equal(t, tk.attempts+1, d.task.Attempt)
				tk.state, tk.attempts, tk.token = inFlight, tk.attempts+1, d.token
				deliveries = append(deliveries, d)
			}
		default:
			if len(deliveries) == 0 {
				continue
			}
			d := deliveries[rng.IntN(len(deliveries))]
			if rng.IntN(2) == 0 {
				d = deliveries[len(deliveries)-1] // the latest is more likely current
			}
			kind := []outcomeKind{outcomeDone, outcomeRetry, outcomeDead, outcomeRelease, outcomeLater}[rng.IntN(5)]
			op = fmt.Sprintf("settle(%s, token %s, %s)", d.task.Key, d.token, kind)
			res, err := q.settle(ctx, 0, []outcome{{d: d, kind: kind, err: "e"}})
			require.NoError(t, err)
			tk := model[d.task.Key]
			want := int64(settleRejected)
			switch {
			case tk.state != inFlight || tk.token != d.token:
			case tk.cancelled:
				want = settleCancelled
				finish(tk)
			case kind == outcomeDone:
				want = settleDone
				finish(tk)
			case kind == outcomeRelease:
				want, tk.state, tk.attempts = settleReleased, dueNow, tk.attempts-1
			case kind == outcomeLater:
				want, tk.state, tk.attempts, tk.postponed = settlePostponed, dueNow, tk.attempts-1, tk.postponed+1
			case kind == outcomeDead:
				want, tk.state = settleDead, dead
			default: // a retry, recorded as one whatever the attempts
				want, tk.state, tk.postponed = settleRetry, dueNow, 0
			}
			require.Equal(t, []int64{want}, res.codes, op)
			if tk.state != inFlight {
				tk.token = ""
			}
		}
		check(step, op)
	}

	// Cancel everything, settle whatever was in flight, then cancel again
	// (forgetting what was retained): nothing may be left behind.
	for range 2 {
		for _, k := range keys {
			_, err := q.Cancel(ctx, k)
			require.NoError(t, err)
		}
		for _, d := range deliveries {
			_, err := q.settle(ctx, 0, []outcome{{d: d, kind: outcomeDone}})
			require.NoError(t, err)
		}
	}
	require.Zero(t, leftovers(t, q))
	require.Zero(t, c.Exists(ctx, q.keys[0][5]).Val(), "nothing retained")
}
