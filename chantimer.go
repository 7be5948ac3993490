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
// wheel keeps must not reach C strongly for long. The wheel keeps a node
// instead: a Timer of its own, allocated with its owner in one chanTimer,
// which holds the channel (owner.ch). The user's Timer points at the owner,
// and through it at the node, so Stop and Reset act on the node.
//
// A node armed for at most strongHorizon holds its channel strongly: the
// timer fires (and the wheel lets go of it) within that time anyway, so an
// abandoned one outlives its last reference by at most strongHorizon of the
// wheel's clock, where time.Timer's is released at once. Armed any further
// out, by NewTimer or by a Reset, or made for a Ticker, the node is owed to
// the sweep, which runs within strongHorizon (of real time) and weakens it
// (weaken) for the rest of its life if it is still pending then, so that an
// abandoned one too outlives its last reference by at most about
// strongHorizon (weakdefer.go): a weak node holds the channel through a weak
// pointer, and a cleanup attached to the channel (the collector) takes the
// node out of its bucket once the channel is unreachable; a node found with
// its channel gone when it comes due is dropped likewise. Both count in
// Stats.Collected.
//
// The collector's argument is the node, which the runtime keeps until the
// collector has run: an abandoned weak node is freed by the second
// collection after its channel became unreachable, once the runtime's
// cleanup goroutine has run the collector in between
// (TestAbandonedTickersAndTimersGoInTwoCollections). Stop does not leave that to the
// collector: it stops it (detachCollectorLocked), so a stopped Timer or
// Ticker that nothing references is freed by the next collections as
// package time's are (TestStoppedTickersAndTimersGoAtOnce), and a Reset that
// arms it beyond the horizon again attaches a new one (weaken).
//
// The horizon and the sweep exist for the cost: weak.Make and
// runtime.AddCleanup each add a special record to the channel, which the
// garbage collector sweeps, and together they made NewTimer+Stop allocate 7
// objects and 352 bytes, against 4 and 312 for a node holding its channel,
// and take 3 to 5.6 times the runtime's time against 1.5 to 2.4
// (docs/design/channel-timers.md), while most channel timers, however long,
// are stopped or fire soon. With the sweep, a NewTimer or NewTicker stopped
// before it pays for neither (TestLongChannelTimerStoppedSoonPaysNoSpecial).
//
// A Ticker is the same node with a period (see ticker.go), always owed: it
// never stops firing, so a strong one would never be released.
//
// AfterFunc and ScheduleFunc timers are kept strongly: they must run.
type chanTimer struct {
	owner owner
	node  Timer
	// period is 0 for a NewTimer, a Ticker's interval otherwise; next is the
	// wheel time (since epoch) of the Ticker's pending tick, from which the
	// tick after it is scheduled so that ticks keep their phase. Both are
	// protected by the mu of the node's shard. They make a chanTimer 120
	// bytes (a 128-byte size class) instead of 104 (112), and spare the
	// Ticker the 48 bytes of a Timer (see BenchmarkTickerCost).
	period time.Duration
	next   time.Duration
	// owed is the node's place in its shard's owed list plus one, 0 when
	// it is not owed to the sweep (see weakdefer.go). Protected by the mu
	// of the node's shard.
	owed int32
}

// NewTimer creates a Timer that will send the current time on its channel
// after at least duration d on the wheel's clock.
//
// A Timer that nothing references any more, neither it nor its C, is
// released by the garbage collector without being stopped, as time.Timer is
// since Go 1.23: if it is due within one second, once it fires; if later,
// before it fires, in two collections after the wheel's sweep, which runs
// within a second of its arming (see Stats.Collected). A stopped
// Timer holds nothing back: once nothing references it, the garbage
// collector frees it as it frees a stopped time.Timer.
func (tw *TimingWheel) NewTimer(d time.Duration) *Timer {
	c, ct := newChanTimer(0)
	var owe *chanTimer
	if d > strongHorizon {
		owe = ct // weakened by the sweep if still pending then (weakdefer.go)
	}
	now := tw.now()
	tw.startOwing(&ct.node, tw.dueAfter(now, d), now, owe) // sets ct.owner.shard
	return &Timer{C: c, owner: &ct.owner}
}

// strongHorizon is the longest arming for which a channel timer's node holds
// its channel strongly: the longest an abandoned channel timer outlives its
// last reference. A second keeps that bound short beside the timeouts it
// serves, and covers the short timers (level 0 of the default wheel spans
// 512 ms) that are most of a server's; a timer armed further out pays for
// the weak pointer and the cleanup (see the comment at the top of the file).
const strongHorizon = time.Second

