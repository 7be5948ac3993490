package timingwheel

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"
)

// The benchmarks below run the same workload on this wheel ("wheel") and on
// the runtime's timers ("runtime") in one run, so that their ratio is
// meaningful on a noisy machine: benchstat -col /impl compares them.
// Pending timers are spread over an hour, as the deadlines of a busy server.

var pendingCounts = []int{0, 1_000, 100_000, 1_000_000}

func noop() {}

// spread returns a duration in [1 min, 1 h).
func spread(r *rand.Rand) time.Duration {
	return time.Minute + time.Duration(r.Int64N(int64(59*time.Minute)))
}

type impl struct {
	name  string
	setup func(b *testing.B) subject
}

// A subject is a timer implementation under test.
type subject struct {
	afterFunc func(time.Duration, func()) stopper
	done      func()
	// collisions reports the wheel's Stats.Collisions; nil for the runtime.
	collisions func() uint64
}

type stopper interface {
	Stop() bool
	Reset(time.Duration) bool
}

var impls = []impl{
	{"wheel", func(b *testing.B) subject {
		tw, err := New(DefaultTick, DefaultWheelSize)
		if err != nil {
			b.Fatal(err)
		}
		return subject{
			afterFunc:  func(d time.Duration, f func()) stopper { return tw.AfterFunc(d, f) },
			done:       tw.Stop,
			collisions: func() uint64 { return tw.Stats().Collisions },
		}
	}},
	{"runtime", func(b *testing.B) subject {
		return subject{
			afterFunc: func(d time.Duration, f func()) stopper { return time.AfterFunc(d, f) },
			done:      func() {},
		}
	}},
}

// fill arms n far-future timers and returns a function that stops them all.
func fill(b *testing.B, afterFunc func(time.Duration, func()) stopper, n int) func() {
	return fillInto(b, afterFunc, make([]stopper, n))
}

// fillInto arms len(ts) timers into ts, which the caller allocated so that
// its own size is not counted as the timers'.
func fillInto(b *testing.B, afterFunc func(time.Duration, func()) stopper, ts []stopper) func() {
	r := rand.New(rand.NewPCG(1, uint64(len(ts))))
	for i := range ts {
		ts[i] = afterFunc(spread(r), noop)
	}
	return func() {
		for _, t := range ts {
			if !t.Stop() {
				b.Fatal("Stop of a pending background timer returned false")
			}
		}
	}
}

