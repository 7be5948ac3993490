package timingwheel

import (
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A key's callback never starts before d has elapsed since its AfterFunc
// began, on the real clock, while AfterFunc and Reset race on the key (issue
// 28, item 5). Every call uses the same d, so a Reset that takes effect after
// the AfterFunc, in the key's lock order, must not set an earlier deadline
// than the AfterFunc did: its d counts from a moment no earlier than the
// AfterFunc's. The bound is measured from the start of the AfterFunc call,
// the earliest moment the contract could count from, so it is a lower bound
// only; how late a callback runs is not checked.
//
// The goroutines keep to a few keys for a round, then move to fresh ones, so
// the keys of every round go quiet and fire while the next round is hammered.
// The last calls a key sees are the ones that waited longest for its lock,
// which is where a clock read before the lock is oldest.
//
// TIMINGWHEEL_KEYED_EARLY_FOR sets how long the goroutines run (default 1s).
func TestKeyedNeverEarly(t *testing.T) {
	// With the clock read before the key's lock (a4da98e), 1 s runs under
	// -race on 2 cores (go test -race -run TestKeyedNeverEarly -count 10)
	// caught 3 to 58 early callbacks each, in 20 runs of 20; with
	// GOMAXPROCS 2, a 1 ms tick, 4 keys a round and one AfterFunc in two,
	// about two runs in three caught one or two. What each choice is for:
	// GOMAXPROCS above the cores, so that the OS parks threads anywhere,
	// between a call's clock reading and its lock too; a tick well below
	// d, so that rounding up to the tick does not hide an old reading;
	// mostly Resets, as they are what move an AfterFunc's f; more keys a
	// round, for more keys firing.
	const (
		d          = 20 * time.Millisecond
		tick       = 100 * time.Microsecond
		procs      = 8
		perP       = 4                // goroutines
		keys       = 8                // per round
		round      = time.Millisecond // how long one round's keys are hammered
		afterFuncs = 4                // one call in afterFuncs is an AfterFunc, the rest Resets
	)
	runFor := time.Second
	if s := os.Getenv("TIMINGWHEEL_KEYED_EARLY_FOR"); s != "" {
		var err error
		runFor, err = time.ParseDuration(s)
		require.NoError(t, err, "TIMINGWHEEL_KEYED_EARLY_FOR")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	tw, err := New(tick, 64)
	require.NoError(t, err)
	defer tw.Stop()
	k := NewKeyed[int64](tw)

	var (
		armed, replaced, ran, calls atomic.Int64
		early                       atomic.Int64
		earliest                    atomic.Int64 // the most a callback was early, in ns
	)
	arm := func(key int64) {
		start := time.Now()
		armed.Add(1)
		if k.AfterFunc(key, d, func() {
			if e := int64(d - time.Since(start)); e > 0 {
				early.Add(1)
				for old := earliest.Load(); e > old && !earliest.CompareAndSwap(old, e); old = earliest.Load() {
				}
			}
			ran.Add(1)
		}) {
			replaced.Add(1)
		}
	}
	begin := time.Now()
	var wg sync.WaitGroup
	for g := range perP * procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), uint64(begin.UnixNano())))
			n := int64(0)
			for {
				since := time.Since(begin)
				if since >= runFor {
					break
				}
				key := int64(since/round)*keys + r.Int64N(keys)
				if r.IntN(afterFuncs) == 0 {
					arm(key)
				} else {
					k.Reset(key, d)
				}
				n++
			}
			calls.Add(n)
		}()
	}
	wg.Wait()
	// Nothing stops a key, so every arming runs or is replaced.
	require.Eventually(t, func() bool { return ran.Load()+replaced.Load() == armed.Load() },
		semWait, time.Millisecond, "armings neither run nor replaced")
	require.Positive(t, ran.Load(), "no callback ran: nothing was checked")
	t.Logf("%d calls, %d AfterFuncs, %d ran", calls.Load(), armed.Load(), ran.Load())
	if n := early.Load(); n > 0 {
		t.Errorf("%d of %d callbacks started before d = %v had elapsed since their AfterFunc began, the earliest by %v",
			n, ran.Load(), d, time.Duration(earliest.Load()))
	}
}
