package bench

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/bench/internal/lib"
)

// Environment knobs, so that run.sh can choose between a quick and a full
// run without editing code:
//
//	BENCH_NS       pending-timer counts for AfterFuncStop and Reset (default 0,1k,100k,1M,5M)
//	BENCH_PAR_NS   pending-timer counts for ParallelAfterFuncStop (default 0,1M)
//	BENCH_HEAP_N   timers for Heap (default 1M)
//	BENCH_LIBS     libraries (default wheel,runtime,gozero)
//	BENCH_BUILD_LIMIT  longest time to arm a population before skipping (default 90s)
var (
	pendingCounts    = envInts("BENCH_NS", "0,1000,100000,1000000,5000000")
	parPendingCounts = envInts("BENCH_PAR_NS", "0,1000000")
	heapN            = envInts("BENCH_HEAP_N", "1000000")[0]
	libNames         = envList("BENCH_LIBS", strings.Join(lib.Names, ","))
	buildLimit       = func() time.Duration {
		d, err := time.ParseDuration(envList("BENCH_BUILD_LIMIT", "90s")[0])
		if err != nil {
			panic("bench: BENCH_BUILD_LIMIT: " + err.Error())
		}
		return d
	}()
)

// Every timer a benchmark arms is due between one minute and an hour and a
// minute from now ("spread over an hour"), so nothing fires while it runs;
// each benchmark checks that nothing did.
const (
	spreadMin = time.Minute
	spreadLen = time.Hour
)

// durations is a fixed pseudo-random table of deadlines in the spread, so
// that every library sees the same sequence.
var durations = func() []time.Duration {
	r := rand.New(rand.NewPCG(1, 2))
	d := make([]time.Duration, 1<<12)
	for i := range d {
		d[i] = spreadMin + time.Duration(r.Int64N(int64(spreadLen)))
	}
	return d
}()

const durMask = 1<<12 - 1

// population is a library holding n pending timers. Building 5M timers takes
// seconds, and the benchmark function is called several times per result
// while testing.B sizes b.N, so the last population is kept and reused for
// as long as consecutive benchmarks ask for the same library and n.
type population struct {
	key     string
	lib     lib.Lib
	pending []lib.Handle
	fired   atomic.Int64 // callbacks run by pending timers and by timers under test
	onFire  func()
}

var current *population

// skipped holds, per population too slow to build, why it was skipped.
var skipped = map[string]string{}

func getPopulation(b *testing.B, name string, n int) *population {
	b.Helper()
	key := fmt.Sprintf("%s/%d", name, n)
	if current != nil && current.key == key {
		return current
	}
	if note, ok := skipped[key]; ok {
		b.Skip(note)
	}
	dropPopulation(b)
	l, err := lib.New(lib.Config{Name: name, Tick: time.Millisecond, Size: 512})
	if err != nil {
		b.Fatal(err)
	}
	p := &population{key: key, lib: l, pending: make([]lib.Handle, n)}
	p.onFire = func() { p.fired.Add(1) }
	r := rand.New(rand.NewPCG(3, 4))
	start := time.Now()
	for i := range p.pending {
		p.pending[i] = l.AfterFunc(spreadMin+time.Duration(r.Int64N(int64(spreadLen))), p.onFire)
		if i%10_000 == 9_999 && time.Since(start) > buildLimit {
			// go-zero at 5M: each 1 ms tick scans a slot of ~10k timers,
			// which takes about a tick, so every SetTimer waits for one
			// and arming 5M would take over an hour.
			l.Close()
			note := fmt.Sprintf("# %s: skipped: arming %d pending timers got to %d in %v, slowing as they grow",
				b.Name(), n, i+1, time.Since(start).Round(time.Second))
			fmt.Println(note)
			skipped[key] = note
			b.Skip(note)
		}
	}
	l.Sync()
	current = p
	runtime.GC()
	return p
}

// dropPopulation stops every pending timer of the kept population, checking
// that each was still pending, and releases it.
func dropPopulation(b *testing.B) {
	p := current
	if p == nil {
		return
	}
	current = nil
	notPending := 0
	// go-zero's Stop cannot report whether a timer was pending and costs a
	// message each; closing its wheel drops the population at once, and the
	// check below is on callbacks alone.
	if _, keyed := p.lib.(*lib.Zero); !keyed {
		for _, h := range p.pending {
			if !h.Stop() {
				notPending++
			}
		}
	}
	p.lib.Sync()
	p.lib.Close()
	if notPending > 0 || p.fired.Load() > 0 {
		b.Errorf("population %s: %d timers no longer pending, %d callbacks ran", p.key, notPending, p.fired.Load())
	}
	runtime.GC()
}

// check fails the benchmark unless the population is intact: nothing fired,
// and the library (where it counts) holds exactly the population.
func (p *population) check(b *testing.B) {
	b.Helper()
	p.lib.Sync()
	if n := p.fired.Load(); n > 0 {
		b.Fatalf("%d callbacks ran: the benchmark did not measure pending timers only", n)
	}
	if got := p.lib.Pending(); got >= 0 && got != len(p.pending) {
		b.Fatalf("library holds %d pending timers, want %d", got, len(p.pending))
	}
}

// BenchmarkAfterFuncStop arms a timer and stops it while N others are
// pending: the life of a timeout that is cancelled, which is what a server
// does with most of its timers. Every Stop must report that it stopped the
// timer.
func BenchmarkAfterFuncStop(b *testing.B) {
	for _, name := range libNames {
		for _, n := range pendingCounts {
			b.Run(fmt.Sprintf("lib=%s/N=%s", name, short(n)), func(b *testing.B) {
				p := getPopulation(b, name, n)
				l, f := p.lib, p.onFire
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if !l.AfterFunc(durations[i&durMask], f).Stop() {
						b.Fatalf("Stop of a timer due in %v returned false", durations[i&durMask])
					}
				}
				b.StopTimer()
				p.check(b)
			})
		}
	}
}

