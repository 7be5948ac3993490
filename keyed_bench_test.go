package timingwheel

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The keyed benchmarks run Keyed ("keyed") and the map of Timers behind one
// mutex that code without it writes ("mutexmap") on the same workload in one
// run, 64 goroutines per P, so that benchstat -col /impl compares them:
//
//	go test -run '^$' -bench 'BenchmarkKeyed' -count 6 . | tee keyed.txt
//	benchstat -col /impl keyed.txt
//
// Both keep keyedPending keys pending, spread over an hour, as a server's
// sessions are; the operations never find a key due, so each benchmark
// measures the call it names and checks, at the end, that every call had the
// result it must have had and that nothing fired.

const keyedPending = 100_000

// keyedSubject is what the benchmarks call: a Keyed[int64] or a mutexMap.
// The keys are int64, not int, so that each goroutine's fresh keys (g<<32
// onwards) are distinct on 32-bit platforms too.
type keyedSubject interface {
	AfterFunc(key int64, d time.Duration, f func()) bool
	Reset(key int64, d time.Duration) bool
	Stop(key int64) bool
	Len() int
}

var keyedImpls = []struct {
	name string
	make func(tw *TimingWheel) keyedSubject
}{
	{"keyed", func(tw *TimingWheel) keyedSubject { return NewKeyed[int64](tw) }},
	{"mutexmap", func(tw *TimingWheel) keyedSubject { return &mutexMap{tw: tw, m: map[int64]*Timer{}} }},
}

// mutexMap is the baseline: one lock over a map of Timers, with the same
// results as Keyed's for the calls the benchmarks make. (Its Reset would
// revive a key whose callback has fired; the benchmarks never let one fire.)
type mutexMap struct {
	tw *TimingWheel
	mu sync.Mutex
	m  map[int64]*Timer
}

func (mm *mutexMap) AfterFunc(key int64, d time.Duration, f func()) bool {
	mm.mu.Lock()
	defer mm.mu.Unlock()
	old := mm.m[key]
	replaced := old != nil && old.Stop()
	var t *Timer
	t = mm.tw.AfterFunc(d, func() {
		mm.mu.Lock()
		if mm.m[key] == t {
			delete(mm.m, key)
		}
		mm.mu.Unlock()
		f()
	})
	mm.m[key] = t
	return replaced
}

func (mm *mutexMap) Reset(key int64, d time.Duration) bool {
	mm.mu.Lock()
	defer mm.mu.Unlock()
	t := mm.m[key]
	return t != nil && t.Reset(d)
}

func (mm *mutexMap) Stop(key int64) bool {
	mm.mu.Lock()
	t := mm.m[key]
	delete(mm.m, key)
	mm.mu.Unlock()
	return t != nil && t.Stop()
}

func (mm *mutexMap) Len() int {
	mm.mu.Lock()
	defer mm.mu.Unlock()
	return len(mm.m)
}

// BenchmarkKeyed measures, per operation:
//
//   - SetStop: set a new key and stop it (a request timeout that is
//     cancelled), two calls;
//   - Reset: move a pending key (an idle timeout refreshed on each read);
//   - Replace: set a pending key again with a new callback (go-zero's
//     SetTimer on a known key).
func BenchmarkKeyed(b *testing.B) {
	for _, op := range []string{"SetStop", "Reset", "Replace"} {
		for _, impl := range keyedImpls {
			b.Run("op="+op+"/impl="+impl.name, func(b *testing.B) {
				benchmarkKeyed(b, op, impl.make)
			})
		}
	}
}

func benchmarkKeyed(b *testing.B, op string, makeSubject func(*TimingWheel) keyedSubject) {
	tw, err := New(DefaultTick, DefaultWheelSize)
	if err != nil {
		b.Fatal(err)
	}
	defer tw.Stop()
	k := makeSubject(tw)
	var fired atomic.Int64
	f := func() { fired.Add(1) }
	// Set the pending keys from a goroutine per P, so that their timers are
	// spread over the wheel's shards as a server's would be, rather than all
	// in the shard of the P that ran the setup.
	var setup sync.WaitGroup
	procs := runtime.GOMAXPROCS(0)
	for p := range procs {
		setup.Add(1)
		go func() {
			defer setup.Done()
			r := rand.New(rand.NewPCG(1, uint64(p)))
			for key := int64(p); key < keyedPending; key += int64(procs) {
				k.AfterFunc(key, spread(r), f)
			}
		}()
	}
	setup.Wait()
	var goroutines atomic.Int64
	var wrong atomic.Int64 // calls whose result was not the one the workload implies
	b.SetParallelism(64)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		g := goroutines.Add(1)
		r := rand.New(rand.NewPCG(uint64(g), 3))
		fresh := g << 32 // keys no other goroutine and no pending key uses
		for pb.Next() {
			switch op {
			case "SetStop":
				fresh++
				if k.AfterFunc(fresh, spread(r), f) || !k.Stop(fresh) {
					wrong.Add(1)
				}
			case "Reset":
				if !k.Reset(r.Int64N(keyedPending), spread(r)) {
					wrong.Add(1)
				}
			case "Replace":
				if !k.AfterFunc(r.Int64N(keyedPending), spread(r), f) {
					wrong.Add(1)
				}
			}
		}
	})
	b.StopTimer()
	if n := wrong.Load(); n > 0 {
		b.Fatalf("%d of %d %s operations had the wrong result", n, b.N, op)
	}
	if n := fired.Load(); n > 0 {
		b.Fatalf("%d callbacks fired: the benchmark measured expirations too", n)
	}
	if n := k.Len(); n != keyedPending {
		b.Fatalf("%d keys pending after the run, want %d", n, keyedPending)
	}
	if n := tw.Len(); n != keyedPending {
		b.Fatalf("%d timers in the wheel after the run, want %d: stopped or replaced timers were left in it", n, keyedPending)
	}
}
