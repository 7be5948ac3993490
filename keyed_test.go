package timingwheel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// keyedModel holds a Keyed against a reference that knows nothing of shards,
// entries or stale firings: a map from key to the one arming pending for it
// and the tick it is due at. The wheel is driven by step with inline
// callbacks, as in model_test.go, so every callback runs inside step on the
// test's goroutine and the comparison after each step is exact.
type keyedModel struct {
	t       *testing.T
	r       *rand.Rand
	tw      *TimingWheel
	k       *Keyed[int]
	clock   *FakeClock
	epoch   time.Time
	tick    int64
	span    int64 // one level's span, in ns
	elapsed int64

	pending map[int]keyedArming // key -> its pending arming
	nextID  int
	ran     map[int]bool // arming ids whose callback has run
	events  []int        // ids run during the current step
	ops     []string     // the operations so far, for failure messages
}

type keyedArming struct {
	id       int
	due      int64     // tick
	deadline time.Time // what Deadline reports: the clock at arming + d, saturated as the wheel saturates it
}

const keyedModelKeys = 12 // few enough keys that sets, moves and stops collide

func newKeyedModel(t *testing.T, seed uint64, cfg modelConfig) *keyedModel {
	clock := NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC))
	tw, err := newManual(cfg.tick, cfg.size, WithClock(clock), WithInlineCallbacks())
	require.NoError(t, err)
	t.Cleanup(tw.Stop)
	return &keyedModel{
		t: t, r: rand.New(rand.NewPCG(seed, 7)), tw: tw, k: NewKeyed[int](tw),
		clock: clock, epoch: clock.Now(), tick: int64(cfg.tick), span: int64(cfg.tick) * tw.size,
		pending: map[int]keyedArming{}, ran: map[int]bool{},
	}
}

func (m *keyedModel) fail(format string, args ...any) {
	m.t.Helper()
	start := max(0, len(m.ops)-20)
	m.t.Fatalf("%s\nlast ops:\n  %v", fmt.Sprintf(format, args...), m.ops[start:])
}

// duration draws a d > 0: within a tick, on and next to tick boundaries,
// across levels, and saturating. d <= 0 is due at a tick the model cannot
// predict with inline callbacks (see model_test.go); TestKeyedDueAtOnce
// covers it.
func (m *keyedModel) duration() time.Duration {
	switch m.r.IntN(8) {
	case 0:
		return time.Duration(1 + m.r.Int64N(m.tick))
	case 1:
		return time.Duration(m.tick * (1 + m.r.Int64N(8)))
	case 2:
		return time.Duration(m.tick*(1+m.r.Int64N(8)) + 1)
	case 3:
		return time.Duration(1 + m.r.Int64N(64*m.span))
	case 4:
		return math.MaxInt64
	default:
		return time.Duration(1 + m.r.Int64N(2*m.span))
	}
}

func (m *keyedModel) arm(d time.Duration) keyedArming {
	ns := satAdd(m.elapsed, int64(d))
	m.nextID++
	return keyedArming{id: m.nextID, due: ceilTick(ns, m.tick), deadline: m.epoch.Add(time.Duration(ns))}
}

func (m *keyedModel) callback(id int) func() {
	return func() {
		if m.ran[id] {
			m.fail("arming #%d ran twice", id)
		}
		m.ran[id] = true
		m.events = append(m.events, id)
	}
}

func (m *keyedModel) op() {
	key := m.r.IntN(keyedModelKeys)
	old, was := m.pending[key]
	switch m.r.IntN(10) {
	case 0, 1, 2:
		d := m.duration()
		a := m.arm(d)
		m.ops = append(m.ops, fmt.Sprintf("AfterFunc(%d, %d) -> #%d", key, d, a.id))
		if got := m.k.AfterFunc(key, d, m.callback(a.id)); got != was {
			m.fail("AfterFunc(%d) replaced = %v, want %v (previous #%d)", key, got, was, old.id)
		}
		m.pending[key] = a
	case 3, 4:
		d := m.duration()
		m.ops = append(m.ops, fmt.Sprintf("Reset(%d, %d)", key, d))
		if got := m.k.Reset(key, d); got != was {
			m.fail("Reset(%d) = %v, want %v", key, got, was)
		}
		if was {
			a := m.arm(d)
			a.id = old.id // the same callback, moved
			m.pending[key] = a
		}
	case 5, 6:
		m.ops = append(m.ops, fmt.Sprintf("Stop(%d)", key))
		if got := m.k.Stop(key); got != was {
			m.fail("Stop(%d) = %v, want %v", key, got, was)
		}
		delete(m.pending, key)
	case 7:
		got, ok := m.k.Deadline(key)
		if ok != was || was && !got.Equal(old.deadline) {
			m.fail("Deadline(%d) = %v, %v; want %v, %v", key, got, ok, old.deadline, was)
		}
	default:
		m.advance()
	}
	if got := m.k.Len(); got != len(m.pending) {
		m.fail("Len() = %d, want %d", got, len(m.pending))
	}
}

