package delayqueue

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// owner plays a timing wheel's part for DropIf in these tests: values it
// marks vacant are dropped when they reach the head, except while it is
// busy (its lock held elsewhere), when drop cannot tell, and it asks again
// with Recheck once it is not.
type owner struct {
	vacant  map[*value]bool
	busy    bool
	flagged bool // drop found the owner busy: Recheck is owed
	asked   int  // drop calls
}

func (o *owner) drop(v *value) bool {
	o.asked++
	if o.busy {
		o.flagged = true
		return false
	}
	return o.vacant[v]
}

// TestDropIfModel holds an indexed queue with a DropIf owner against a
// sorted slice of its queued values under random Offer, Remove, PollDue,
// marking values vacant (never the head: the owner removes that one) and
// taking them back, the owner turning busy and free (then Recheck if drop
// found it busy), clock advances and grace changes. After every step: the
// queue holds what the model holds; Next is the model's head, which is
// never a vacant value unless drop found the owner busy; the alarm is at
// the head plus the grace; PollDue returns the model's least due value; and
// a value the queue dropped has no position.
func TestDropIfModel(t *testing.T) {
	dropped, keptBusy := 0, 0 // over every seed: how often each path ran
	for seed := uint64(0); seed < 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 97))
		c := newManualClock()
		q := newIndexedQueue(c)
		o := &owner{vacant: map[*value]bool{}}
		q.DropIf(o.drop)
		t0 := c.Now()
		type ref struct {
			v   *value
			exp time.Duration
		}
		var model []ref // queued values, sorted by exp
		var all []*value
		grace := time.Duration(0)
		find := func(v *value) int { return slices.IndexFunc(model, func(x ref) bool { return x.v == v }) }
		add := func(v *value, exp time.Duration) {
			model = append(model, ref{v, exp})
			slices.SortStableFunc(model, func(a, b ref) int { return int(a.exp - b.exp) })
		}
		// settle drops the model's vacant heads, as the queue does when the
		// head changes and the owner is free.
		settle := func() {
			for !o.busy && len(model) > 0 && o.vacant[model[0].v] {
				model = model[1:]
			}
		}
		lastOp := 0
		for step := 0; step < 4000; step++ {
			now := q.Now()
			var v *value
			if len(all) > 0 {
				v = all[r.IntN(len(all))]
			}
			head := func() (ref, bool) {
				if len(model) == 0 {
					return ref{}, false
				}
				return model[0], true
			}
			op := r.IntN(26)
			lastOp = op
			switch {
			case op < 7 && !o.vacant[v]:
				if v == nil || r.IntN(3) != 0 {
					v = &value{name: len(all)}
					all = append(all, v)
				}
				exp := now + time.Duration(1+r.IntN(50))*time.Millisecond + time.Duration(step) // no ties: which of tied values is the head is the heap's choice
				q.Offer(v, exp)
				if i := find(v); i >= 0 {
					model = slices.Delete(model, i, i+1)
				}
				add(v, exp)
				settle()
			case op < 9 && v != nil:
				i := find(v)
				require.Equal(t, i >= 0, q.Remove(v), "Remove reports whether %d was queued", v.name)
				if i >= 0 {
					model = slices.Delete(model, i, i+1)
				}
				delete(o.vacant, v)
				require.Zero(t, v.slot.pos, "a removed value keeps a position")
				settle()
			case op < 13 && !o.busy:
				got, ok := q.PollDue(now)
				h, has := head()
				require.Equal(t, has && h.exp <= now, ok, "PollDue at %v with head %v", now, model)
				if ok {
					require.False(t, o.vacant[got], "PollDue returned vacant value %d", got.name)
					i := find(got)
					require.Equal(t, h.exp, model[i].exp, "PollDue did not return the earliest")
					model = slices.Delete(model, i, i+1)
				}
				settle()
			case op < 17 && v != nil && !o.vacant[v] && find(v) > 0:
				// Vacant behind the head only: the owner removes a head it
				// empties (the alarm may be armed for it).
				if h, _ := head(); model[find(v)].exp == h.exp {
					continue
				}
				o.vacant[v] = true
			case op < 20 && o.vacant[v]:
				// Taken back: still queued where it was, or offered again
				// if the queue dropped it.
				delete(o.vacant, v)
				if v.slot.pos == 0 {
					require.Negative(t, find(v), "value %d queued in the model has no position", v.name)
					dropped++
					exp := now + time.Duration(1+r.IntN(50))*time.Millisecond + time.Duration(step) // no ties: which of tied values is the head is the heap's choice
					q.Offer(v, exp)
					add(v, exp)
				} else {
					require.GreaterOrEqual(t, find(v), 0, "value %d has a position the model does not", v.name)
				}
			case op < 22:
				if o.busy = !o.busy; !o.busy && o.flagged {
					o.flagged = false
					keptBusy++
					q.Recheck(func(v *value) bool { return o.vacant[v] })
				}
				settle()
			case op < 25:
				c.mu.Lock()
				c.now = c.now.Add(time.Duration(r.IntN(5)) * time.Millisecond)
				c.mu.Unlock()
			default:
				grace = time.Duration(r.IntN(3)) * time.Millisecond
				q.SetGrace(grace)
			}
			require.Equal(t, len(model), q.Len(), "step %d op %d busy %v", step, lastOp, o.busy)
			for _, x := range model {
				require.NotZero(t, x.v.slot.pos, "step %d: value %d queued in the model has no position", step, x.v.name)
			}
			want, alarm := Never, time.Time{}
			if h, ok := head(); ok {
				want, alarm = h.exp, t0.Add(h.exp+grace)
				require.True(t, !o.vacant[h.v] || o.busy || o.flagged,
					"step %d: vacant value %d is the head and the owner was free", step, h.v.name)
			}
			require.Equal(t, want, q.Next(), "step %d", step)
			rang := !alarm.IsZero() && !alarm.After(c.Now()) && c.armedAt(time.Time{})
			require.True(t, rang || c.armedAt(alarm), "step %d: the alarm is not at the head plus the grace", step)
		}
		require.NotZero(t, o.asked, "seed %d: drop was never called", seed)
	}
	require.NotZero(t, dropped, "the queue never dropped a vacant value")
	require.NotZero(t, keptBusy, "drop never found the owner busy")
	t.Logf("vacant values dropped and offered again: %d; Rechecks owed: %d", dropped, keptBusy)
}