// forEachPending runs body as a sub-benchmark for every pending count and
// implementation, with n far-future timers armed (and stopped afterwards,
// each Stop checked) and 1024 durations spread like theirs.
func forEachPending(b *testing.B, body func(b *testing.B, sub subject, ds []time.Duration)) {
	for _, n := range pendingCounts {
		for _, im := range impls {
			b.Run(fmt.Sprintf("pending=%d/impl=%s", n, im.name), func(b *testing.B) {
				sub := im.setup(b)
				defer sub.done()
				stopAll := fill(b, sub.afterFunc, n)
				defer stopAll()
				runtime.GC() // do not bill the measured ops for the garbage fill made
				r := rand.New(rand.NewPCG(2, 3))
				ds := make([]time.Duration, 1024)
				for i := range ds {
					ds[i] = spread(r)
				}
				// Touch every bucket the operations will use, in every
				// shard (a P's shard can change), so that a bucket's
				// one-time growth past the fill's capacity is not billed to
				// the few operations measured.
				for range 8 * numShards() {
					for _, d := range ds {
						sub.afterFunc(d, noop).Stop()
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				body(b, sub, ds)
				b.StopTimer() // stopping the population is not the operation measured
			})
		}
	}
}

// BenchmarkAfterFuncStop measures arming a timer and cancelling it, the life
// of most timeouts in a network server, with n other timers pending.
func BenchmarkAfterFuncStop(b *testing.B) {
	forEachPending(b, func(b *testing.B, sub subject, ds []time.Duration) {
		for i := 0; i < b.N; i++ {
			t := sub.afterFunc(ds[i&1023], noop)
			if !t.Stop() {
				b.Fatal("Stop returned false: the benchmark did not measure a cancel")
			}
		}
	})
}

// BenchmarkParallelAfterFuncStop measures AfterFunc+Stop from every P at
// once (RunParallel), with one goroutine per P ("goroutines=1") and with 64
// per P ("goroutines=64"), as a server's connection goroutines arm and cancel
// their timeouts. Its ns/op is wall time per operation over all of them, so
// the serial BenchmarkAfterFuncStop's ns/op divided by this one's is the
// speed-up from running on every P. Run it with -cpu 1,2,4,8,16 to see how
// it scales (past the machine's cores, Ps are oversubscribed).
//
// It reports how often callers meet: "collisions/op", arms that found their
// P's shard held (Stats.Collisions; the wheel only), and "wait-ns/op", the
// time goroutines spent blocked on any lock, the runtime's own included
// (runtime/metrics' /sync/mutex/wait/total:seconds), per operation. Use a
// time-based -benchtime: with -benchtime=Nx RunParallel hands out one
// iteration at a time, and its shared counter dominates.
func BenchmarkParallelAfterFuncStop(b *testing.B) {
	for _, perP := range []int{1, 64} {
		b.Run(fmt.Sprintf("goroutines=%d", perP), func(b *testing.B) {
			forEachPending(b, func(b *testing.B, sub subject, ds []time.Duration) {
				var failed atomic.Bool
				var collisions uint64
				if sub.collisions != nil {
					collisions = sub.collisions()
				}
				wait := lockWait()
				b.SetParallelism(perP)
				b.RunParallel(func(pb *testing.PB) {
					i := rand.IntN(1024)
					for pb.Next() {
						if t := sub.afterFunc(ds[i&1023], noop); !t.Stop() {
							failed.Store(true)
						}
						i++
					}
				})
				b.StopTimer()
				if failed.Load() {
					b.Fatal("Stop returned false: the benchmark did not measure a cancel")
				}
				b.ReportMetric(float64(lockWait()-wait)/float64(b.N), "wait-ns/op")
				if sub.collisions != nil {
					b.ReportMetric(float64(sub.collisions()-collisions)/float64(b.N), "collisions/op")
				}
			})
		})
	}
}

// lockWait returns the time goroutines have spent blocked on locks so far,
// in nanoseconds.
func lockWait() int64 {
	s := []metrics.Sample{{Name: "/sync/mutex/wait/total:seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64 {
		panic("runtime/metrics: /sync/mutex/wait/total:seconds is not supported")
	}
	return int64(s[0].Value.Float64() * 1e9)
}

// BenchmarkReset measures moving a pending timer's deadline to a random one
// in the population's range, with n other timers pending: the same timer
// every time ("pending=n"), or a timer picked at random among the n
// ("timer=random/pending=n", see benchmarkResetRandom).
func BenchmarkReset(b *testing.B) {
	b.Run("timer=random", func(b *testing.B) { benchmarkResetRandom(b, false) })
	b.Run("timer=random-later", func(b *testing.B) { benchmarkResetRandom(b, true) })
	forEachPending(b, func(b *testing.B, sub subject, ds []time.Duration) {
		b.StopTimer()
		t := sub.afterFunc(time.Hour, noop)
		b.StartTimer()
		for i := 0; i < b.N; i++ {
			if !t.Reset(ds[i&1023]) {
				b.Fatal("Reset of a pending timer returned false")
			}
		}
		b.StopTimer()
		if !t.Stop() {
			b.Fatal("the reset timer was not pending at the end")
		}
	})
}

// randomResetCounts are the populations of BenchmarkReset's timer=random;
// 10M (2-3 GB of heap for each implementation, a minute a run) only with
// TIMINGWHEEL_BENCH_10M=1.
func randomResetCounts() []int {
	ns := []int{1_000, 1_000_000}
	if os.Getenv("TIMINGWHEEL_BENCH_10M") == "1" {
		ns = append(ns, 10_000_000)
	}
	return ns
}

// benchmarkResetRandom resets a timer picked at random among n pending to a
// random duration in the population's range, so that timers move between
// buckets of every size, as a server's idle timeouts do when every
// connection is read from now and then. Besides ns/op and B/op it reports
// what the garbage collector costs: "gc-ns/op", its CPU during the
// operations (the cycles their allocations start), from runtime/metrics'
// /cpu/classes/gc/total:cpu-seconds, and "gc-cpu-ms/cycle", the process's
// CPU time (getrusage, so that time the process waits for a core on a
// loaded machine is not counted) over a full cycle (runtime.GC, while
// nothing else runs) with the n timers pending, which grows with what the
// collector must mark: the mean of three.
//
// With later, every Reset moves its timer later than it was due (past the
// population's range, by a microsecond more each call), which neither
// implementation moves in its structure (the wheel leaves the timer in its
// bucket, the runtime marks it modified in its heap): what is left is what
// every Reset at scale pays, the Timer's cache miss, the clock and the
// locks; the random Resets' excess over it is the moves.
func benchmarkResetRandom(b *testing.B, later bool) {
	for _, n := range randomResetCounts() {
		for _, im := range impls {
			b.Run(fmt.Sprintf("pending=%d/impl=%s", n, im.name), func(b *testing.B) {
				sub := im.setup(b)
				defer sub.done()
				ts := make([]stopper, n)
				stopAll := fillInto(b, sub.afterFunc, ts)
				defer stopAll() // checks that every timer is still pending
				r := rand.New(rand.NewPCG(2, 3))
				ds := make([]time.Duration, 1024)
				for i := range ds {
					ds[i] = spread(r)
				}
				// pick is a linear congruential generator: a few
				// nanoseconds, the same for both implementations.
				x := uint64(n)
				pick := func() stopper {
					x = x*6364136223846793005 + 1442695040888963407
					return ts[(x>>32)*uint64(n)>>32]
				}
				reset := func(i int) {
					d := ds[i&1023]
					if later {
						d = 2*time.Hour + time.Duration(i)*time.Microsecond
					}
					if !pick().Reset(d) {
						b.Fatal("Reset of a pending timer returned false")
					}
				}
				// Let the buckets reach the sizes random Resets keep
				// them at, so that their growth from the fill's is not
				// billed to the operations measured.
				warm := 1 << 20
				for i := range warm {
					reset(i)
				}
				runtime.GC()
				gc := gcCPU()
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					reset(warm + i)
				}
				b.StopTimer()
				b.ReportMetric(float64(gcCPU()-gc)/float64(b.N), "gc-ns/op")
				if cpu := processCPU(); cpu >= 0 {
					const cycles = 3
					for range cycles {
						runtime.GC()
					}
					b.ReportMetric(float64(processCPU()-cpu)/cycles/1e6, "gc-cpu-ms/cycle")
				}
				runtime.KeepAlive(ts)
			})
		}
	}
}

// gcCPU returns the CPU time the garbage collector has spent so far, in
// nanoseconds, as the runtime estimates it (updated at the end of a cycle).
func gcCPU() int64 {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64 {
		panic("runtime/metrics: /cpu/classes/gc/total:cpu-seconds is not supported")
	}
	return int64(s[0].Value.Float64() * 1e9)
}

// BenchmarkHeapPerTimer reports the live heap each pending timer costs
// (B/timer, after a full GC), and what stays live once all are stopped.
func BenchmarkHeapPerTimer(b *testing.B) {
	const n = 1_000_000
	for _, im := range impls {
		b.Run("impl="+im.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				sub := im.setup(b)
				ts := make([]stopper, n)
				before := liveHeap()
				stopAll := fillInto(b, sub.afterFunc, ts)
				pending := liveHeap()
				stopAll()
				clear(ts) // what stays live now is the implementation's own
				after := liveHeap()
				sub.done()
				runtime.KeepAlive(ts)
				b.ReportMetric(float64(pending-before)/n, "B/timer")
				b.ReportMetric(float64(after-before)/n, "B/stopped")
			}
		})
	}
}