func (m *keyedModel) advance() {
	var dt int64
	switch m.r.IntN(4) {
	case 0:
		dt = m.r.Int64N(m.tick + 1)
	case 1:
		dt = m.r.Int64N(4 * m.span)
	default:
		// To a pending arming's due tick, or just short of it.
		for _, a := range m.pending {
			if a.due <= (1<<58)/m.tick {
				dt = max(a.due*m.tick-m.elapsed-m.r.Int64N(2), 0)
			}
			break
		}
	}
	m.ops = append(m.ops, fmt.Sprintf("Advance(%d)+step", dt))
	m.clock.Advance(time.Duration(dt))
	m.elapsed += dt
	m.events = m.events[:0]
	m.tw.step()
	var want []int
	T := m.elapsed / m.tick
	for key, a := range m.pending {
		if a.due <= T {
			want = append(want, a.id)
			delete(m.pending, key)
		}
	}
	sort.Ints(want)
	got := append([]int(nil), m.events...)
	sort.Ints(got)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		m.fail("step to tick %d ran %v, want %v", T, got, want)
	}
}

func TestKeyedModel(t *testing.T) {
	for _, cfg := range []modelConfig{
		{time.Millisecond, 2},
		{7 * time.Millisecond, 8},
		{time.Millisecond, 64},
		{3 * time.Nanosecond, 4},
	} {
		t.Run(fmt.Sprintf("tick=%v,size=%d", cfg.tick, cfg.size), func(t *testing.T) {
			for seed := range uint64(60) {
				m := newKeyedModel(t, seed, cfg)
				for range 400 {
					m.op()
				}
				for key := range keyedModelKeys {
					_, was := m.pending[key]
					require.Equal(t, was, m.k.Stop(key))
				}
				requireKeyedEmpty(t, m.k)
				require.Zero(t, m.tw.Len(), "the wheel still holds timers of stopped keys")
			}
		})
	}
}

// requireKeyedEmpty checks that k holds nothing: no pending key, and no
// entry left in any shard's map.
func requireKeyedEmpty[K comparable](t *testing.T, k *Keyed[K]) {
	t.Helper()
	require.Zero(t, k.Len())
	for i := range k.shards {
		s := &k.shards[i]
		s.mu.Lock()
		n := len(s.m)
		s.mu.Unlock()
		require.Zero(t, n, "shard %d keeps entries", i)
	}
}

// keyedArmingCount is how one arming (one AfterFunc call) ended.
type keyedArmingCount struct {
	ran       atomic.Int32
	prevented atomic.Int32 // a replacing AfterFunc or a Stop reported it
	// notBefore is the monotonic time (since stressBase) before which the
	// callback must not run: d after the AfterFunc, or after the last Reset
	// that reported moving it. ranAt is when the callback ran.
	notBefore, ranAt atomic.Int64
}

var stressBase = time.Now()

func stressNow() int64 { return int64(time.Since(stressBase)) }

// keyedArming returns a new arming due d from now, and the callback that
// records its run.
func newKeyedArming(d time.Duration) (*keyedArmingCount, func()) {
	a := new(keyedArmingCount)
	a.notBefore.Store(stressNow() + int64(d))
	return a, func() {
		a.ranAt.Store(stressNow())
		a.ran.Add(1)
	}
}

