package delayqueue

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// value is what an indexed queue holds in these tests: a name and the slot
// the queue keeps in it.
type value struct {
	name int
	slot Slot
}

func newIndexedQueue(c Clock) *DelayQueue[*value] {
	return NewIndexed(c, func(v *value) *Slot { return &v.slot })
}

// TestRemoveModel holds an indexed queue against a sorted slice of (value,
// expiration) under random Offer, Remove (of any value, queued or not),
// PollDue and clock advances, with a grace that changes now and then. After
// every step: the queue holds what the model holds; PollDue returns the
// model's least due value, never one that is not due; Next is the model's
// head; and the alarm is armed at the head plus the grace, or disarmed.
func TestRemoveModel(t *testing.T) {
	for seed := uint64(0); seed < 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 99))
		c := newManualClock()
		q := newIndexedQueue(c)
		t0 := c.Now()
		type ref struct {
			v   *value
			exp time.Duration
		}
		var model []ref // sorted by exp, ties in any order
		var all []*value
		grace := time.Duration(0)
		sortModel := func() {
			slices.SortStableFunc(model, func(a, b ref) int { return int(a.exp - b.exp) })
		}
		for step := 0; step < 3000; step++ {
			now := q.Now()
			switch op := r.IntN(20); {
			case op < 8:
				// A new value, or one offered before (queued or not):
				// a queued one moves to its new expiration.
				v := &value{name: len(all)}
				if len(all) > 0 && r.IntN(3) == 0 {
					v = all[r.IntN(len(all))]
				} else {
					all = append(all, v)
				}
				exp := now + time.Duration(r.IntN(50))*time.Millisecond
				q.Offer(v, exp)
				if i := slices.IndexFunc(model, func(x ref) bool { return x.v == v }); i >= 0 {
					model = slices.Delete(model, i, i+1)
				}
				model = append(model, ref{v, exp})
				sortModel()
			case op < 13 && len(all) > 0:
				v := all[r.IntN(len(all))]
				i := slices.IndexFunc(model, func(x ref) bool { return x.v == v })
				require.Equal(t, i >= 0, q.Remove(v), "Remove reports whether %d was queued", v.name)
				if i >= 0 {
					model = slices.Delete(model, i, i+1)
				}
				require.Zero(t, v.slot.pos, "a value out of the queue keeps a slot")
			case op < 17:
				v, ok := q.PollDue(now)
				due := len(model) > 0 && model[0].exp <= now
				require.Equal(t, due, ok, "PollDue at %v with head %v", now, model)
				if ok {
					i := slices.IndexFunc(model, func(x ref) bool { return x.v == v })
					require.GreaterOrEqual(t, i, 0, "PollDue returned %d, not queued", v.name)
					require.Equal(t, model[0].exp, model[i].exp, "PollDue did not return the earliest")
					require.LessOrEqual(t, model[i].exp, now, "PollDue returned a value early")
					model = slices.Delete(model, i, i+1)
				}
			case op < 19:
				c.mu.Lock()
				c.now = c.now.Add(time.Duration(r.IntN(5)) * time.Millisecond) // the alarm is checked below
				c.mu.Unlock()
			default:
				grace = time.Duration(r.IntN(3)) * time.Millisecond
				q.SetGrace(grace)
			}
			require.Equal(t, len(model), q.Len())
			want, alarm := Never, time.Time{}
			if len(model) > 0 {
				want, alarm = model[0].exp, t0.Add(model[0].exp+grace)
			}
			require.Equal(t, want, q.Next(), "step %d", step)
			// A manual alarm set at or before now rings at once, and reads
			// disarmed: that is as good as armed there.
			rang := !alarm.IsZero() && !alarm.After(c.Now()) && c.armedAt(time.Time{})
			require.True(t, rang || c.armedAt(alarm), "step %d: the alarm is not at the head plus the grace", step)
		}
	}
}

// TestRemoveWakesNobody: a waiter asleep on a queue whose values are all
// removed before they are due never wakes, and one removed head moves the
// alarm to the next.
func TestRemoveWakesNobody(t *testing.T) {
	c := newManualClock()
	q := newIndexedQueue(c)
	exit := make(chan struct{})
	out := pollAsync(q, exit)
	t0 := c.Now()
	vs := make([]*value, 100)
	for i := range vs {
		vs[i] = &value{name: i}
		q.Offer(vs[i], time.Duration(i+1)*time.Second)
	}
	require.True(t, q.Remove(vs[0]))
	require.True(t, c.armedAt(t0.Add(2*time.Second)), "removing the head did not move the alarm")
	require.False(t, q.Remove(vs[0]), "a value removed twice")
	for _, v := range vs[1:99] {
		require.True(t, q.Remove(v))
	}
	require.True(t, c.armedAt(t0.Add(100*time.Second)))
	c.Advance(99 * time.Second)
	require.Zero(t, q.Wakeups(), "the waiter woke for a removed value")
	c.Advance(time.Second)
	select {
	case v := <-out:
		require.Same(t, vs[99], v)
	case <-time.After(30 * time.Second):
		t.Fatal("the value left in the queue was not delivered within 30 s")
	}
	require.True(t, q.Remove(vs[50]) == false)
	v := &value{}
	q.Offer(v, time.Hour)
	require.True(t, q.Remove(v))
	require.True(t, c.armedAt(time.Time{}), "the alarm of an emptied queue stays armed")
	close(exit)
	for range out {
	}
	require.Equal(t, uint64(1), q.Wakeups())
}

func TestIndexedOfferAgainAndMisuse(t *testing.T) {
	q := newIndexedQueue(newManualClock())
	v := &value{}
	q.Offer(v, time.Second)
	q.Offer(v, 2*time.Second)
	require.Equal(t, 1, q.Len(), "a value offered twice is queued twice")
	require.Equal(t, 2*time.Second, q.Next(), "a value offered again did not move")
	require.PanicsWithValue(t, "delayqueue: Remove on a queue made by New, not NewIndexed", func() {
		New[*value](newManualClock()).Remove(v)
	})
	require.PanicsWithValue(t, "delayqueue: NewIndexed called with nil slot", func() {
		NewIndexed[*value](newManualClock(), nil)
	})
}
