package rediswheel

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// listAll pages through state with limit and returns every task and the
// number of pages.
func listAll(t testing.TB, q *testQueue, state State, limit int, between func()) (all []TaskInfo, pages int) {
	t.Helper()
	cursor := ""
	for {
		tasks, next, err := q.List(context.Background(), state, cursor, limit)
		require.NoError(t, err)
		require.LessOrEqual(t, len(tasks), limit)
		all = append(all, tasks...)
		pages++
		require.Less(t, pages, 5000, "List does not end")
		if next == "" {
			return all, pages
		}
		require.NotEqual(t, cursor, next, "a page must move on")
		cursor = next
		if between != nil {
			between()
		}
	}
}

func keysOf(tasks []TaskInfo) []string {
	var out []string
	for _, tk := range tasks {
		out = append(out, tk.Key)
	}
	return out
}

// byPosition orders tasks as List does: by time in the state, then key.
func byPosition(a, b TaskInfo) int {
	at, bt := a.Due, b.Due
	if at.IsZero() {
		at, bt = a.Finished, b.Finished
	}
	if c := at.Compare(bt); c != 0 {
		return c
	}
	return cmp.Compare(a.Key, b.Key)
}

// List returns each state's tasks across the shards, in order of time then
// key, each once.
func TestListStates(t *testing.T) {
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			q := newQueue(t, srv.client(t), Options{Shards: 4})
			ctx := context.Background()
			base := time.Now().Add(time.Hour).Truncate(time.Second)
			var want []string
			for i := range 30 {
				k := fmt.Sprintf("s%02d", i)
				_, err := q.Add(ctx, k, []byte("p"), base.Add(time.Duration(i%5)*time.Millisecond)) // ties
				require.NoError(t, err)
				want = append(want, k)
			}
			// Retrying, in flight and dead tasks, made by claim and settle.
			for i := range 6 {
				_, err := q.Add(ctx, fmt.Sprintf("x%d", i), nil, time.Now().Add(-time.Minute))
				require.NoError(t, err)
			}
			var flying []string
			for shard := range q.keys {
				cl, err := q.claim(ctx, shard, 10, time.Hour)
				require.NoError(t, err)
				for _, d := range cl.tasks {
					switch d.task.Key {
					case "x0", "x1":
						_, err = q.settle(ctx, shard, []outcome{{d: d, kind: outcomeRetry, delay: time.Hour.Milliseconds(), err: "e"}})
					case "x2", "x3":
						_, err = q.settle(ctx, shard, []outcome{{d: d, kind: outcomeDead, err: "e"}})
					default:
						flying = append(flying, d.task.Key)
					}
					require.NoError(t, err)
				}
			}
			fin := time.Now()
			keepTask(t, q, "done1", StateDone, fin, base)
			keepTask(t, q, "done2", StateDone, fin, base.Add(-time.Second))
			keepTask(t, q, "gone", StateCancelled, fin, base)

			for _, tc := range []struct {
				state State
				want  []string // in order
			}{
				{StateScheduled, want},
				{StateRetrying, []string{"x0", "x1"}},
				{StateInFlight, nil},
				{StateDead, nil},
				{StateDone, []string{"done2", "done1"}},
				{StateCancelled, []string{"gone"}},
			} {
				for _, limit := range []int{1, 4, 1000} {
					all, _ := listAll(t, q, tc.state, limit, nil)
					for _, tk := range all {
						assert.Equal(t, tc.state, tk.State)
					}
					switch tc.state {
					case StateInFlight:
						assert.ElementsMatch(t, flying, keysOf(all))
						assert.True(t, slices.IsSortedFunc(all, byPosition))
					case StateDead:
						assert.ElementsMatch(t, []string{"x2", "x3"}, keysOf(all))
					case StateScheduled:
						assert.True(t, slices.IsSortedFunc(all, byPosition), "%s limit %d: %v", tc.state, limit, keysOf(all))
						assert.ElementsMatch(t, tc.want, keysOf(all), "%s limit %d", tc.state, limit)
					default:
						assert.Equal(t, tc.want, keysOf(all), "%s limit %d", tc.state, limit)
					}
				}
			}
		})
	}
}