func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// BenchmarkShardLockHold measures how long one AfterFunc+Stop holds its
// shard's lock: its arming and its stopping sections, back to back, without
// what the operation does outside the lock (the clock read, the allocation,
// picking the shard), at 1M timers pending in the shard. Beside the
// operation's full time (BenchmarkAfterFuncStop) it says what share of its
// time a goroutine blocks others from its shard.
func BenchmarkShardLockHold(b *testing.B) {
	tw, err := New(DefaultTick, DefaultWheelSize)
	if err != nil {
		b.Fatal(err)
	}
	defer tw.Stop()
	oneShard(tw)
	stopAll := fill(b, func(d time.Duration, f func()) stopper { return tw.AfterFunc(d, f) }, 1_000_000)
	defer stopAll()
	s := &tw.shards[0]
	r := rand.New(rand.NewPCG(2, 3))
	now := tw.queue.Now()
	timers := make([]Timer, 1024)
	due := make([]int64, 1024)
	for i := range timers {
		timers[i] = Timer{owner: &s.owner, f: noop}
		due[i] = tw.dueAfter(now, spread(r))
	}
	runtime.GC()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := &timers[i&1023]
		s.mu.Lock()
		s.startLocked(t, due[i&1023], now)
		s.mu.Unlock()
		s.mu.Lock()
		stopped := s.stopLocked(t)
		s.mu.Unlock()
		if !stopped {
			b.Fatal("the timer armed was not pending: the benchmark did not measure a cancel")
		}
	}
	b.StopTimer()
	if n := tw.Stats().Pending; n != 1_000_000 {
		b.Fatalf("%d timers pending after the run, want the 1M filled", n)
	}
}

