package timingwheel

import (
	"sync/atomic"
	"time"
)

// Deferred weakening: a channel timer armed beyond strongHorizon, or a
// Ticker, starts strong, as a short channel timer does, and is weakened
// (weaken: a weak pointer and a cleanup, two span specials) only if it is
// still pending at the next sweep, which runs within strongHorizon of its
// arming. So the channel timer that most servers make, a long timeout
// stopped soon after, never pays for the specials; and an abandoned one
// outlives its last reference by at most strongHorizon before the sweep
// makes it collectable, the bound a short one has (chantimer.go).
//
// The rule, per node, under its shard's mu: a node that must become weak
// and is strong is owed (its shard's owed list); Stop, a fire that ends it
// and the wheel's Stop take it off the list; the sweep weakens every owed
// node still pending and empties the lists. The sweep is one runtime timer
// (time.AfterFunc, so that it counts as none of the wheel's timers), armed
// when a node is owed and none is armed: at most one a strongHorizon, and
// none while no long channel timer is made.

// sweepState is a wheel's deferred-weakening state.
type sweepState struct {
	armed atomic.Bool // a sweep is due within strongHorizon
}

// oweLocked makes ct, strong and armed where it must become weak, owed to
// the next sweep, and arms the sweep if none is. Callers hold s.mu.
func (s *shard) oweLocked(ct *chanTimer) {
	if ct.owed != 0 || ct.owner.ch.strong == nil {
		return // owed already, or weak already
	}
	s.owed = append(s.owed, ct)
	ct.owed = int32(len(s.owed))
	tw := s.wheel
	if !tw.sweep.armed.Load() && tw.sweep.armed.CompareAndSwap(false, true) {
		time.AfterFunc(strongHorizon, tw.sweepOwed)
	}
}

// unoweLocked takes ct off its shard's owed list, if it is on it: it has
// been stopped, or has fired for the last time. Callers hold s.mu.
func (s *shard) unoweLocked(ct *chanTimer) {
	i := int(ct.owed) - 1
	if i < 0 {
		return
	}
	last := len(s.owed) - 1
	if i != last {
		moved := s.owed[last]
		s.owed[i], moved.owed = moved, int32(i+1)
	}
	s.owed[last] = nil
	s.owed = s.owed[:last]
	ct.owed = 0
}

// sweepOwed weakens every owed node still pending, shard by shard. The flag
// is cleared first: a node owed after that arms the next sweep, whether or
// not this one reaches its shard.
func (tw *TimingWheel) sweepOwed() {
	tw.sweep.armed.Store(false)
	for i := range tw.shards {
		s := &tw.shards[i]
		s.mu.Lock()
		for j, ct := range s.owed {
			if ct.node.state == statePending {
				ct.weaken()
			}
			ct.owed = 0
			s.owed[j] = nil
		}
		s.owed = s.owed[:0]
		if cap(s.owed) > 1024 {
			s.owed = nil
		}
		s.unlock()
	}
}

// rearmWeakLocked is for a node being armed again (Reset) where it must
// become weak: a strong one is owed to the sweep, and a weak one whose
// collector a Stop detached gets it back (weaken). Callers hold s.mu.
func (s *shard) rearmWeakLocked(ct *chanTimer) {
	if ct.owner.ch.strong != nil {
		s.oweLocked(ct)
		return
	}
	ct.weaken()
}