// TestDroppedHeadWakesNobody: a waiter asleep on a queue whose next values
// are vacant sleeps through their expirations: the queue drops them as they
// become the head, before arming the alarm; a head drop could not decide for
// stays until Recheck, which drops it and moves the alarm on.
func TestDroppedHeadWakesNobody(t *testing.T) {
	c := newManualClock()
	q := newIndexedQueue(c)
	o := &owner{vacant: map[*value]bool{}}
	q.DropIf(o.drop)
	exit := make(chan struct{})
	out := pollAsync(q, exit)
	t0 := c.Now()
	a, b, d, e := &value{name: 1}, &value{name: 2}, &value{name: 3}, &value{name: 4}
	q.Offer(a, 1*time.Second)
	q.Offer(b, 2*time.Second)
	q.Offer(d, 3*time.Second)
	q.Offer(e, 4*time.Second)
	o.vacant[b], o.vacant[d] = true, true
	require.Equal(t, 4, q.Len(), "vacant values leave the queue only as they reach the head")
	require.True(t, q.Remove(a))
	require.True(t, c.armedAt(t0.Add(4*time.Second)), "the alarm is not past the vacant values")
	require.Equal(t, 4*time.Second, q.Next())
	require.Equal(t, 1, q.Len(), "vacant values that reached the head were not dropped")
	require.Zero(t, b.slot.pos)
	require.Zero(t, d.slot.pos)

	// The owner busy: the vacant head stays, and the alarm with it, until
	// Recheck.
	f := &value{name: 5}
	q.Offer(f, 3500*time.Millisecond)
	o.vacant[e] = true
	o.busy = true
	require.True(t, q.Remove(f))
	require.True(t, o.flagged, "drop was not asked about the new head")
	require.Equal(t, 4*time.Second, q.Next(), "a head drop could not decide for was dropped")
	o.busy, o.flagged = false, false
	q.Recheck(func(v *value) bool { return o.vacant[v] })
	require.Equal(t, Never, q.Next(), "Recheck did not drop the vacant head")
	require.True(t, c.armedAt(time.Time{}), "the alarm is still armed for the dropped head")
	c.Advance(5 * time.Second)
	require.Zero(t, q.Wakeups(), "the waiter woke for a vacant value")

	delete(o.vacant, d)
	q.Offer(d, 6*time.Second)
	c.Advance(time.Second)
	select {
	case v := <-out:
		require.Same(t, d, v)
	case <-time.After(30 * time.Second):
		t.Fatal("the value offered again was not delivered within 30 s")
	}
	close(exit)
	for range out {
	}
	require.Equal(t, uint64(1), q.Wakeups(), "the waiter woke for a vacant value")
}

func TestDropIfOnAQueueMadeByNewPanics(t *testing.T) {
	q := New[*value](newManualClock())
	require.PanicsWithValue(t, "delayqueue: DropIf on a queue made by New, not NewIndexed", func() {
		q.DropIf(func(*value) bool { return false })
	})
}
