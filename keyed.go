package timingwheel

import (
	"hash/maphash"
	"sync"
	"time"
)

// Keyed is a set of timers on a wheel named by keys, for code that thinks in
// tasks ("close session 42 after 30 s of silence") rather than in *Timer
// values: each key has at most one pending callback, which AfterFunc sets or
// replaces, Reset moves, and Stop removes. A key is forgotten once its
// callback has been handed over to run or has been stopped: Keyed keeps no
// memory for keys that are not pending.
//
// The results are exact, as Timer.Stop's are: for every AfterFunc call,
// exactly one of "f ran", "a later AfterFunc of the key reported replaced"
// and "a Stop of the key returned true" holds, even when the timer fires
// concurrently with the call that replaces or stops it. f runs at most once,
// never on the caller's goroutine, and never before the d of the AfterFunc or
// Reset that last armed it has elapsed on the wheel's clock, counted from the
// moment that call took effect (see Deadline). So f is never early for its
// own AfterFunc either, unless a later call moved it with a shorter d.
//
// All methods are safe for concurrent use. Keys are spread over shards, each
// with its own lock, by maphash.Comparable, so calls on different keys rarely
// meet; calls on one key are serialised. A Keyed must be created with
// NewKeyed.
type Keyed[K comparable] struct {
	tw     *TimingWheel
	seed   maphash.Seed
	shards []keyedShard[K]
	mask   uint64
}

// keyedShard holds the keys whose hash selects it.
type keyedShard[K comparable] struct {
	// mu protects m, peak, and every field of the entries in m except
	// shard and key, which never change.
	//
	// Whether an arming runs is decided under mu, not by the wheel: the
	// wheel's Timer only delivers firings to keyedTimer.fire, which runs f
	// if it finds its entry still in m and no stale firing counted on it.
	// Stop takes the entry out of m, so a firing already on its way finds it
	// gone; AfterFunc and Reset of a pending key re-arm its Timer and count
	// the firing that Timer.Reset reports as already delivered as stale. So
	// the calls' reports and the runs are ordered by one lock, and agree.
	//
	// mu is held while a key's Timer is armed or re-armed, so fire never
	// sees an entry whose Timer is not yet set, and a Timer.Reset result is
	// counted before the firing it reports can look. The wheel does a
	// bounded amount of work in those calls (one caller's share of
	// advancing, see the package documentation), and that is what other
	// keys of the shard may wait for. Lock order: mu, then the wheel's
	// shard locks; the wheel runs callbacks with none of its locks held, so
	// fire's taking of mu cannot close a cycle.
	//
	// AfterFunc and Reset read the wheel's clock with mu held, never before
	// taking it: so the readings that set a key's deadlines follow the order
	// in which the calls take effect. A reading taken before a call that
	// waited for mu could be older than that of a call that got mu first,
	// and would move the other call's f earlier than its d allows (issue 28,
	// TestKeyedNeverEarly).
	mu   sync.Mutex
	m    map[K]*keyedTimer[K]
	peak int // the most entries m has held since it was last rebuilt

	// Keeps the locks of neighbouring shards off each other's cache lines.
	_ [64]byte
}

// keyedTimer is a pending key: the entry m holds for it, and the one Timer
// that carries its callbacks for as long as it stays pending. Replacing or
// moving a pending key re-arms the same Timer; a new key gets a new entry,
// never a recycled one, so an entry that has left m never returns to it.
type keyedTimer[K comparable] struct {
	shard *keyedShard[K]
	key   K
	timer *Timer

	f func() // what the pending arming runs
	// deadline is when the pending arming is due, in wheel time (since the
	// wheel's epoch), saturated as the wheel saturates it.
	deadline time.Duration
	// stale counts firings of timer whose callbacks have not yet taken mu
	// and must not run f: each is an arming that fired just before a
	// Reset or AfterFunc re-armed the Timer (Timer.Reset returned false).
	stale int
}

// NewKeyed returns an empty set of keyed timers on tw. It panics if tw is
// nil. The Keyed shares tw's lifetime: once tw is stopped, pending keys never
// fire, and stay until stopped.
func NewKeyed[K comparable](tw *TimingWheel) *Keyed[K] {
	if tw == nil {
		panic("timingwheel: NewKeyed called with nil TimingWheel")
	}
	// As many shards as the wheel has (4×GOMAXPROCS, see numShards): keys pick their shard
	// by hash, not by P, so two calls running at once share one about once
	// in 4×GOMAXPROCS. Not tuned further: the two cores we measure on show
	// the sharding at all but cannot tell shard counts apart
	// (BenchmarkKeyed; docs/design/shards.md).
	n := numShards()
	k := &Keyed[K]{
		tw:     tw,
		seed:   maphash.MakeSeed(),
		shards: make([]keyedShard[K], n),
		mask:   uint64(n - 1),
	}
	return k
}

func (k *Keyed[K]) shardOf(key K) *keyedShard[K] {
	return &k.shards[maphash.Comparable(k.seed, key)&k.mask]
}

