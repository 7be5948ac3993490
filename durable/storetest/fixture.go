package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// A fixture drives one store directly, as a Queue would, with the Limits of
// a Queue with the fixture's options: the per-method tests and the model
// test call the Store, never the Queue.
//
// Times: the store has its own clock, so a test never needs to know its
// now to the millisecond. A task meant to be claimed is due at past (an
// hour before the test began), one meant to wait at future (a day after):
// both are far from any clock the store may read, and a claim leases the
// first and never the second.
type fixture struct {
	t      *testing.T
	st     durable.Store
	lim    durable.Limits
	ctx    context.Context
	past   int64 // Unix ms, an hour before the test
	future int64 // Unix ms, a day after the test
}

// newFixture opens a store, with the Limits of a Queue with opts.
func newFixture(t *testing.T, open func(t *testing.T) durable.Store, opts durable.Options) *fixture {
	t.Helper()
	st := open(t)
	now := time.Now()
	return &fixture{
		t: t, st: st, lim: newQueue(t, st, opts).Limits(), ctx: context.Background(),
		past: now.Add(-time.Hour).UnixMilli(), future: now.Add(24 * time.Hour).UnixMilli(),
	}
}

// add stores a new task under key, due at (Unix ms), failing t unless it is
// stored.
func (f *fixture) add(key string, at int64, payload string) {
	f.t.Helper()
	r := &durable.AddRequest{Key: key, Payload: []byte(payload), At: at}
	f.st.Add(f.ctx, []*durable.AddRequest{r})
	if r.Err != nil || r.Status != durable.AddStored {
		f.t.Fatalf("Add %q: status %d, %v", key, r.Status, r.Err)
	}
}

// claim claims every partition once, limit 1 each, and returns what each
// leased, by key, with its partition.
func (f *fixture) claim(lease time.Duration) map[string]claimed {
	f.t.Helper()
	out := map[string]claimed{}
	for p := range f.st.Partitions() {
		c, err := f.st.Claim(f.ctx, p, 1, lease, f.lim)
		if err != nil {
			f.t.Fatalf("Claim partition %d: %v", p, err)
		}
		for _, ct := range c.Tasks {
			out[ct.Key] = claimed{ct, p}
		}
	}
	return out
}

// A claimed task, with the partition that leased it.
type claimed struct {
	durable.ClaimedTask
	part int
}

// claimOne claims until key is leased for lease; only key may be due.
func (f *fixture) claimOne(key string, lease time.Duration) claimed {
	f.t.Helper()
	var got claimed
	Eventually(f.t, "a claim of "+key, func() bool {
		for k, c := range f.claim(lease) {
			if k != key {
				f.t.Fatalf("claimed %q, want only %q", k, key)
			}
			got = c
			return true
		}
		return false
	})
	return got
}

// inFlight adds key due at past and claims it for an hour.
func (f *fixture) inFlight(key, payload string) claimed {
	f.t.Helper()
	f.add(key, f.past, payload)
	return f.claimOne(key, time.Hour)
}

// settle settles one outcome of c with kind, filling its key and token, and
// returns the store's reply, failing t on an error.
func (f *fixture) settle(c claimed, o durable.Outcome) durable.Settled {
	f.t.Helper()
	o.Key, o.Token = c.Key, c.Token
	s, err := f.st.Settle(f.ctx, c.part, f.lim, []durable.Outcome{o})
	if err != nil || len(s.Codes) != 1 {
		f.t.Fatalf("Settle %q %s: %+v, %v", c.Key, o.Kind, s, err)
	}
	return s
}

// get is the store's Get of key, failing t on an error (nil: no task).
func (f *fixture) get(key string) *durable.TaskInfo {
	f.t.Helper()
	info, err := f.st.Get(f.ctx, key)
	if err != nil {
		f.t.Fatalf("Get %q: %v", key, err)
	}
	return info
}

// state is key's state, "" if it is in none.
func (f *fixture) state(key string) durable.State {
	f.t.Helper()
	if info := f.get(key); info != nil {
		return info.State
	}
	return ""
}

// stats sums the store's Stats over its partitions.
func (f *fixture) stats() durable.ShardStats {
	f.t.Helper()
	shards, err := f.st.Stats(f.ctx)
	if err != nil {
		f.t.Fatalf("Stats: %v", err)
	}
	var sum durable.ShardStats
	for _, s := range shards {
		sum.Due += s.Due
		sum.Scheduled += s.Scheduled
		sum.InFlight += s.InFlight
		sum.Dead += s.Dead
		sum.Retained += s.Retained
		sum.States.Scheduled += s.States.Scheduled
		sum.States.Retrying += s.States.Retrying
		sum.States.InFlight += s.States.InFlight
		sum.States.Dead += s.States.Dead
		sum.States.Done += s.States.Done
		sum.States.Cancelled += s.States.Cancelled
		sum.OldestDue = max(sum.OldestDue, s.OldestDue)
		sum.Paused = sum.Paused || s.Paused
	}
	return sum
}

// ms is the time of a Unix ms.
func ms(at int64) time.Time { return time.UnixMilli(at) }

// put stores a task under key in state, by the moves a Queue makes: done
// and cancelled need the fixture's Retention. It returns the delivery of a
// task put in flight.
func (f *fixture) put(key string, state durable.State) claimed {
	f.t.Helper()
	var c claimed
	switch state {
	case durable.StateScheduled:
		f.add(key, f.future, "p")
	case durable.StateRetrying:
		f.settle(f.inFlight(key, "p"), durable.Outcome{Kind: durable.OutcomeRetry, Delay: 24 * time.Hour.Milliseconds(), Err: "failed"})
	case durable.StateInFlight:
		c = f.inFlight(key, "p")
	case durable.StateDead:
		f.settle(f.inFlight(key, "p"), durable.Outcome{Kind: durable.OutcomeDead, Err: "gone"})
	case durable.StateDone:
		f.settle(f.inFlight(key, "p"), durable.Outcome{Kind: durable.OutcomeDone})
	case durable.StateCancelled:
		f.add(key, f.future, "p")
		if r, err := f.st.Cancel(f.ctx, key, f.lim.Retention, f.lim.MaxRetained); err != nil || !r.Found {
			f.t.Fatalf("Cancel %q: %+v, %v", key, r, err)
		}
	}
	if got := f.state(key); got != state {
		f.t.Fatalf("put %q %s: it is %q", key, state, got)
	}
	return c
}

// allStates are the six states, in State's order.
var allStates = []durable.State{durable.StateScheduled, durable.StateRetrying, durable.StateInFlight,
	durable.StateDead, durable.StateDone, durable.StateCancelled}
