package timingwheel

import (
	"runtime"
	"time"
	"unsafe"
	"weak"
)

// Channel timers are collectable, as package time's are since Go 1.23: a
// NewTimer or After that nothing references any more (the loop that selects
// on a fresh After each time round, the Timer dropped without Stop) does not
// keep its memory until it fires.
//
// The user's Timer holds C, and the user may hold only C (After), so what the
// wheel keeps must reach neither strongly. The wheel keeps a node instead: a
// Timer of its own, allocated with its owner in one chanTimer, which holds
// the channel through a weak pointer. The user's Timer points at the owner,
// and through it at the node, so Stop and Reset act on the node. A cleanup
// attached to the channel takes the node out of its bucket once the channel
// is unreachable; a node found with its channel gone when it comes due is
// dropped likewise. Both count in Stats.Collected.
//
// A Ticker is the same node with a period (see ticker.go).
//
// AfterFunc and ScheduleFunc timers are kept strongly: they must run.
type chanTimer struct {
	owner owner
	node  Timer
	// period is 0 for a NewTimer, a Ticker's interval otherwise; next is the
	// wheel time (since epoch) of the Ticker's pending tick, from which the
	// tick after it is scheduled so that ticks keep their phase. Both are
	// protected by the mu of the node's shard. They make a chanTimer 96
	// bytes instead of 80, and spare the Ticker the 48 bytes of a Timer (see
	// BenchmarkTickerCost).
	period time.Duration
	next   time.Duration
}

// NewTimer creates a Timer that will send the current time on its channel
// after at least duration d on the wheel's clock.
func (tw *TimingWheel) NewTimer(d time.Duration) *Timer {
	c, ct := newChanTimer(0)
	tw.start(&ct.node, d) // sets ct.owner.shard
	return &Timer{C: c, owner: &ct.owner}
}

// newChanTimer returns the channel and the node of a channel timer (period
// 0) or a Ticker, with the node released once the channel is unreachable.
func newChanTimer(period time.Duration) (chan time.Time, *chanTimer) {
	c := make(chan time.Time, 1)
	ct := &chanTimer{period: period}
	ct.owner = owner{node: ct, ch: makeWeakChan(c)}
	ct.node.owner = &ct.owner
	runtime.AddCleanup(chanObjectOf(c), (*Timer).collect, &ct.node)
	return c, ct
}

// After waits for the duration to elapse on the wheel and then sends the
// current time on the returned channel. It is equivalent to NewTimer(d).C.
func (tw *TimingWheel) After(d time.Duration) <-chan time.Time {
	return tw.NewTimer(d).C
}

// collect releases the node n of a channel timer whose channel is gone.
func (n *Timer) collect() {
	s := n.owner.shard
	s.mu.Lock()
	if n.state == statePending {
		n.unlink()
		n.state = stateStopped
		s.noteCollected()
	}
	s.mu.Unlock()
}

// chanObject stands for the runtime's channel object, which a chan value
// points to (reflect.Value.UnsafePointer reports the same pointer). It is
// never dereferenced: weak.Make and runtime.AddCleanup need a typed pointer
// to the object, and a channel is the one object of a channel timer that
// both the user's Timer and After's caller hold.
type chanObject struct{ _ byte }

func chanObjectOf(c chan time.Time) *chanObject { return *(**chanObject)(unsafe.Pointer(&c)) }

// weakChan holds a channel without keeping it reachable.
type weakChan struct{ p weak.Pointer[chanObject] }

func makeWeakChan(c chan time.Time) weakChan { return weakChan{weak.Make(chanObjectOf(c))} }

// get returns the channel, or nil once it has been collected.
func (w weakChan) get() chan time.Time {
	p := w.p.Value()
	if p == nil {
		return nil
	}
	return *(*chan time.Time)(unsafe.Pointer(&p))
}