// Every arming ends exactly one way, while timers fire on their own (or as
// callers advance the wheel) concurrently with the sets, moves and stops of
// their keys. A test-side lock per key makes each report attributable to the
// arming it names, and lets the test predict it exactly when nothing can
// have fired: a key the test never set, or stopped, is not pending.
func TestKeyedStressExactPerArming(t *testing.T) {
	for _, tc := range keyedStressCases {
		t.Run(tc.name, func(t *testing.T) {
			tw, err := New(time.Millisecond, 4, tc.opts...)
			require.NoError(t, err)
			defer tw.Stop()
			k := NewKeyed[int](tw)
			const keys = 64
			var locks [keys]sync.Mutex
			var cur [keys]*keyedArmingCount // protected by locks[key]
			var all []*keyedArmingCount
			var allMu sync.Mutex
			deadline := time.Now().Add(stressFor / 4)
			var wg sync.WaitGroup
			for g := range tc.perP * runtime.GOMAXPROCS(0) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(uint64(g), uint64(time.Now().UnixNano())))
					var mine []*keyedArmingCount
					for time.Now().Before(deadline) {
						key := r.IntN(keys)
						locks[key].Lock()
						c := cur[key]
						d := stressDuration(r)
						if r.IntN(4) == 0 {
							d = 0 // fires at once, racing the next call on the key
						}
						switch r.IntN(4) {
						case 0, 1:
							a, f := newKeyedArming(d)
							mine = append(mine, a)
							replaced := k.AfterFunc(key, d, f)
							if c == nil && replaced {
								t.Errorf("AfterFunc(%d) replaced a key that was not pending", key)
							}
							if replaced {
								c.prevented.Add(1)
							}
							cur[key] = a
						case 2:
							notBefore := stressNow() + int64(d)
							ok := k.Reset(key, d)
							if c == nil && ok {
								t.Errorf("Reset(%d) moved a key that was not pending", key)
							}
							if ok {
								// Its callback cannot have run yet: the key was pending.
								c.notBefore.Store(notBefore)
							}
							if !ok {
								cur[key] = nil // it fired, and runs
							}
						default:
							ok := k.Stop(key)
							if c == nil && ok {
								t.Errorf("Stop(%d) stopped a key that was not pending", key)
							}
							if ok {
								c.prevented.Add(1)
							}
							cur[key] = nil
						}
						locks[key].Unlock()
					}
					allMu.Lock()
					all = append(all, mine...)
					allMu.Unlock()
				}()
			}
			wg.Wait()
			for key := range keys {
				if k.Stop(key) {
					cur[key].prevented.Add(1)
				}
			}
			requireKeyedEmpty(t, k)
			requireArmingsEnd(t, all)
		})
	}
}

var keyedStressCases = []struct {
	name string
	opts []Option
	perP int
}{
	{"goroutines", nil, 2},
	{"goroutines, 64 per P", nil, 64},
	{"pool", []Option{WithWorkerPool(4)}, 2},
	{"inline", []Option{WithInlineCallbacks()}, 2},
}

// requireArmingsEnd waits for the callbacks already handed over to run, then
// checks that each arming ran or was prevented, exactly once, and that none
// ran before it was due.
func requireArmingsEnd(t *testing.T, all []*keyedArmingCount) {
	t.Helper()
	ended := func() (n int) {
		for _, a := range all {
			n += int(a.ran.Load() + a.prevented.Load())
		}
		return n
	}
	require.Eventually(t, func() bool { return ended() >= len(all) }, semWait, time.Millisecond,
		"armings neither run nor prevented")
	var ran int
	for i, a := range all {
		r, p := a.ran.Load(), a.prevented.Load()
		require.Equal(t, int32(1), r+p, "arming %d: ran %d times, prevented %d times", i, r, p)
		if r == 1 && a.ranAt.Load() < a.notBefore.Load() {
			t.Fatalf("arming %d ran %v early", i, time.Duration(a.notBefore.Load()-a.ranAt.Load()))
		}
		ran += int(r)
	}
	t.Logf("%d armings, %d ran", len(all), ran)
}

