package timingwheel

import "time"

// A Ticker holds a channel that delivers “ticks” of a clock at intervals, as
// time.Ticker does, on a TimingWheel. It costs no more than a NewTimer due
// in more than a second: the wheel keeps one entry for it, re-armed in place
// at every tick, and holds its channel weakly, so that an abandoned Ticker
// can be collected. NewTicker+Stop allocates 7 objects; a NewTimer due
// within a second holds its channel strongly and allocates 4 (go test -run
// '^$' -bench TickerCost in this repository measures both, beside package
// time's).
//
// As time.Ticker's since Go 1.23: C has a buffer of one and a tick the
// receiver has not taken when the next is due is dropped; after Stop or
// Reset returns, no tick prepared before the call is received; a stopped
// Ticker holds nothing back, and once nothing references it the garbage
// collector frees it as it frees a stopped time.Ticker. A Ticker that
// nothing references any more (nor its C) is released by the garbage
// collector without being stopped, and counted in Stats.Collected. Unlike
// time.Ticker's, that takes the wheel's sweep, which runs within a second
// of the Ticker's arming and makes the wheel hold C weakly from then on (a
// Ticker stopped before it never pays for the weak pointer), then two
// collections, the first finding C unreachable and the second freeing what
// the wheel kept for the Ticker after the runtime has run the cleanup that
// takes it out of the wheel (runtime.AddCleanup): about four objects per
// abandoned Ticker stay live between them.
type Ticker struct {
	C <-chan time.Time // The channel on which the ticks are delivered.

	// node is the chanTimer the wheel keeps in its buckets for the Ticker,
	// with the period; the wheel holds C only weakly, through it.
	node *chanTimer
}

// NewTicker returns a new Ticker containing a channel that will send the
// current time on the channel after each tick. The period of the ticks is
// specified by the duration argument. The ticker will adjust the time
// interval or drop ticks to make up for slow receivers. The duration d must
// be greater than zero; if not, NewTicker will panic, as time.NewTicker
// does.
//
// Ticks keep their phase: tick k is scheduled at start + k·d on the wheel's
// clock, never from when the tick before it was sent, so they do not drift by
// the wheel's lateness. Each is sent no earlier than its scheduled time, and
// at most about one tick of the wheel after (see the package documentation).
// A d shorter than the wheel's tick sends at most one tick per tick of the
// wheel. Ticks whose time passed while the wheel was stalled are skipped,
// not sent in a burst: the next one after a stall is the first scheduled
// time still ahead of the clock.
//
// Unlike time.Ticker, a receiver that has left a tick waiting on C for a
// time S may get the tick after it up to about S late (never early): while
// C stays full the wheel looks at it less and less often, so that a Ticker
// nobody receives from any more can be garbage collected. After k ticks in
// a row found C full, the wheel skips the next 2^k-1 ticks without looking
// (2^20-1 at most), because each look holds C strongly for a moment, and a
// look during every collection would keep an abandoned Ticker alive forever.
// A receiver that keeps up never sees this.
//
// On a stopped wheel a Ticker never ticks; Stop and Reset are still safe.
func (tw *TimingWheel) NewTicker(d time.Duration) *Ticker {
	if d <= 0 {
		panic("timingwheel: non-positive interval for NewTicker")
	}
	c, ct := newChanTimer(d)
	now := tw.now()
	ct.next = addDuration(now, d) // before the node is armed, which publishes it
	// A Ticker never stops firing: only a weak one can be released, which
	// the sweep makes it if it is still ticking then (weakdefer.go).
	tw.startOwing(&ct.node, tw.dueAt(ct.next), now, ct)
	return &Ticker{C: c, node: ct}
}

// Tick is a convenience wrapper for NewTicker providing access to the ticking
// channel only. Unlike NewTicker, Tick will return nil if d <= 0, as
// time.Tick does. A Tick channel that is no longer received from, nor
// referenced, is collected like an abandoned Ticker, so Tick leaks nothing.
func (tw *TimingWheel) Tick(d time.Duration) <-chan time.Time {
	if d <= 0 {
		return nil
	}
	return tw.NewTicker(d).C
}