// newChanTimer returns the channel and the node of a channel timer (period
// 0) or a Ticker, holding the channel strongly.
func newChanTimer(period time.Duration) (chan time.Time, *chanTimer) {
	c := make(chan time.Time, 1)
	ct := &chanTimer{period: period}
	ct.owner = owner{node: ct, ch: chanRef{strong: c}}
	ct.node.owner = &ct.owner
	return c, ct
}

// weaken makes ct hold its channel weakly from now on, and watches the
// channel: it attaches the collector, the cleanup that releases the node
// once the channel is unreachable. It is called before the node is published
// (NewTimer, NewTicker) or with its shard's mu held (Reset), as the reads of
// owner.ch by the advancer are. On a node already weak it only attaches the
// collector again if Stop detached it: the caller, which holds the Timer or
// Ticker and so the channel, is arming the node again.
func (ct *chanTimer) weaken() {
	r := &ct.owner.ch
	if r.strong == nil {
		if r.collector == (runtime.Cleanup{}) {
			if p := r.weak.Value(); p != nil {
				r.collector = runtime.AddCleanup(p, (*Timer).collect, &ct.node)
			}
		}
		return
	}
	p := chanObjectOf(r.strong)
	r.weak = weak.Make(p)
	// The cleanup's argument is the node, which must not reach the channel
	// strongly when the collector looks: strong is cleared below, before
	// ct is published or mu released.
	r.collector = runtime.AddCleanup(p, (*Timer).collect, &ct.node)
	r.strong = nil
}

// detachCollectorLocked takes the collector off the node n of a channel
// timer or Ticker, if one is attached, and returns it (the zero Cleanup for
// any other timer); the caller, which holds the node's shard's mu, passes it
// to stopCollector once it has unlocked.
//
// Stop calls it so that a stopped channel timer or Ticker is released as
// soon as nothing references it, as package time's is: an attached collector
// keeps the node, its argument, alive until a collection has found the
// channel unreachable and the runtime's cleanup goroutine has run it, and
// only the collection after that frees the node (four objects per Ticker
// live in between; TestStoppedTickersAndTimersGoAtOnce). Stopping a cleanup
// costs a walk of the specials of the channel's span, out of the lock,
// instead of the collector's run later, which takes the lock.
func (n *Timer) detachCollectorLocked() runtime.Cleanup {
	ct := n.owner.node
	if ct == nil {
		return runtime.Cleanup{}
	}
	n.owner.shard.unoweLocked(ct)
	c := ct.owner.ch.collector
	ct.owner.ch.collector = runtime.Cleanup{}
	return c
}

// stopCollector stops a collector that detachCollectorLocked returned. c is
// the channel it watches, kept reachable here until the cleanup is stopped:
// a cleanup already queued because its channel became unreachable cannot
// be stopped (runtime.Cleanup.Stop), and would then run collect, which
// finds the node stopped and does nothing.
func stopCollector(collector runtime.Cleanup, c <-chan time.Time) {
	collector.Stop()
	runtime.KeepAlive(c)
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
		n.unlink(true)
		n.state = stateStopped
		s.noteCollected()
	}
	s.unlock()
}

// chanObject stands for the runtime's channel object, which a chan value
// points to (reflect.Value.UnsafePointer reports the same pointer). It is
// never dereferenced: weak.Make and runtime.AddCleanup need a typed pointer
// to the object, and a channel is the one object of a channel timer that
// both the user's Timer and After's caller hold.
type chanObject struct{ _ byte }

func chanObjectOf(c chan time.Time) *chanObject { return *(**chanObject)(unsafe.Pointer(&c)) }

// chanRef holds a node's channel: strongly (strong is set) until the node is
// weakened, weakly after; collector is the cleanup attached to the weakly
// held channel (weaken), zero when none is (a strong node, or one stopped
// since). It is protected like the node's state: by its shard's mu once the
// node is published.
type chanRef struct {
	strong    chan time.Time
	weak      weak.Pointer[chanObject]
	collector runtime.Cleanup
}

// get returns the channel, or nil once it has been collected.
func (r chanRef) get() chan time.Time {
	if r.strong != nil {
		return r.strong
	}
	p := r.weak.Value()
	if p == nil {
		return nil
	}
	return *(*chan time.Time)(unsafe.Pointer(&p))
}
