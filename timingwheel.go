package timingwheel

import (
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-timingwheel/timingwheel/delayqueue"
)

// MaxWheelSize is the largest wheel size New accepts.
const MaxWheelSize = 1 << 20

// TimingWheel is a hierarchical timing wheel: the tick-driven levels of
// Kafka's purgatory timer, split into shards that goroutines use without
// meeting, with a DelayQueue of every shard's buckets that callers and, as a
// fallback, one poller take due buckets from. See the package documentation
// for the design.
//
// All methods are safe for concurrent use.
type TimingWheel struct {
	ticks
	bits  uint  // log2(wheelSize)
	size  int64 // wheelSize: slots per level, a power of two
	clock Clock
	epoch time.Time // the wheel's time 0: the queue's epoch
	queue *delayqueue.DelayQueue[*bucket]
	sweep sweepState // deferred weakening of channel timers (weakdefer.go)
	exec  executor

	shards    []shard
	shardMask uint32
	hints     []shardHint // each P's shard, for lockShard: hints[P's id & shardMask]
	adv       advancer

	exit     chan struct{} // closed by Stop
	done     chan struct{} // closed when the poller returns
	stopped  atomic.Bool
	stopOnce sync.Once
	// rings is set when the wheel has no poller: its alarm starts a
	// goroutine that advances the wheel (see ring).
	rings bool
	// system is set when the clock is delayqueue.System (see now).
	system bool
	// pollerID is the poller goroutine's id, with WithInlineCallbacks only:
	// Stop called from an inline callback must not wait for the poller.
	pollerID atomic.Uint64
}

// New returns a running wheel whose finest level has wheelSize slots of one
// tick each; level L (created when first needed) has slots of
// tick*wheelSize^L. The wheel fires a timer after its duration has elapsed,
// never before, and about one tick after at most (see the package
// documentation for the exact bound).
//
// wheelSize is rounded up to a power of two. New returns ErrInvalidTick if
// tick <= 0, ErrInvalidWheelSize if wheelSize < 2 or > MaxWheelSize, and
// ErrInvalidOption for a bad Option. Stop the wheel to release its alarm and
// its goroutine, if it has one (see Stop).
func New(tick time.Duration, wheelSize int, opts ...Option) (*TimingWheel, error) {
	tw, err := build(tick, wheelSize, opts)
	if err != nil {
		return nil, err
	}
	// On the System clock with callbacks on goroutines of their own, the
	// alarm starts the poller's goroutine for each ring (see ring): no
	// goroutine sleeps for the wheel. Other clocks have no such alarm, and
	// the other executors run callbacks elsewhere than on a fresh goroutine.
	if tw.exec.mode == execGoroutine && tw.queue.Ring(tw.ring) {
		tw.rings = true
		close(tw.done) // no poller goroutine to wait for
	} else {
		go tw.poll()
	}
	return tw, nil
}

// build returns a wheel with no poller running; New starts it, and tests that
// drive the wheel themselves do not.
func build(tick time.Duration, wheelSize int, opts []Option) (*TimingWheel, error) {
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
	n := numShards()
	tw := &TimingWheel{
		ticks:     ticks{tick: int64(tick), perTick: newDivider(int64(tick))},
		bits:      b,
		size:      1 << b,
		clock:     cfg.clock,
		queue:     delayqueue.NewIndexed(cfg.clock, func(b *bucket) *delayqueue.Slot { return &b.queueSlot }),
		exec:      executor{mode: cfg.mode},
		shards:    make([]shard, n),
		shardMask: uint32(n - 1),
		exit:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	tw.epoch = tw.queue.Epoch()
	tw.system = cfg.clock == delayqueue.System
	tw.queue.DropIf(dropVacant)
	// The queue's grace starts at 0: the poller rings on time until callers
	// show they keep up (see help). Inline: callers never advance the wheel.
	if cfg.mode != execInline {
		tw.adv.grace = graceFor(tick)
	}
	for i := range tw.shards {
		s := &tw.shards[i]
		s.wheel, s.index = tw, uint32(i)
		s.owner.shard = s
	}
	tw.hints = make([]shardHint, n)
	for i := range tw.hints {
		tw.hints[i].shard.Store(uint32(i))
	}
	if cfg.mode == execPool {
		tw.exec.pool = newPool(cfg.workers)
	}
	return tw, nil
}

// now returns the wheel's time, tw.queue.Now(). On the system clock it reads
// time.Since(epoch) itself: a call and a generic dictionary fewer on every
// AfterFunc, Reset and context (docs/design/matrix-floors.md, "The calls
// around the clock").
func (tw *TimingWheel) now() time.Duration {
	if tw.system {
		if d := time.Since(tw.epoch); d >= 0 && d != never {
			return d
		}
	}
	return tw.queue.Now()
}

// timeOf converts wheel time (since epoch) to the clock's time.
func (tw *TimingWheel) timeOf(ns time.Duration) time.Time { return tw.epoch.Add(ns) }

// Stop stops the wheel: its poller exits, pending timers are dropped (they
// never fire, and the wheel no longer references them), and later AfterFunc,
// NewTimer and Reset calls return at once and never fire. Contexts made by
// WithTimeout and WithDeadline on the wheel are then done only by their
// cancel or their parent, never by their deadline: Stop neither fires them
// (that would be early) nor cancels them. So a server stops its wheel last,
// after http.Server.Shutdown has returned; otherwise a handler waiting for
// its deadline waits until its client goes away, and Shutdown waits out its
// own context.
//
// Stop is idempotent and safe to call concurrently, from any goroutine,
// callbacks included. Every call made outside the wheel's callbacks returns
// once the wheel has wholly stopped: its poller has exited (on the System
// clock with callbacks on their own goroutines, a wheel has no poller
// goroutine, and Stop waits instead for an advance in progress) and, with
// WithWorkerPool, the callbacks already queued have run and the workers have
// exited; concurrent calls all wait for that. A call from a callback running
// on the poller (WithInlineCallbacks) or on a worker (WithWorkerPool) stops
// the wheel just the same but does not wait for the wheel's callback
// goroutines, its own among them, which exit once their callbacks return (a
// worker's call still waits for the poller, which never waits for a
// callback). Callbacks running on their own goroutines (the default) are not
// waited for.
func (tw *TimingWheel) Stop() {
	// The Once covers only what must happen once and never waits, so that a
	// callback's Stop cannot block behind a Stop that waits for that
	// callback's goroutine.
	tw.stopOnce.Do(func() {
		tw.stopped.Store(true)
		for i := range tw.shards {
			tw.shards[i].stop()
		}
		close(tw.exit)
	})
	var caller uint64
	if tw.exec.mode != execGoroutine {
		caller = goroutineID()
	}
	// pollerID is 0 until the poller runs; a caller's id never is.
	if caller == 0 || caller != tw.pollerID.Load() {
		<-tw.done
	}
	if tw.rings {
		// A ring in progress finishes advancing (it finds the wheel
		// stopped); one that starts later returns at once.
		tw.adv.mu.Lock()
		//lint:ignore SA2001 the lock is taken only to wait for the ring holding it
		tw.adv.mu.Unlock()
	}
	// Every call clears, which is idempotent: with the shards stopped no
	// bucket is offered any more.
	tw.queue.Clear()
	if tw.exec.pool != nil {
		tw.exec.pool.close(caller)
	}
}