// Stop turns off a ticker. After Stop, no more ticks will be sent, and a tick
// sent but not yet received is discarded, so none is received after Stop
// returns. Stop does not close the channel, to prevent a concurrent goroutine
// reading from the channel from seeing an erroneous “tick”. Stop on the zero
// Ticker does nothing, as time.Ticker.Stop does.
func (t *Ticker) Stop() {
	if t.node == nil {
		return
	}
	e := &t.node.node
	s := t.node.owner.shard
	s.mu.Lock()
	s.stopLocked(e)
	// The wheel sends only with mu held, so the tick drained here is the
	// last one: none can be prepared after it.
	drain(t.C)
	collector := e.detachCollectorLocked()
	s.unlock()
	stopCollector(collector, t.C)
}

// Reset stops a ticker and resets its period to the specified duration. The
// next tick will arrive after the new period elapses, and later ones keep the
// phase of that first one. A tick sent but not yet received is discarded, so
// none prepared before Reset is received after it returns. Reset restarts a
// stopped Ticker. The duration d must be greater than zero; if not, Reset
// will panic, as time.Ticker.Reset does; so does Reset on the zero Ticker.
func (t *Ticker) Reset(d time.Duration) {
	if d <= 0 {
		panic("timingwheel: non-positive interval for Ticker.Reset")
	}
	if t.node == nil {
		panic("timingwheel: Reset called on uninitialized Ticker")
	}
	ct := t.node
	e, s := &ct.node, ct.owner.shard
	tw := s.wheel
	now := tw.now()
	s.mu.Lock()
	if e.state == statePending {
		e.unlink(false)
		s.noteDisarmed()
	}
	drain(t.C)
	ct.period, ct.next, e.drops = d, addDuration(now, d), 0
	s.startLocked(e, tw.dueAt(ct.next), now)
	s.rearmWeakLocked(ct)
	s.unlock()
	tw.help(now)
}

// rearmTickerLocked schedules the tick after the one ct's node just tried
// to send at now (sent says whether C took it): the first of next+period,
// next+2·period, ... that is still ahead of now, so ticks keep their phase
// and a stall costs skipped ticks, never a burst (time.Ticker does the same).
// The node stays statePending in s.
//
// After k ticks in a row found C full, the next 2^k-1 phase points are
// skipped as well, without looking at C. The reason is the garbage
// collector: every tick turns the weak pointer to C into a strong one for a
// moment, and one taken while the collector is marking keeps C alive for
// that whole cycle, so a Ticker nobody receives from, ticking more often
// than a mark phase lasts (1 ms ticks against marks of several ms on a large
// heap, or under -race), would never be collected. Backing off lets some
// cycle pass without a tick. The cost falls on a receiver that stalls: one
// that left C full for a time S gets its next tick after it receives the
// waiting one up to about S later than time.Ticker would send it; one that
// keeps up never sees it.
func (s *shard) rearmTickerLocked(ct *chanTimer, now time.Time, sent bool) {
	w, e := s.wheel, &ct.node
	step := ct.period
	if sent {
		e.drops = 0
	} else {
		e.drops = min(e.drops+1, maxTickerBackoff)
		if step > never>>e.drops {
			step = never
		} else {
			step <<= e.drops
		}
	}
	next := addDuration(ct.next, step)
	if at := now.Sub(w.epoch); next <= at {
		// Skip the phase points at or before now in one step; next stays
		// at or before at, so it cannot overflow.
		next += (at - next) / ct.period * ct.period
		next = addDuration(next, ct.period)
	}
	ct.next = next
	// dueAt(next) is after currentTick, which is never ahead of the
	// clock; the max only keeps a clock that misbehaved from making
	// insertLocked refuse the node, which would lose the Ticker silently.
	e.due = max(w.dueAt(next), s.currentTick+1)
	s.insertLocked(e)
}

// maxTickerBackoff caps the back-off of rearmTickerLocked at 2^20 periods
// (17 minutes for 1 ms ticks): by then a Ticker nobody receives from has
// long been collected, and the period fits the shift for any d below 2.4
// hours (longer periods saturate).
const maxTickerBackoff = 20

// NewTicker is Default().NewTicker: time.NewTicker on the default wheel.
func NewTicker(d time.Duration) *Ticker { return defaultWheel().NewTicker(d) }

// Tick is Default().Tick: time.Tick on the default wheel.
func Tick(d time.Duration) <-chan time.Time { return defaultWheel().Tick(d) }