// Listing a state that shares its set with a commoner one (retrying among
// many scheduled) scans a bounded part of each shard per page: pages may be
// empty, but the listing ends, finds every task, and takes about
// size/listScan pages.
func TestListScansABoundedStretch(t *testing.T) {
	q := newQueue(t, standalone(t), Options{Shards: 1})
	ctx := context.Background()
	const n = 1000
	var items []Item
	for i := range n {
		items = append(items, Item{Key: fmt.Sprintf("s%04d", i), At: time.Now().Add(time.Hour)})
	}
	_, err := q.AddBatch(ctx, items)
	require.NoError(t, err)
	for _, k := range []string{"s0003", "s0500", "s0999"} {
		setField(t, q, "e", k, "lease expired") // what a reaped lease leaves
	}
	all, pages := listAll(t, q, StateRetrying, 2, nil)
	assert.Equal(t, []string{"s0003", "s0500", "s0999"}, keysOf(all))
	assert.LessOrEqual(t, pages, n/listScan+2)
	assert.Greater(t, pages, 2, "each page scans a bounded stretch")

	tasks, next, err := q.List(ctx, StateScheduled, "", 5000)
	require.NoError(t, err)
	assert.Len(t, tasks, MaxListLimit-3, "a limit above MaxListLimit is lowered to it (less the retrying)")
	assert.NotEmpty(t, next)
}

// Many tasks due at the same ms: the cursor finds its place among them by
// key, even when the cursor's own task has gone meanwhile.
func TestListTies(t *testing.T) {
	q := newQueue(t, standalone(t), Options{Shards: 1})
	ctx := context.Background()
	at := time.Now().Add(time.Hour)
	var items []Item
	var want []string
	for i := range 500 {
		k := fmt.Sprintf("k%03d", i)
		items = append(items, Item{Key: k, At: at})
		want = append(want, k)
	}
	_, err := q.AddBatch(ctx, items)
	require.NoError(t, err)
	var all []TaskInfo
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 500/7+2, "List does not end")
		tasks, next, err := q.List(ctx, StateScheduled, cursor, 7)
		require.NoError(t, err)
		all = append(all, tasks...)
		if next == "" {
			break
		}
		if len(tasks) > 0 {
			// The cursor's task leaves; a new task with the same time but
			// a key before the cursor arrives: neither is seen again.
			last := tasks[len(tasks)-1].Key
			_, err := q.Cancel(ctx, last)
			require.NoError(t, err)
			_, err = q.Add(ctx, "a"+last, nil, at)
			require.NoError(t, err)
		}
		cursor = next
	}
	assert.Equal(t, want, keysOf(all))
}

// The model: random adds, cancels, reschedules and state flips happen
// between pages. Every task that stays put from the first page to the last
// (the stable ones) is listed exactly once and in order; every task listed
// was in the state at some point.
func TestListUnderConcurrentChanges(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			q := newQueue(t, srv.client(t), Options{Shards: 4})
			ctx := context.Background()
			base := time.Now().Add(time.Hour)
			when := func() time.Time { return base.Add(time.Duration(rng.IntN(50)) * time.Millisecond) }
			stable := map[State]map[string]bool{StateScheduled: {}, StateRetrying: {}}
			ever := map[State]map[string]bool{StateScheduled: {}, StateRetrying: {}}
			var volatile []string
			add := func(k string, retrying bool) {
				_, err := q.Add(ctx, k, nil, when())
				require.NoError(t, err)
				if retrying {
					setField(t, q, "e", k, "boom")
				}
			}
			for i := range 200 {
				k := fmt.Sprintf("s%03d", i)
				st := StateScheduled
				if i%3 == 0 {
					st = StateRetrying
				}
				add(k, st == StateRetrying)
				stable[st][k], ever[st][k] = true, true
			}
			next := 0
			change := func() {
				for range rng.IntN(8) {
					switch op := rng.IntN(4); {
					case op == 0 || len(volatile) == 0:
						k := fmt.Sprintf("v%04d", next)
						next++
						r := rng.IntN(2) == 0
						add(k, r)
						volatile = append(volatile, k)
						ever[StateScheduled][k], ever[StateRetrying][k] = true, true
					case op == 1:
						i := rng.IntN(len(volatile))
						_, err := q.Cancel(ctx, volatile[i])
						require.NoError(t, err)
						volatile = slices.Delete(volatile, i, i+1)
					case op == 2:
						_, err := q.Reschedule(ctx, volatile[rng.IntN(len(volatile))], when())
						require.NoError(t, err)
					default: // flips scheduled <-> retrying without moving
						k := volatile[rng.IntN(len(volatile))]
						if rng.IntN(2) == 0 {
							setField(t, q, "e", k, "boom")
						} else {
							require.NoError(t, q.client.HDel(ctx, q.keys[q.shard(k)][4], "e|"+k).Err())
						}
					}
				}
			}
			for round := range 6 {
				for _, state := range []State{StateScheduled, StateRetrying} {
					limit := 1 + rng.IntN(20)
					all, _ := listAll(t, q, state, limit, change)
					seen := map[string]int{}
					var kept []TaskInfo
					for _, tk := range all {
						seen[tk.Key]++
						require.True(t, ever[state][tk.Key], "round %d %s: %q was never %s (seed %d)", round, state, tk.Key, state, seed)
						require.Equal(t, state, tk.State)
						if stable[state][tk.Key] {
							kept = append(kept, tk)
						}
					}
					for k := range stable[state] {
						require.Equal(t, 1, seen[k], "round %d %s limit %d: stable task %q seen %d times (seed %d)", round, state, limit, k, seen[k], seed)
					}
					require.True(t, slices.IsSortedFunc(kept, byPosition), "round %d %s: stable tasks out of order (seed %d)", round, state, seed)
				}
			}
		})
	}
}