// Calls on one key race each other as well as the key's timer: each
// AfterFunc's callback runs at most once, and the armings that ran plus the
// calls that reported preventing one add up to the armings made.
func TestKeyedStressSameKeyRaces(t *testing.T) {
	for _, tc := range keyedStressCases {
		t.Run(tc.name, func(t *testing.T) {
			tw, err := New(time.Millisecond, 4, tc.opts...)
			require.NoError(t, err)
			defer tw.Stop()
			k := NewKeyed[int](tw)
			const keys = 4
			var prevented atomic.Int64
			var all []*keyedArmingCount
			var allMu sync.Mutex
			deadline := time.Now().Add(stressFor / 4)
			var wg sync.WaitGroup
			for g := range tc.perP * runtime.GOMAXPROCS(0) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(uint64(g), uint64(time.Now().UnixNano())))
					var mine []*keyedArmingCount
					for time.Now().Before(deadline) {
						key := r.IntN(keys)
						d := stressDuration(r)
						if r.IntN(2) == 0 {
							d = 0 // fires at once, racing the next call on the key
						}
						switch r.IntN(4) {
						case 0, 1:
							a, f := newKeyedArming(d)
							mine = append(mine, a)
							if k.AfterFunc(key, d, f) {
								prevented.Add(1)
							}
						case 2:
							k.Reset(key, d)
						default:
							if k.Stop(key) {
								prevented.Add(1)
							}
						}
					}
					allMu.Lock()
					all = append(all, mine...)
					allMu.Unlock()
				}()
			}
			wg.Wait()
			for key := range keys {
				if k.Stop(key) {
					prevented.Add(1)
				}
			}
			requireKeyedEmpty(t, k)
			var ran int64
			require.Eventually(t, func() bool {
				ran = 0
				for _, a := range all {
					ran += int64(a.ran.Load())
				}
				return ran+prevented.Load() >= int64(len(all))
			}, semWait, time.Millisecond, "armings neither run nor prevented")
			require.Equal(t, int64(len(all)), ran+prevented.Load(), "armings = ran + prevented")
			for i, a := range all {
				require.LessOrEqual(t, a.ran.Load(), int32(1), "arming %d ran more than once", i)
			}
			t.Logf("%d armings, %d ran", len(all), ran)
		})
	}
}

// Keys are forgotten once they fire or are stopped, and a shard's map is
// rebuilt once its keys fall to a quarter of its peak, so a burst of keys
// does not hold its memory.
func TestKeyedReleasesKeys(t *testing.T) {
	clock := NewFakeClock(time.Unix(0, 0))
	tw, err := newManual(time.Millisecond, 64, WithClock(clock), WithInlineCallbacks())
	require.NoError(t, err)
	defer tw.Stop()
	k := NewKeyed[string](tw)
	const n = 20_000
	var ran atomic.Int64
	for i := range n {
		k.AfterFunc(fmt.Sprint("key", i), time.Duration(1+i%100)*time.Millisecond, func() { ran.Add(1) })
	}
	require.Equal(t, n, k.Len())
	peak := 0
	for i := range k.shards {
		peak = max(peak, k.shards[i].peak)
	}
	require.GreaterOrEqual(t, peak, n/len(k.shards))

	// Stop 80%: every shard falls below a quarter of its peak and is rebuilt.
	stopped := 0
	for i := range n {
		if i%5 != 0 && k.Stop(fmt.Sprint("key", i)) {
			stopped++
		}
	}
	require.Equal(t, n*4/5, stopped)
	require.Equal(t, n/5, k.Len())
	for i := range k.shards {
		s := &k.shards[i]
		require.LessOrEqual(t, s.peak, peak/4, "shard %d was not rebuilt", i)
		require.LessOrEqual(t, len(s.m), s.peak, "shard %d", i)
	}

	// The rest fire: nothing is left but maps rebuilt for fewer than
	// shrinkMin keys.
	clock.Advance(100 * time.Millisecond)
	tw.step()
	require.Equal(t, int64(n/5), ran.Load())
	requireKeyedEmpty(t, k)
	for i := range k.shards {
		require.Less(t, k.shards[i].peak, shrinkMin, "shard %d keeps a big map", i)
	}
	require.Zero(t, tw.Len())
}

// A key set for d <= 0 runs promptly, once, not on the caller's goroutine.
func TestKeyedDueAtOnce(t *testing.T) {
	for _, tc := range keyedStressCases {
		t.Run(tc.name, func(t *testing.T) {
			tw, err := New(time.Millisecond, 8, tc.opts...)
			require.NoError(t, err)
			defer tw.Stop()
			k := NewKeyed[int](tw)
			done := make(chan int, 10)
			caller := goroutineID()
			for i, d := range []time.Duration{0, -1, math.MinInt64} {
				require.False(t, k.AfterFunc(i, d, func() {
					if goroutineID() == caller {
						t.Error("ran on the caller's goroutine")
					}
					done <- i
				}))
			}
			got := map[int]bool{}
			for range 3 {
				select {
				case i := <-done:
					got[i] = true
				case <-time.After(semWait):
					t.Fatal("a key due at once did not run")
				}
			}
			require.Len(t, got, 3)
			select {
			case i := <-done:
				t.Fatalf("key %d ran twice", i)
			case <-time.After(5 * time.Millisecond):
			}
			requireKeyedEmpty(t, k)
		})
	}
}

