package timingwheel

import (
	"fmt"
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-timingwheel/timingwheel/delayqueue"
)

// MaxWheelSize is the largest wheel size New accepts.
const MaxWheelSize = 1 << 20

// chunk is how many timers the poller moves per hold of the wheel's lock, so
// that adds wait for at most one chunk, never for a whole large bucket.
const chunk = 256

// TimingWheel is a hierarchical timing wheel: the tick-driven levels of
// Kafka's purgatory timer, with a DelayQueue that wakes one poller only when
// the earliest bucket is due. See the package documentation for the design.
//
// All methods are safe for concurrent use.
type TimingWheel struct {
	tick    int64   // nanoseconds per tick of level 0
	perTick divider // divides by tick
	bits    uint    // log2(wheelSize)
	size    int64   // wheelSize: buckets per level, a power of two
	clock   Clock
	system  bool      // clock is the system clock: read it with time.Since
	epoch   time.Time // tick 0; carries the monotonic reading on the system clock
	queue   *delayqueue.DelayQueue[*bucket]
	exec    executor
	exit    chan struct{} // closed by Stop
	done    chan struct{} // closed when the poller returns
	// pollerID is the poller goroutine's id, with WithInlineCallbacks only:
	// Stop called from an inline callback must not wait for the poller.
	pollerID atomic.Uint64
	stopOnce sync.Once
	ready    []func() // flush's batch of callbacks, reused; poller only
	owner    owner    // the owner of the wheel's one-shot timers

	// mu protects the wheel: every level, bucket and timer state, the
	// counters, and currentTick. Adds, Stop, Reset and the poller's clock
	// advance and flush all hold it, so an add never interleaves with an
	// advance (Kafka's rule). Lock order: mu, then the delay queue's lock.
	mu sync.Mutex
	// currentTick is the wheel's time: the expiration of the last bucket the
	// poller took, never ahead of the clock. Level L's current time is
	// currentTick rounded down to a multiple of wheelSize^L ticks.
	currentTick int64
	levels      [][]bucket // levels[L] has wheelSize buckets of wheelSize^L ticks each
	stopped     bool       // set by Stop
	// pending counts timers that will fire; the others count events.
	pending      int
	fired        uint64
	stoppedCount uint64
	dropped      uint64
}

// New returns a running wheel whose finest level has wheelSize buckets of one
// tick each; level L (created when first needed) has buckets of
// tick*wheelSize^L. The wheel fires a timer within one tick after its duration
// has elapsed, never before.
//
// wheelSize is rounded up to a power of two. New returns ErrInvalidTick if
// tick <= 0, ErrInvalidWheelSize if wheelSize < 2 or > MaxWheelSize, and
// ErrInvalidOption for a bad Option. Stop the wheel to release its goroutine.
func New(tick time.Duration, wheelSize int, opts ...Option) (*TimingWheel, error) {
	if tick <= 0 {
		return nil, fmt.Errorf("%w: got %v", ErrInvalidTick, tick)
	}
	if wheelSize < 2 || wheelSize > MaxWheelSize {
		return nil, fmt.Errorf("%w: got %d", ErrInvalidWheelSize, wheelSize)
	}
	cfg := config{clock: delayqueue.System}
	for _, opt := range opts {
		if err := opt(&cfg); err != nil {
			return nil, err
		}
	}
	b := uint(bits.Len(uint(wheelSize - 1)))
	tw := &TimingWheel{
		tick:    int64(tick),
		perTick: newDivider(int64(tick)),
		bits:    b,
		size:    1 << b,
		clock:   cfg.clock,
		exit:    make(chan struct{}),
		done:    make(chan struct{}),
		exec:    executor{mode: cfg.mode},
	}
	tw.owner.wheel = tw
	tw.system = cfg.clock == delayqueue.System
	tw.epoch = cfg.clock.Now()
	tw.queue = delayqueue.New[*bucket](cfg.clock)
	if cfg.mode == execPool {
		tw.exec.pool = newPool(cfg.workers)
	}
	if cfg.manualPoll {
		close(tw.done)
	} else {
		go tw.poll()
	}
	return tw, nil
}

