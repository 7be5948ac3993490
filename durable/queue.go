package durable

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Queue is a handle on the delayed tasks of one Store. It is safe for
// concurrent use; any number of Queues in any number of processes may share
// a store's tasks (a Redis namespace, a database), and any number of them
// may Run workers on it.
type Queue struct {
	store  Store
	opts   Options
	limits Limits // what the store's operations apply, from opts
	parts  int    // store.Partitions()

	adds adder // coalesces concurrent Adds: see add.go

	// mu guards sleepers, the wake-ups of this Queue's Runs.
	mu       sync.Mutex
	sleepers map[*sleeper]struct{}

	// maxSleep caps an idle poller's sleep: Options.PollInterval.
	maxSleep time.Duration
}

// New returns a Queue on store. It checks opts and makes no call to the
// store. The errors it returns wrap ErrOptions.
func New(store Store, opts Options) (*Queue, error) {
	if store == nil {
		return nil, fmt.Errorf("%w: nil store", ErrOptions)
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	parts := store.Partitions()
	if parts < 1 {
		return nil, fmt.Errorf("%w: store has %d partitions", ErrOptions, parts)
	}
	q := &Queue{store: store, opts: opts, parts: parts, sleepers: map[*sleeper]struct{}{}, maxSleep: opts.PollInterval}
	q.limits = Limits{
		MaxAttempts: opts.MaxAttempts, MaxDead: opts.MaxDead, MaxRetained: opts.MaxRetained,
		HistoryLen: opts.HistoryLen, Retention: opts.Retention, WorkerID: opts.WorkerID,
		ReapBatch: reapBatch, MaxUnconfirmed: maxUnconfirmed,
	}
	return q, nil
}

// Store returns the store q was made with.
func (q *Queue) Store() Store { return q.store }

// Options returns q's options, with their defaults filled in.
func (q *Queue) Options() Options { return q.opts }

// A sleeper is one Run's poller as seen by the calls that may have made a task
// due sooner than it knows: this Queue's Adds and its Run's settles.
type sleeper struct {
	// until is the store's time (ms) the poller means to sleep until, or
	// sweeping while it claims.
	until atomic.Int64
	// hint is the earliest due time (store ms) that this Queue's calls
	// (wake) have reported, in a partition they do not know, since the
	// poller last took it, math.MaxInt64 if none; parts[p] the same for
	// partition p (wakePartitions, settles: hint). The poller takes them at
	// each sweep's start, and reads them again after storing until; a call
	// stores them before reading until. So a task made due while the poller
	// sweeps is either seen by the poller or, once it sleeps, wakes it.
	hint  atomic.Int64
	parts []atomic.Int64
	wake  chan struct{} // buffered 1
}

// lower lowers a to due, if due is earlier.
func lower(a *atomic.Int64, due int64) {
	for h := a.Load(); due < h; h = a.Load() {
		if a.CompareAndSwap(h, due) {
			return
		}
	}
}

// earliestHint is the earliest of s's hints, math.MaxInt64 if none.
func (s *sleeper) earliestHint() int64 {
	h := s.hint.Load()
	for i := range s.parts {
		h = min(h, s.parts[i].Load())
	}
	return h
}

// sweeping is sleeper.until while the poller claims: it may have passed any
// shard already, so any Add must wake it.
const sweeping = math.MaxInt64

// wake pokes every Run of this Queue that would otherwise sleep past due
// (store ms): a task added by this process is never left waiting for the
// poll interval. Tasks added by other processes are seen within
// Options.PollInterval, or at once when the store is a Notifier (see
// Run's listen), which calls wake with their due times.
func (q *Queue) wake(due int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for s := range q.sleepers {
		lower(&s.hint, due) // a poller claims only partitions with something due (poll)
		if due < s.until.Load() {
			s.poke()
		}
	}
}

// wakePartitions is wake for tasks whose partitions are known: due[p] is
// the earliest in partition p, so a poller claims p then, not every
// partition.
func (q *Queue) wakePartitions(due map[int]int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for s := range q.sleepers {
		poke := false
		for p, d := range due {
			lower(&s.parts[p], d)
			poke = poke || d < s.until.Load()
		}
		if poke {
			s.poke()
		}
	}
}

// hint tells every Run of this Queue that partition, which it settled, has a task due
// at due (store ms), say a retry it has just scheduled. Unlike wake, it does
// not cut a sweep short: the sweep takes the hint into account when it ends.
func (q *Queue) hint(partition int, due int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for s := range q.sleepers {
		lower(&s.parts[partition], due)
		if u := s.until.Load(); u != sweeping && due < u {
			s.poke()
		}
	}
}

func (s *sleeper) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (q *Queue) addSleeper() *sleeper {
	s := &sleeper{wake: make(chan struct{}, 1), parts: make([]atomic.Int64, q.parts)}
	s.until.Store(sweeping)
	s.hint.Store(math.MaxInt64)
	for i := range s.parts {
		s.parts[i].Store(math.MaxInt64)
	}
	q.mu.Lock()
	q.sleepers[s] = struct{}{}
	q.mu.Unlock()
	return s
}

func (q *Queue) removeSleeper(s *sleeper) {
	q.mu.Lock()
	delete(q.sleepers, s)
	q.mu.Unlock()
}

// unixMilliCeil is t in Unix milliseconds rounded up, so that a task is never
// due before t. Times up to 1970 become 1 ms (due at once; not 0, which
// some stores read back as no time); times past year 285,000 become 2^53 ms, the last millisecond a Redis score (a double)
// holds exactly, the limit of every store.
// Both ends are tested before t.UnixMilli, which wraps around for times
// beyond about 292 million years either side of 1970: a time that far back
// would otherwise come out as "never".
func unixMilliCeil(t time.Time) int64 {
	const maxExact = 1 << 53
	if t.After(time.UnixMilli(maxExact)) {
		return maxExact
	}
	if !t.After(time.UnixMilli(1)) {
		return 1
	}
	ms := t.UnixMilli()
	if t.After(time.UnixMilli(ms)) {
		ms++
	}
	return ms
}

func durationMilliCeil(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	ms := int64(d / time.Millisecond)
	if d%time.Millisecond != 0 {
		ms++
	}
	return ms
}

// Limits returns the settings q passes to its store's operations.
func (q *Queue) Limits() Limits { return q.limits }

// Idle reports whether q has a Run and every Run of q is asleep until its
// next due time or poll, not claiming: a test of a store uses it to tell a
// wake-up from a poll.
func (q *Queue) Idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for s := range q.sleepers {
		if s.until.Load() == sweeping {
			return false
		}
	}
	return len(q.sleepers) > 0
}
