package delayqueue

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAbandonModel holds an indexed queue against a sorted slice of its live
// values under random Offer, Remove, PollDue, Abandon, Reclaim, clock
// advances and grace changes, with the owner's protocol (a value Abandon
// refuses is removed; a value the queue dropped is offered again). After
// every step: Next is the least live expiration, never an abandoned value's;
// PollDue returns the least due live value and never an abandoned one; the
// alarm is at the live head plus the grace; Len counts the live values and
// at most the abandoned ones besides; Abandon refuses exactly the head (or
// a value tied with it); a reclaimed value is queued if and only if Reclaim
// says so.
func TestAbandonModel(t *testing.T) {
	for seed := uint64(0); seed < 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 98))
		c := newManualClock()
		q := newIndexedQueue(c)
		t0 := c.Now()
		type ref struct {
			v   *value
			exp time.Duration
		}
		var live []ref                          // sorted by exp
		abandoned := map[*value]time.Duration{} // value: the expiration it was abandoned at
		var all []*value
		grace := time.Duration(0)
		find := func(v *value) int { return slices.IndexFunc(live, func(x ref) bool { return x.v == v }) }
		add := func(v *value, exp time.Duration) {
			live = append(live, ref{v, exp})
			slices.SortStableFunc(live, func(a, b ref) int { return int(a.exp - b.exp) })
		}
		refused, dropped := 0, 0
		for step := 0; step < 4000; step++ {
			now := q.Now()
			var v *value
			if len(all) > 0 {
				v = all[r.IntN(len(all))]
			}
			_, isAbandoned := abandoned[v]
			switch op := r.IntN(24); {
			case op < 7 && !isAbandoned:
				if v == nil || r.IntN(3) != 0 {
					v = &value{name: len(all)}
					all = append(all, v)
				}
				exp := now + time.Duration(1+r.IntN(50))*time.Millisecond
				q.Offer(v, exp)
				if i := find(v); i >= 0 {
					live = slices.Delete(live, i, i+1)
				}
				add(v, exp)
			case op < 9 && v != nil:
				i := find(v)
				got := q.Remove(v)
				if isAbandoned {
					delete(abandoned, v) // queued or dropped: either is right
				} else {
					require.Equal(t, i >= 0, got, "Remove reports whether %d was queued", v.name)
					if i >= 0 {
						live = slices.Delete(live, i, i+1)
					}
				}
				require.Zero(t, v.slot.pos, "a removed value keeps a position")
			case op < 13:
				got, ok := q.PollDue(now)
				due := len(live) > 0 && live[0].exp <= now
				require.Equal(t, due, ok, "PollDue at %v with live head %v", now, live)
				if ok {
					_, bad := abandoned[got]
					require.False(t, bad, "PollDue returned abandoned value %d", got.name)
					i := find(got)
					require.Equal(t, live[0].exp, live[i].exp, "PollDue did not return the earliest")
					live = slices.Delete(live, i, i+1)
				}
			case op < 18 && v != nil && !isAbandoned && find(v) >= 0:
				i := find(v)
				exp := live[i].exp
				if exp <= now {
					continue // Abandon is for values not yet due
				}
				ok := q.Abandon(v, exp)
				require.Equal(t, exp > live[0].exp, ok, "Abandon(%d at %v) with the head at %v", v.name, exp, live[0].exp)
				live = slices.Delete(live, i, i+1)
				if !ok {
					refused++
					require.True(t, q.Remove(v), "a refused value was not queued")
				} else {
					abandoned[v] = exp
				}
			case op < 21 && isAbandoned:
				exp := abandoned[v]
				delete(abandoned, v)
				if q.Reclaim(v) {
					require.NotZero(t, v.slot.pos, "Reclaim reports a dropped value queued")
					add(v, exp)
				} else {
					dropped++
					require.Zero(t, v.slot.pos, "Reclaim reports a queued value dropped")
				}
			case op < 23:
				c.mu.Lock()
				c.now = c.now.Add(time.Duration(r.IntN(5)) * time.Millisecond)
				c.mu.Unlock()
			default:
				grace = time.Duration(r.IntN(3)) * time.Millisecond
				q.SetGrace(grace)
			}
			require.GreaterOrEqual(t, q.Len(), len(live), "step %d", step)
			require.LessOrEqual(t, q.Len(), len(live)+len(abandoned), "step %d", step)
			want, alarm := Never, time.Time{}
			if len(live) > 0 {
				want, alarm = live[0].exp, t0.Add(live[0].exp+grace)
			}
			require.Equal(t, want, q.Next(), "step %d", step)
			rang := !alarm.IsZero() && !alarm.After(c.Now()) && c.armedAt(time.Time{})
			require.True(t, rang || c.armedAt(alarm), "step %d: the alarm is not at the live head plus the grace", step)
		}
		require.NotZero(t, refused, "seed %d: Abandon never refused a head", seed)
		require.NotZero(t, dropped, "seed %d: the queue never dropped an abandoned value", seed)
	}
}