// BenchmarkReset re-arms one of 1024 pending timers to a new deadline while
// N others are pending, as a server re-arms an idle timeout on every read.
// Every Reset must find its timer pending.
func BenchmarkReset(b *testing.B) {
	const poolSize = 1024
	for _, name := range libNames {
		for _, n := range pendingCounts {
			b.Run(fmt.Sprintf("lib=%s/N=%s", name, short(n)), func(b *testing.B) {
				p := getPopulation(b, name, n)
				l := p.lib
				pool := make([]lib.Handle, poolSize)
				for i := range pool {
					pool[i] = l.AfterFunc(durations[i], p.onFire)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if !pool[i&(poolSize-1)].Reset(durations[(i*7+1)&durMask]) {
						b.Fatalf("Reset of pending timer %d returned false", i&(poolSize-1))
					}
				}
				b.StopTimer()
				for i, h := range pool {
					if !h.Stop() {
						b.Fatalf("timer %d of the reset pool was not pending at the end", i)
					}
				}
				p.check(b)
			})
		}
	}
}

// BenchmarkParallelAfterFuncStop is BenchmarkAfterFuncStop from every P at
// once (b.RunParallel).
func BenchmarkParallelAfterFuncStop(b *testing.B) {
	for _, name := range libNames {
		for _, n := range parPendingCounts {
			b.Run(fmt.Sprintf("lib=%s/N=%s", name, short(n)), func(b *testing.B) {
				p := getPopulation(b, name, n)
				l, f := p.lib, p.onFire
				var failed atomic.Int64
				var seed atomic.Uint64
				b.ReportAllocs()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					i := int(seed.Add(977))
					for pb.Next() {
						i++
						if !l.AfterFunc(durations[i&durMask], f).Stop() {
							failed.Add(1)
						}
					}
				})
				b.StopTimer()
				if n := failed.Load(); n > 0 {
					b.Fatalf("%d Stops returned false", n)
				}
				p.check(b)
			})
		}
	}
}

// BenchmarkHeap measures the live heap per pending timer: the heap after a
// forced collection with BENCH_HEAP_N timers pending, minus the heap before
// they were armed, divided by their number (B/timer). The handles' slice is
// allocated before the first reading, so only what arming a timer adds is
// counted: the library's timer, its entry in the library's structures and,
// for go-zero, the adapter's 8-byte key. After every timer is stopped and
// the handles are dropped, live-after-stop-B/timer is what the library still
// keeps alive. Run it with -benchtime=1x.
func BenchmarkHeap(b *testing.B) {
	for _, name := range libNames {
		b.Run(fmt.Sprintf("lib=%s/N=%s", name, short(heapN)), func(b *testing.B) {
			dropPopulation(b)
			// One measurement whatever b.N is: arming a million timers is
			// the measurement, not an operation to repeat.
			perTimer, afterStop := measureHeap(b, name, heapN)
			b.ReportMetric(perTimer, "B/timer")
			b.ReportMetric(afterStop, "live-after-stop-B/timer")
		})
	}
}

func measureHeap(b *testing.B, name string, n int) (perTimer, afterStop float64) {
	b.StopTimer()
	defer b.StartTimer()
	l, err := lib.New(lib.Config{Name: name, Tick: time.Millisecond, Size: 512})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	var fired atomic.Int64
	f := func() { fired.Add(1) }
	base := liveHeap()
	handles := make([]lib.Handle, n)
	withSlice := liveHeap()
	b.StartTimer()
	for i := range handles {
		handles[i] = l.AfterFunc(durations[i&durMask]+time.Duration(i), f)
	}
	l.Sync()
	b.StopTimer()
	armed := liveHeap()
	if got := l.Pending(); got >= 0 && got != n {
		b.Fatalf("library holds %d pending timers, want %d", got, n)
	}
	for i, h := range handles {
		if !h.Stop() {
			b.Fatalf("timer %d was not pending when stopped", i)
		}
	}
	handles = nil
	l.Sync()
	stopped := liveHeap()
	if fired.Load() > 0 {
		b.Fatalf("%d callbacks ran", fired.Load())
	}
	runtime.KeepAlive(l)
	return float64(armed-withSlice) / float64(n), float64(stopped-base) / float64(n)
}

// liveHeap is the heap in use right after two forced collections (the
// second one frees what finalizers and sweeping left from the first).
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

func short(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return strconv.Itoa(n/1_000_000) + "M"
	case n >= 1_000 && n%1_000 == 0:
		return strconv.Itoa(n/1_000) + "k"
	}
	return strconv.Itoa(n)
}

func envList(key, def string) []string {
	v := os.Getenv(key)
	if v == "" {
		v = def
	}
	return strings.Split(v, ",")
}

func envInts(key, def string) []int {
	var out []int
	for _, s := range envList(key, def) {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			panic(fmt.Sprintf("bench: %s: %v", key, err))
		}
		out = append(out, n)
	}
	return out
}

// TestMain releases the last population so a run ends with every timer
// stopped and checked.
func TestMain(m *testing.M) {
	code := m.Run()
	if current != nil {
		for _, h := range current.pending {
			h.Stop()
		}
		current.lib.Close()
	}
	os.Exit(code)
}