// elapsed returns the clock's time since epoch in nanoseconds. On the system
// clock it reads only the monotonic clock.
func (tw *TimingWheel) elapsed() int64 {
	if tw.system {
		return int64(time.Since(tw.epoch))
	}
	return int64(tw.clock.Now().Sub(tw.epoch))
}

// targetAfter returns now+d in nanoseconds since epoch, saturating at
// math.MaxInt64 instead of wrapping.
func (tw *TimingWheel) targetAfter(d time.Duration) int64 {
	e := tw.elapsed()
	if d > 0 && e > math.MaxInt64-int64(d) {
		return math.MaxInt64
	}
	return e + int64(d)
}

// dueTick returns the tick at which a timer set for ns (since epoch) is due:
// the first tick boundary at or after ns. Rounding up is what makes the wheel
// never fire early: the poller fires a timer only once currentTick has reached
// its due tick, and currentTick*tick never runs ahead of the clock. A d <= 0
// returns 0, which is never after currentTick: due at once.
func (tw *TimingWheel) dueTick(ns int64, d time.Duration) int64 {
	if d <= 0 || ns <= 0 {
		return 0
	}
	// ceil(ns/tick) = floor((ns-1)/tick) + 1 for ns > 0.
	return min(tw.perTick.div(ns-1)+1, maxDueTick)
}

func (tw *TimingWheel) deadlineAfter(d time.Duration) int64 {
	return tw.dueTick(tw.targetAfter(d), d)
}

// timeOfTick converts a tick to the clock's time, saturating.
func (tw *TimingWheel) timeOfTick(tick int64) time.Time {
	if tick > math.MaxInt64/tw.tick {
		return tw.epoch.Add(math.MaxInt64)
	}
	return tw.epoch.Add(time.Duration(tick * tw.tick))
}

// startLocked arms t for deadline and returns a callback to run if it is due
// at once. Callers hold mu and have taken t out of any bucket.
func (tw *TimingWheel) startLocked(t *Timer, deadline int64) func() {
	t.due = makeDue(deadline, statePending)
	if tw.stopped {
		return nil // dropped: pending forever, never fires
	}
	tw.pending++
	if tw.insertLocked(t) {
		return nil
	}
	if tw.exec.mode == execInline || t.kind() == kindSchedule {
		// Never run a callback on the caller's goroutine: let the poller take
		// it at the next tick, which is already due.
		t.setDeadline(tw.currentTick + 1)
		tw.insertLocked(t)
		return nil
	}
	return tw.expireLocked(t)
}

// insertLocked puts t into the bucket of the finest level whose range holds
// its deadline, creating levels as needed, and reports false, without
// inserting, if t is already due.
//
// Level L covers the wheelSize slots of wheelSize^L ticks starting at the
// level's current time. A timer lands on level L when its deadline is fewer
// than wheelSize slots of that level ahead of the current slot; then its slot
// is at least one ahead (it did not fit level L-1), so the bucket's expiration,
// the start of the slot, is after currentTick. On level 0 a slot is one tick
// and the bucket's expiration is the deadline itself; on higher levels the
// bucket only cascades its timers down when its slot begins, so the timers
// reach level 0, and fire, no earlier than their deadlines.
func (tw *TimingWheel) insertLocked(t *Timer) bool {
	deadline, now := t.deadline(), tw.currentTick
	if deadline <= now {
		return false
	}
	if deadline == maxDueTick {
		return true // never due: pending, in no bucket
	}
	for level := 0; ; level++ {
		shift := uint(level) * tw.bits
		slot := deadline >> shift
		if slot-(now>>shift) >= tw.size {
			continue // too far ahead for this level: overflow to the next
		}
		for len(tw.levels) <= level {
			tw.levels = append(tw.levels, newLevel(tw.size))
		}
		b := &tw.levels[level][slot&(tw.size-1)]
		b.push(t)
		if expiration := slot << shift; b.expiration != expiration {
			b.expiration = expiration
			tw.queue.Offer(b, tw.timeOfTick(expiration))
		}
		return true
	}
}