// TestAbandonedHeadWakesNobody: a waiter asleep on a queue whose next value
// was abandoned sleeps through that value's expiration: the queue drops it
// when it becomes the head, before arming the alarm, and a value reclaimed
// while still queued is delivered at its expiration.
func TestAbandonedHeadWakesNobody(t *testing.T) {
	c := newManualClock()
	q := newIndexedQueue(c)
	exit := make(chan struct{})
	out := pollAsync(q, exit)
	t0 := c.Now()
	a, b, d, e := &value{name: 1}, &value{name: 2}, &value{name: 3}, &value{name: 4}
	q.Offer(a, 1*time.Second)
	q.Offer(b, 2*time.Second)
	q.Offer(d, 3*time.Second)
	q.Offer(e, 4*time.Second)
	require.True(t, q.Abandon(b, 2*time.Second))
	require.True(t, q.Abandon(d, 3*time.Second))
	require.Equal(t, 4, q.Len(), "abandoned values leave the queue only as they reach the head")
	require.False(t, q.Abandon(a, 1*time.Second), "the head was abandoned in place")
	require.True(t, q.Remove(a))
	require.True(t, c.armedAt(t0.Add(4*time.Second)), "the alarm is not past the abandoned values")
	require.Equal(t, 4*time.Second, q.Next())
	require.Equal(t, 1, q.Len(), "abandoned values that reached the head were not dropped")
	require.False(t, q.Reclaim(d), "a dropped value reclaimed as queued")
	q.Offer(d, 5*time.Second)
	c.Advance(3 * time.Second)
	require.Zero(t, q.Wakeups(), "the waiter woke for an abandoned value")
	c.Advance(time.Second)
	for _, want := range []*value{e, d} {
		select {
		case v := <-out:
			require.Same(t, want, v)
		case <-time.After(30 * time.Second):
			t.Fatalf("value %d was not delivered within 30 s", want.name)
		}
		c.Advance(time.Second)
	}
	f := &value{name: 5}
	q.Offer(f, 10*time.Second)
	q.Offer(e, 20*time.Second)
	require.True(t, q.Abandon(e, 20*time.Second))
	require.True(t, q.Reclaim(e), "a value abandoned behind the head was not still queued")
	require.True(t, q.Remove(f))
	require.True(t, c.armedAt(t0.Add(20*time.Second)), "the reclaimed value is not the head")
	close(exit)
	for range out {
	}
	// One wake-up for e, one for d unless the waiter, back from handing e
	// over, found d already due (the clock is advanced as soon as e is
	// received): never one for the abandoned values.
	require.LessOrEqual(t, q.Wakeups(), uint64(2), "the waiter woke for an abandoned value")
	require.GreaterOrEqual(t, q.Wakeups(), uint64(1))
}