// A callback may set its own key again; the new arming is a new key's.
func TestKeyedCallbackRearmsItsKey(t *testing.T) {
	clock := NewFakeClock(time.Unix(0, 0))
	tw, err := newManual(time.Millisecond, 8, WithClock(clock), WithInlineCallbacks())
	require.NoError(t, err)
	defer tw.Stop()
	k := NewKeyed[string](tw)
	runs := 0
	var f func()
	f = func() {
		runs++
		if runs < 3 {
			require.False(t, k.AfterFunc("poll", 10*time.Millisecond, f), "the running key is no longer pending")
		}
	}
	k.AfterFunc("poll", 10*time.Millisecond, f)
	for range 5 {
		clock.Advance(10 * time.Millisecond)
		tw.step()
	}
	require.Equal(t, 3, runs)
	requireKeyedEmpty(t, k)
}

func TestKeyedDeadline(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := NewFakeClock(start)
	tw, err := newManual(time.Millisecond, 8, WithClock(clock), WithInlineCallbacks())
	require.NoError(t, err)
	defer tw.Stop()
	k := NewKeyed[string](tw)
	_, ok := k.Deadline("a")
	require.False(t, ok)
	k.AfterFunc("a", time.Second, func() {})
	clock.Advance(300 * time.Millisecond)
	got, ok := k.Deadline("a")
	require.True(t, ok)
	require.Equal(t, start.Add(time.Second), got)
	require.True(t, k.Reset("a", time.Second))
	got, _ = k.Deadline("a")
	require.Equal(t, start.Add(1300*time.Millisecond), got, "Reset measures from now")
	require.True(t, k.Stop("a"))
	_, ok = k.Deadline("a")
	require.False(t, ok)
	require.False(t, k.Reset("a", time.Second), "Reset does not revive a stopped key")
	require.Zero(t, k.Len())
}

// On a stopped wheel keys never fire, and stay pending until stopped, as the
// wheel's own timers do.
func TestKeyedOnStoppedWheel(t *testing.T) {
	tw, err := New(time.Millisecond, 8)
	require.NoError(t, err)
	k := NewKeyed[int](tw)
	k.AfterFunc(1, time.Hour, func() { t.Error("ran on a stopped wheel") })
	tw.Stop()
	require.False(t, k.AfterFunc(2, 0, func() { t.Error("ran on a stopped wheel") }))
	require.True(t, k.Reset(1, 0))
	require.Equal(t, 2, k.Len())
	require.True(t, k.Stop(1))
	require.True(t, k.Stop(2))
	requireKeyedEmpty(t, k)
}

func TestKeyedPanics(t *testing.T) {
	require.PanicsWithValue(t, "timingwheel: NewKeyed called with nil TimingWheel", func() { NewKeyed[int](nil) })
	tw, err := newManual(time.Millisecond, 8)
	require.NoError(t, err)
	defer tw.Stop()
	k := NewKeyed[int](tw)
	require.PanicsWithValue(t, "timingwheel: Keyed.AfterFunc called with nil func", func() { k.AfterFunc(1, time.Second, nil) })
	require.Zero(t, k.Len())
	f := NewKeyed[float64](tw)
	require.PanicsWithValue(t, "timingwheel: Keyed.AfterFunc called with a key not equal to itself (NaN)",
		func() { f.AfterFunc(math.NaN(), time.Second, func() {}) })
	type pair struct{ a, b float64 }
	p := NewKeyed[pair](tw)
	require.PanicsWithValue(t, "timingwheel: Keyed.AfterFunc called with a key not equal to itself (NaN)",
		func() { p.AfterFunc(pair{1, math.NaN()}, time.Second, func() {}) })
	require.False(t, f.Stop(math.NaN()))
	require.False(t, f.Reset(math.NaN(), time.Second))
	require.Zero(t, f.Len()+p.Len())
}