// BenchmarkScalingFloor measures what bounds the speed-up of AfterFunc+Stop
// from every P on this machine, with none of the wheel's code in it: each
// operation allocates a Timer and reads the wheel's clock, as every AfterFunc
// does, with 1M timers pending (the same live heap for the collector to
// mark), on one goroutine ("mode=serial") and from every P
// ("mode=parallel"). The operations share nothing, so the serial ns/op
// divided by the parallel one is the most that running on every P can gain
// here: BenchmarkAfterFuncStop's ns/op divided by
// BenchmarkParallelAfterFuncStop's, the wheel's speed-up, is to be read
// against it.
func BenchmarkScalingFloor(b *testing.B) {
	tw, err := New(DefaultTick, DefaultWheelSize)
	if err != nil {
		b.Fatal(err)
	}
	defer tw.Stop()
	stopAll := fill(b, func(d time.Duration, f func()) stopper { return tw.AfterFunc(d, f) }, 1_000_000)
	defer stopAll()
	op := func() int64 {
		t := newFloorTimer(tw)
		return t.due
	}
	for _, mode := range []string{"serial", "parallel"} {
		b.Run("mode="+mode, func(b *testing.B) {
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var sum atomic.Int64
			b.ResetTimer()
			if mode == "serial" {
				var s int64
				for i := 0; i < b.N; i++ {
					s += op()
				}
				sum.Add(s)
			} else {
				b.RunParallel(func(pb *testing.PB) {
					var s int64
					for pb.Next() {
						s += op()
					}
					sum.Add(s)
				})
			}
			b.StopTimer()
			runtime.ReadMemStats(&after)
			if n := after.Mallocs - before.Mallocs; n < uint64(b.N) {
				b.Fatalf("%d allocations for %d operations: the benchmark did not measure an allocation per operation", n, b.N)
			}
			if sum.Load() <= 0 {
				b.Fatal("no clock reading was past the wheel's epoch: the benchmark did not measure a clock read")
			}
		})
	}
}

// newFloorTimer allocates a Timer on the heap (it is returned from a call
// that is not inlined) and stamps it with the wheel's clock.
//
//go:noinline
func newFloorTimer(tw *TimingWheel) *Timer {
	return &Timer{due: int64(tw.queue.Now())}
}