func newLevel(size int64) []bucket {
	l := make([]bucket, size)
	for i := range l {
		l[i].init()
	}
	return l
}

// expireLocked fires t, which is due and in no bucket, and returns the
// callback to hand to the executor once mu is released (nil for a channel
// timer, whose value is sent here so that Stop and Reset, which hold mu, can
// discard it).
func (tw *TimingWheel) expireLocked(t *Timer) func() {
	tw.fired++
	switch t.kind() {
	case kindChan:
		tw.pending--
		t.setState(stateFired)
		t.f()
		return nil
	case kindSchedule:
		return tw.rearmLocked(t)
	default:
		tw.pending--
		t.setState(stateFired)
		return t.f
	}
}

// poll is the wheel's only goroutine: it sleeps until the earliest bucket is
// due and flushes it, until Stop.
func (tw *TimingWheel) poll() {
	defer close(tw.done)
	if tw.exec.mode == execInline {
		tw.pollerID.Store(goroutineID())
	}
	for {
		b, ok := tw.queue.Poll(tw.exit)
		if !ok {
			return
		}
		tw.flush(b)
	}
}

// step flushes every bucket due now; tests use it instead of the poller.
func (tw *TimingWheel) step() {
	for {
		b, ok := tw.queue.PollDue()
		if !ok {
			return
		}
		tw.flush(b)
	}
}

// flush advances the wheel's time to b's expiration and moves b's timers on:
// each either fires or drops to a finer level. It works in chunks, releasing
// mu between them, so adds never wait for a large bucket. Between chunks no
// add can land in b: new timers go to slots after the current one.
func (tw *TimingWheel) flush(b *bucket) {
	ready := tw.ready[:0]
	defer func() { tw.ready = ready[:0] }()
	tw.mu.Lock()
	if tw.stopped {
		tw.mu.Unlock()
		return
	}
	if b.expiration > tw.currentTick {
		tw.currentTick = b.expiration
	}
	b.expiration = noExpiration
	for {
		for n := 0; n < chunk && !b.empty(); n++ {
			t := b.take()
			if !tw.insertLocked(t) {
				if run := tw.expireLocked(t); run != nil {
					ready = append(ready, run)
				}
			}
		}
		more := !b.empty()
		tw.mu.Unlock()
		tw.exec.runAll(ready)
		clear(ready)
		ready = ready[:0]
		if !more {
			return
		}
		tw.mu.Lock()
		if tw.stopped {
			tw.mu.Unlock()
			return
		}
	}
}

// Len reports the number of pending timers: those that will fire unless
// stopped. It is zero once the wheel has stopped.
func (tw *TimingWheel) Len() int {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	return tw.pending
}

// Stop stops the wheel: its poller exits, pending timers are dropped (they
// never fire, and the wheel no longer references them), and later AfterFunc,
// NewTimer and Reset calls return at once and never fire. Stop is idempotent
// and safe to call concurrently; it returns once the poller has exited and,
// with WithWorkerPool, once the callbacks already queued have run. Callbacks
// already started on their own goroutines are not waited for, and a Stop
// called from a callback running on the poller (WithInlineCallbacks) or a
// worker (WithWorkerPool) does not wait for that goroutine, which exits when
// the callback returns.
func (tw *TimingWheel) Stop() {
	tw.stopOnce.Do(func() {
		tw.mu.Lock()
		tw.stopped = true
		tw.dropped += uint64(tw.pending)
		tw.pending = 0
		for _, level := range tw.levels {
			for i := range level {
				level[i].detachAll()
			}
		}
		tw.levels = nil
		tw.mu.Unlock()
		close(tw.exit)
		var caller uint64
		if tw.exec.mode != execGoroutine {
			caller = goroutineID()
		}
		if caller == 0 || caller != tw.pollerID.Load() {
			<-tw.done
		}
		tw.queue.Clear()
		if tw.exec.pool != nil {
			tw.exec.pool.close(caller)
		}
	})
}