// AfterFunc arranges for f to run, in its own goroutine (or as the wheel's
// callback option says), once d has elapsed on the wheel, unless the key is
// stopped or replaced first. If key is already pending, its callback and
// deadline are replaced, and AfterFunc reports true: the previous f then
// never runs. It reports false if the key was not pending, including when its
// previous callback has fired and is about to run or running; that run is not
// affected.
//
// A d <= 0 runs f promptly, never on the caller's goroutine. A nil f panics,
// and so does a key not equal to itself (a floating-point NaN, or a value
// holding one): a map cannot find it again, so its callback could neither
// run nor be stopped.
func (k *Keyed[K]) AfterFunc(key K, d time.Duration, f func()) (replaced bool) {
	if f == nil {
		panic("timingwheel: Keyed.AfterFunc called with nil func")
	}
	if key != key {
		panic("timingwheel: Keyed.AfterFunc called with a key not equal to itself (NaN)")
	}
	s := k.shardOf(key)
	tw := k.tw
	s.mu.Lock()
	defer s.mu.Unlock()
	// Read with mu held (see keyedShard.mu), and only once: the deadline
	// reported is exactly the one the wheel arms.
	now := tw.now()
	if e := s.m[key]; e != nil {
		e.f, e.deadline = f, addDuration(now, d)
		e.rearmLocked(d, now)
		return true
	}
	e := &keyedTimer[K]{shard: s, key: key, f: f, deadline: addDuration(now, d)}
	// Armed with mu held: the callback cannot look for e in m before e is
	// there (see keyedShard.mu). As AfterFunc(d, e.fire), on now.
	e.timer = &Timer{f: e.fire}
	tw.startDue(e.timer, tw.dueAfter(now, d), now)
	if s.m == nil {
		s.m = make(map[K]*keyedTimer[K])
	}
	s.m[key] = e
	s.peak = max(s.peak, len(s.m))
	return false
}

// Reset moves the pending callback of key to run once d has elapsed on the
// wheel, measured from now, as Timer.Reset does. It reports whether key was
// pending; if not, Reset does nothing (it never revives a key whose callback
// has fired or was stopped).
func (k *Keyed[K]) Reset(key K, d time.Duration) bool {
	s := k.shardOf(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.m[key]
	if e == nil {
		return false
	}
	now := k.tw.now() // with mu held (see keyedShard.mu)
	e.deadline = addDuration(now, d)
	e.rearmLocked(d, now)
	return true
}

// rearmLocked moves e, which is in m, to d from wheel time now, keeping it
// in m.
func (e *keyedTimer[K]) rearmLocked(d, now time.Duration) {
	// Timer.Reset returns false only when the Timer fired since it was last
	// armed (e is in m, so nobody stopped it), and Reset arms it again
	// anyway: the callback of that firing is on its way to mu, and finds e
	// still in m. It must not run f, which now belongs to the new arming.
	if !e.timer.resetAt(d, now) {
		e.stale++
	}
}

// Stop prevents the pending callback of key from running and forgets key. It
// reports true if the call prevented the callback, false if key was not
// pending: its callback has already been handed over to run (Stop does not
// wait for it to finish), or it was stopped or never set.
func (k *Keyed[K]) Stop(key K) bool {
	s := k.shardOf(key)
	s.mu.Lock()
	e := s.m[key]
	if e == nil {
		s.mu.Unlock()
		return false
	}
	s.deleteLocked(key)
	s.mu.Unlock()
	// Taking e out of m is what prevents f: a callback of e that fired
	// anyway finds e gone and returns. Stopping the Timer only releases its
	// place in the wheel, so it needs no lock of ours.
	e.timer.Stop()
	return true
}

// Deadline reports when the pending callback of key is due: the wheel's
// clock reading at the AfterFunc or Reset that armed it, plus d (saturating,
// as the wheel does, 292 years after the wheel was made). The reading is
// taken once the call holds the key, so calls on a key read the clock in the
// order they take effect: one that takes effect after another, with the same
// d or a longer one, never sets an earlier deadline. The callback does not
// start before then, and starts at most about one tick after (see the
// package documentation). ok is false if key is not pending.
func (k *Keyed[K]) Deadline(key K) (deadline time.Time, ok bool) {
	s := k.shardOf(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.m[key]; e != nil {
		return k.tw.timeOf(e.deadline), true
	}
	return time.Time{}, false
}

// Len returns the number of pending keys. Keys set or stopped while Len runs
// may or may not be counted.
func (k *Keyed[K]) Len() int {
	n := 0
	for i := range k.shards {
		s := &k.shards[i]
		s.mu.Lock()
		n += len(s.m)
		s.mu.Unlock()
	}
	return n
}

// fire is the callback of every arming of e's Timer. The wheel calls it once
// per firing; whether f runs is decided here, under mu, against what Stop,
// AfterFunc and Reset did under the same lock before it.
func (e *keyedTimer[K]) fire() {
	s := e.shard
	s.mu.Lock()
	if s.m[e.key] != e {
		// Stopped, with Stop reporting true; and if the key was set again
		// since, the entry there is new and not this firing's to remove.
		s.mu.Unlock()
		return
	}
	if e.stale > 0 {
		// Fired before a Reset or AfterFunc re-armed e: that call moved the
		// key to a new arming, which has its own firing to come.
		e.stale--
		s.mu.Unlock()
		return
	}
	f := e.f
	s.deleteLocked(e.key)
	s.mu.Unlock()
	f()
}

// shrinkMin is the smallest peak at which a shard's map is rebuilt once it
// has emptied to a quarter. A Go map keeps its table after deletes, so a burst
// of a million keys would otherwise hold its memory for good; below 64 keys
// the table is a few kilobytes and rebuilding it would only cost time.
const shrinkMin = 64

// deleteLocked forgets key. When the map has fallen to a quarter of its peak,
// it is copied into one sized for what is left: the copy of n entries follows
// at least 3n deletes, so it costs O(1) amortized per delete.
func (s *keyedShard[K]) deleteLocked(key K) {
	delete(s.m, key)
	n := len(s.m)
	if s.peak < shrinkMin || n > s.peak/4 {
		return
	}
	if n == 0 {
		s.m = nil
	} else {
		m := make(map[K]*keyedTimer[K], n)
		for key, e := range s.m {
			m[key] = e
		}
		s.m = m
	}
	s.peak = n
}