// List refuses what it did not make: an unknown state, a limit below 1, a
// cursor that is not its own or belongs to another state.
func TestListRejectsBadInput(t *testing.T) {
	q := newQueue(t, standalone(t), Options{Shards: 2})
	ctx := context.Background()
	for i := range 3 {
		_, err := q.Add(ctx, fmt.Sprint("k", i), nil, time.Now().Add(time.Hour))
		require.NoError(t, err)
	}
	_, _, err := q.List(ctx, "pending", "", 10)
	assert.ErrorIs(t, err, ErrState)
	_, _, err = q.List(ctx, StateScheduled, "", 0)
	assert.ErrorIs(t, err, ErrLimit)
	_, next, err := q.List(ctx, StateScheduled, "", 1)
	require.NoError(t, err)
	require.NotEmpty(t, next)
	_, _, err = q.List(ctx, StateScheduled, next, 1)
	require.NoError(t, err)

	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, c := range []string{
		"!!!", next + "=", enc("garbage"), enc("2|scheduled|1|k"), enc("1|scheduled|NaN|k"),
		enc("1|scheduled|1e400|k"), enc("1|scheduled|12|"), enc("1|dead|12|k"), enc("1|scheduled|x|k"),
	} {
		_, _, err = q.List(ctx, StateScheduled, c, 1)
		assert.ErrorIs(t, err, ErrCursor, "cursor %q", c)
	}
	_, _, err = q.List(ctx, StateDead, next, 1)
	assert.ErrorIs(t, err, ErrCursor, "a cursor of another state")

	for _, args := range [][]any{
		{"pending", "", "", 1, 1}, {"dead", "", "", 0, 1}, {"dead", "", "", 2, 1},
		{"dead", "nope", "k", 1, 1}, {"dead", "", "", 1},
	} {
		err := listScript.Run(ctx, q.client, q.keys[0], args...).Err()
		assert.Error(t, err, "list script %v", args)
	}
}

// Shards whose scans stop at their budget bound the page: a match another
// shard found further on waits until every shard has looked that far, or
// the tasks between would be skipped.
func TestListMergesBoundedScans(t *testing.T) {
	q := newQueue(t, standalone(t), Options{Shards: 2})
	ctx := context.Background()
	base := time.Now().Add(time.Hour).Truncate(time.Second)
	// Shard 0 dense in time (one task per ms), shard 1 sparse (one per 10 ms):
	// one budget of shard 0 covers far less time than one of shard 1.
	var items []Item
	var retrying [2]string // shard 0's is due first
	for i, n := 0, [2]int{0, 0}; n[0] < 2*listScan || n[1] < listScan+10; i++ {
		k := fmt.Sprint("k", i)
		s := q.shard(k)
		step := time.Duration(1 + 9*s)
		if n[s] >= [2]int{2 * listScan, listScan + 10}[s] {
			continue
		}
		off := time.Duration(n[s]) * step * time.Millisecond
		items = append(items, Item{Key: k, At: base.Add(off)})
		if (s == 0 && n[s] == listScan+50) || (s == 1 && n[s] == 40) {
			retrying[s] = k // shard 0's after its first scan, shard 1's within
		}
		n[s]++
	}
	_, err := q.AddBatch(ctx, items)
	require.NoError(t, err)
	for _, k := range retrying {
		setField(t, q, "e", k, "boom")
	}
	all, _ := listAll(t, q, StateRetrying, 10, nil)
	assert.Equal(t, retrying[:], keysOf(all))
}
